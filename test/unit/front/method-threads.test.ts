/**
 * Which thread serves a method is data of openrpc.json (`"x-thread": "chain"`, the generated
 * table's `thread`), not a list kept by hand: a request thread forwards exactly the marked methods
 * to the chain thread (src/front/thread.ts). This checks the marks against the handlers: every
 * handler is built as a request thread builds it, with each module only the chain thread holds
 * replaced by a probe, and called with its method's examples (or no params). A handler that reaches
 * such a module could not be served on a request thread, so its method must be marked.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { methods, schemas } from '../../../generated/methods.ts'
import { GOVERNANCE_METHODS } from '../../../src/api/governance.ts'
import { type ApiModules, createHandlers, isChainThreadMethod } from '../../../src/api/index.ts'
import type { MethodSpec } from '../../../src/rpc/method-spec.ts'
import { compileParamChecker } from '../../../src/rpc/params.ts'

const root = join(import.meta.dirname, '..', '..', '..')
const document = JSON.parse(readFileSync(join(root, 'openrpc.json'), 'utf8')) as {
  methods: { name: string; examples?: { params: { value: unknown }[] }[] }[]
}

/** what src/front/thread.ts leaves out of a request thread's createHandlers (onChainThread), and the peer directory */
const CHAIN_THREAD_MODULES = [
  'subscriptions',
  'cert',
  'archive',
  'signer',
  'selfState',
  'versions',
  'config',
  'operators',
  'governance',
  'directory',
  'namespaces',
] as const

/**
 * The keys of the chain thread's modules that createHandlers spreads into another object (a probe
 * has no keys of its own to spread); `satisfies` keeps each list whole as the module's type grows.
 */
const SPREAD_KEYS = {
  governance: { genesis: true, latestBlockTime: true } satisfies Record<keyof ApiModules['governance'], true>,
  versions: { release: true, chain: true, ledger: true, declare: true } satisfies Record<keyof ApiModules['versions'], true>,
  config: { configText: true, genesis: true } satisfies Record<keyof ApiModules['config'], true>,
}

/** the modules the method being probed reached, by name (undefined while the handlers are built) */
let probing: { method: string; reached: Set<string> } | undefined
/** each probe of a chain thread's module, with that module's name: a handler may hand one back untouched */
const probeNames = new WeakMap<object, string>()

/** a stand-in that answers anything with itself and notes, while a handler runs, that it was used */
function probe(name: string, recordUse: boolean): unknown {
  const note = (): void => {
    if (recordUse && probing !== undefined) probing.reached.add(name)
  }
  const self: object = new Proxy(() => {}, {
    get(_target, key) {
      if (key === 'then') return undefined
      note()
      if (key === Symbol.toPrimitive) return () => 0
      if (key === Symbol.iterator) return [][Symbol.iterator].bind([])
      return self
    },
    apply() {
      note()
      return self
    },
    has: () => true,
    ownKeys: () => [],
  })
  if (recordUse) probeNames.set(self, name)
  return self
}

/** the probes of chain thread modules a handler's answer holds (it may pass one on without touching it) */
function probesIn(value: unknown, found: Set<string>, depth = 0): void {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function') || depth > 4) return
  const name = probeNames.get(value)
  if (name !== undefined) return void found.add(name)
  if (typeof value === 'object') for (const item of Object.values(value)) probesIn(item, found, depth + 1)
}

function requestThreadModules(): ApiModules {
  const modules: Record<string, unknown> = {}
  for (const name of CHAIN_THREAD_MODULES) modules[name] = probe(name, true)
  for (const [name, keys] of Object.entries(SPREAD_KEYS))
    modules[name] = Object.fromEntries(Object.keys(keys).map((key) => [key, probe(name, true)]))
  for (const name of ['chain', 'submitter', 'compiler', 'answers', 'ethereum', 'ordering']) modules[name] = probe(name, false)
  modules.identity = { hostname: 'node1', namespace: 'global' }
  modules.protocol = { txVersion: '4.1', gasPrice: 0 }
  modules.onBlock = () => () => {}
  modules.receiptWaitMs = 1
  return modules as unknown as ApiModules
}

/** every method's param lists to call it with: its examples' params, or none */
function paramLists(method: string): unknown[][] {
  const examples = document.methods.find((m) => m.name === method)?.examples ?? []
  const lists = examples.map((example) => example.params.map((param) => param.value))
  return lists.length > 0 ? lists : [[]]
}

async function modulesReached(handlers: Record<string, unknown>, method: string): Promise<Set<string>> {
  const reached = new Set<string>()
  const checker = compileParamChecker(method, (methods as Record<string, MethodSpec>)[method], schemas as Record<string, unknown>)
  for (const params of paramLists(method)) {
    let checked: unknown
    try {
      checked = checker.check(params)
    } catch {
      continue
    }
    probing = { method, reached }
    try {
      const handler = handlers[method] as (params: unknown, context: unknown) => unknown
      // a probe never settles a wait on the chain (receipts, blocks): a handler still waiting has shown what it reached
      const answer = await Promise.race([
        Promise.resolve(handler(checked, { namespace: 'global', method, headers: {}, operator: { address: `0x${'1'.repeat(40)}` } })),
        new Promise((resolve) => setTimeout(resolve, 20)),
      ])
      probesIn(answer, reached)
    } catch {
      // a probe is no real module: what the handler reached before it failed is what counts
    } finally {
      probing = undefined
    }
  }
  return reached
}

test('a method is marked "x-thread": "chain" exactly when its handler needs a module of the chain thread', async () => {
  const handlers = createHandlers(requestThreadModules()) as unknown as Record<string, unknown>
  const unmarked: string[] = []
  const needless: string[] = []
  let reaching = 0
  for (const method of Object.keys(methods)) {
    if (!Object.hasOwn(handlers, method)) continue
    const reached = await modulesReached(handlers, method)
    if (reached.size > 0) reaching++
    // a governance record falls back to its genesis default (the governance module), which a probe of the state never asks for
    const governance = (GOVERNANCE_METHODS as readonly string[]).includes(method)
    if ((reached.size > 0 || governance) && !isChainThreadMethod(method))
      unmarked.push(`${method} (uses ${reached.size > 0 ? [...reached].join(', ') : 'governance'})`)
    if (reached.size === 0 && isChainThreadMethod(method) && !governance) needless.push(method)
  }
  assert.equal(unmarked, [], 'mark these "x-thread": "chain" in openrpc.json and run npm run codegen')
  assert.equal(needless, [], 'these need nothing of the chain thread: a request thread can serve them (drop their "x-thread")')
  // the probe sees the chain thread's modules at all: the archive, subscription, config, cert and node methods reach one
  assert.ok(reaching >= 30, `only ${reaching} methods reached a chain-thread module: the probe is blind`)
})

test('the marks come from openrpc.json through the generated table', () => {
  const marked = document.methods.filter((m) => (m as { 'x-thread'?: string })['x-thread'] === 'chain').map((m) => m.name)
  assert.equal(
    Object.keys(methods).filter((name) => isChainThreadMethod(name)),
    marked,
  )
  assert.ok(isChainThreadMethod('archive_snapshot'))
  assert.not.ok(isChainThreadMethod('tx_getTransactionByHash'))
  assert.not.ok(isChainThreadMethod('no_suchMethod'))
})

test.run()
