/**
 * Conformance: replays every example of openrpc.json through the generated client against a node
 * started in-process on 127.0.0.1:0 in the chain state the example's description names (the
 * sample chain of info.description unless it names another; conformance/states.ts builds each from
 * real signed transactions), compares strictly, re-sends each example under every alias, and
 * prints coverage per method. Placeholders (`x-placeholders`, JSON pointers into the result) are
 * the only values compared by presence instead of by value; skips come only from deviations.ts.
 */

import { readFileSync } from 'node:fs'
import schemaUtils from '@open-rpc/schema-utils-js'
import { Compile } from 'typebox/schema'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ExamplePairing as Example } from '../codegen/check.ts'
import { aliases, methods, schemas } from '../generated/methods.ts'
import { accountFromPrivateKey } from '../sdk/src/account.ts'
import { createClient, type Envelope, httpTransport, type KeelClient, RpcError, type Transport } from '../sdk/src/client.ts'
import { operatorSigner } from '../sdk/src/operator.ts'
import { type WsTransport, wsTransport } from '../sdk/src/ws-transport.ts'
import { isEthereumMethod } from '../src/eth/envelope.ts'
import type { MethodSpec } from '../src/rpc/method-spec.ts'
import { toValidationView } from '../src/rpc/params.ts'
import { parseJson } from '../src/wire/json.ts'
import { DEMO_PRIVATE_KEY } from '../test/helpers/sample-chain.ts'
import { type Deviation, deviations, deviationsFor } from './deviations.ts'
import { createStates, replayIn, STATE_DESCRIPTIONS, type State, type StateName, stateOf, UNBUILDABLE } from './states.ts'

interface Method {
  name: string
  result: { schema: unknown }
  examples?: Example[]
  'x-aliases'?: string[]
}

const documentText = readFileSync(new URL('../openrpc.json', import.meta.url), 'utf8')
const document = parseJson(documentText, { maxDepth: 512 }) as unknown as { methods: Method[] }

interface Coverage {
  success: number
  successPassed: number
  errors: number
  errorsPassed: number
  aliases: number
  aliasesPassed: number
  skipped: number
}
const coverage = new Map<string, Coverage>()
const usedDeviations = new Set<Deviation>()
const skipLines: string[] = []

const states = createStates()
const clients = new Map<State, KeelClient>()
const statesUsed = new Map<StateName, number>()
let lastReply: Envelope | undefined

function recording(inner: Transport): Transport {
  return {
    async request(body) {
      const text = await inner.request(body)
      lastReply = parseJson(text, { maxDepth: 512 }) as unknown as Envelope
      return text
    },
  }
}

const wsClients = new Map<State, Promise<KeelClient>>()
const openSockets: WsTransport[] = []

/**
 * Examples of operator methods (openrpc.json `x-operator`) are sent signed by the state's admin,
 * as an operator would send them; an example named "unsigned…" is sent without the headers.
 */
let sendingUnsigned = false
function operatorHeadersOf(state: State): (body: string) => Record<string, string> {
  const sign = operatorSigner(accountFromPrivateKey(state.adminKey ?? DEMO_PRIVATE_KEY))
  return (body) => {
    const method = (parseJson(body, { maxDepth: 512 }) as { method?: unknown }).method
    const name = typeof method === 'string' ? (Object.hasOwn(aliases, method) ? aliases[method] : method) : ''
    const spec = (methods as Record<string, MethodSpec>)[name]
    return sendingUnsigned || spec?.operator !== true ? {} : sign(body)
  }
}

function clientOf(state: State): KeelClient {
  let client = clients.get(state)
  if (client === undefined) {
    client = createClient({ transport: recording(httpTransport(state.node.url, { headersFor: operatorHeadersOf(state) })) })
    clients.set(state, client)
  }
  return client
}

/** The client an example of `method` goes through: a WebSocket connection for the WebSocket-only methods. */
async function clientFor(state: State, method: string): Promise<KeelClient> {
  if ((methods[method as keyof typeof methods] as MethodSpec).transport !== 'websocket') return clientOf(state)
  let client = wsClients.get(state)
  if (client === undefined) {
    client = (async () => {
      const websocket = state.websocket ?? (await wsTransport(state.node.url))
      openSockets.push(websocket)
      return createClient({ transport: recording(websocket) })
    })()
    wsClients.set(state, client)
  }
  return client
}

/** The state an example names, counted for the coverage report. */
async function stateFor(name: StateName): Promise<State> {
  statesUsed.set(name, (statesUsed.get(name) ?? 0) + 1)
  return states.get(name)
}

/**
 * States whose nodes run in processes of their own and take tens of seconds to start: each is
 * started with the run, when an example needs it, so that it comes up while other states replay.
 */
const OUT_OF_PROCESS_STATES: readonly StateName[] = ['network']

test.before(() => {
  const needed = new Set(document.methods.flatMap((method) => (method.examples ?? []).map((example) => stateOf(example.description))))
  for (const name of OUT_OF_PROCESS_STATES) {
    // the examples that need it await the same promise and report a failure to start
    if (needed.has(name) && !UNBUILDABLE.has(name)) states.get(name).catch(() => {})
  }
})

test.after(async () => {
  await Promise.all(openSockets.map((socket) => socket.close()))
  await states.stopAll()
  printCoverage()
})

/** The 46 methods of the user's spec (its "Endpoints" part, listed in spec-notes.md). */
const SPEC_METHODS = [
  ...['getTransactions', 'getDiscardTransactions', 'getTransactionByHash', 'getTransactionByBlockHashAndIndex'].map((m) => `tx_${m}`),
  ...['getTransactionByBlockNumberAndIndex', 'getTransactionsCount', 'getTxAvgTimeByBlockNumber', 'getTransactionReceipt'].map(
    (m) => `tx_${m}`,
  ),
  ...['getBlockTransactionCountByHash', 'getBlockTransactionCountByNumber', 'getSignHash', 'getTransactionsByTime'].map((m) => `tx_${m}`),
  ...['getDiscardTransactionsByTime', 'getBatchTransactions', 'getBatchReceipt'].map((m) => `tx_${m}`),
  ...['compileContract', 'deployContract', 'invokeContract', 'getCode', 'getContractCountByAddr'].map((m) => `contract_${m}`),
  ...['maintainContract', 'getStatus', 'getCreator', 'getCreateTime', 'getDeployedList'].map((m) => `contract_${m}`),
  ...['latestBlock', 'getBlocks', 'getBlockByHash', 'getBlockByNumber', 'getAvgGenerateTimeByBlockNumber'].map((m) => `block_${m}`),
  ...['getBlocksByTime', 'getGenesisBlock', 'getChainHeight', 'getBatchBlocksByHash', 'getBatchBlocksByNumber'].map((m) => `block_${m}`),
  ...['newBlockSubscription', 'newEventSubscription', 'getLogs', 'newSystemStatusSubscription'].map((m) => `sub_${m}`),
  ...['getSubscriptionChanges', 'unSubscription'].map((m) => `sub_${m}`),
  ...['getNodes', 'getNodeHash', 'deleteVP', 'deleteNVP'].map((m) => `node_${m}`),
  'cert_getTCert',
]

test('rpc.discover returns openrpc.json: valid OpenRPC with all 46 spec methods', async () => {
  const client = clientOf(await states.get('sample'))
  const discovered = (await client.request('rpc.discover')) as { methods: { name: string }[] }
  assert.equal(discovered, parseJson(documentText, { maxDepth: 512 }))
  assert.is(SPEC_METHODS.length, 46)
  const names = new Set(discovered.methods.map((method) => method.name))
  assert.equal(
    SPEC_METHODS.filter((name) => !names.has(name)),
    [],
    'spec methods missing from the document',
  )
  // the meta-schema check needs plain numbers; bigints only occur in example values
  const plain = JSON.parse(documentText)
  assert.is(schemaUtils.validateOpenRPCDocument(plain), true)
})

type Outcome = { ok: true; result: unknown } | { ok: false; code: number; message: string }

async function callTyped(client: KeelClient, method: string, params: unknown[]): Promise<Outcome> {
  const typed = (client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]
  try {
    const result = await typed(...params)
    return { ok: true, result }
  } catch (error) {
    if (error instanceof RpcError) return { ok: false, code: error.code, message: error.shortMessage }
    throw error
  }
}

function checkEnvelope(where: string, reply: Envelope | undefined): void {
  assert.ok(reply, `${where}: no reply recorded`)
  assert.is(reply.jsonrpc, '2.0', `${where}: jsonrpc`)
  // issue 28: the Ethereum dialect answers in plain JSON-RPC 2.0: `result` or `error`, no namespace or code
  if (isEthereumMethod(where.split(' ')[0])) {
    const plain = reply as unknown as Record<string, unknown>
    assert.not.ok('namespace' in plain || 'code' in plain, `${where}: no Hyperchain envelope`)
    assert.ok(typeof plain.id === 'number', `${where}: id echoed`)
    assert.ok('result' in plain !== 'error' in plain, `${where}: result or error`)
    return
  }
  assert.is(reply.namespace, 'global', `${where}: namespace`)
  assert.ok(typeof reply.id === 'number', `${where}: id echoed`)
  if (reply.code === 0) {
    assert.is(reply.message, 'SUCCESS', `${where}: code 0 carries SUCCESS`)
    assert.ok('result' in reply, `${where}: code 0 carries a result`)
  } else {
    assert.not.ok('result' in reply, `${where}: a failure carries no result`)
  }
}

function matches(example: Example, outcome: Outcome, validator: { Check(value: unknown): boolean }): boolean {
  if (example.result !== undefined) {
    return (
      outcome.ok &&
      compare(example.result.value, outcome.result, '', placeholderPaths(example)) === undefined &&
      validator.Check(toValidationView(outcome.result))
    )
  }
  return !outcome.ok && outcome.code === example['x-error']?.code && outcome.message === example['x-error']?.message
}

const notImplemented = (outcome: Outcome): boolean =>
  !outcome.ok && outcome.code === -32601 && outcome.message.includes('not implemented yet')

const statsOf = (name: string): Coverage => {
  let stats = coverage.get(name)
  if (stats === undefined) {
    stats = { success: 0, successPassed: 0, errors: 0, errorsPassed: 0, aliases: 0, aliasesPassed: 0, skipped: 0 }
    coverage.set(name, stats)
  }
  return stats
}

for (const method of document.methods) {
  const examples = method.examples ?? []
  test(`${method.name} has a success and an error example`, () => {
    statsOf(method.name)
    assert.ok(
      examples.some((example) => example.result !== undefined),
      `${method.name} has no success example`,
    )
    assert.ok(
      examples.some((example) => example['x-error'] !== undefined),
      `${method.name} has no error example`,
    )
  })
  const resultValidator = Compile(schemas as never, methods[method.name as keyof typeof methods].result.schema as never)

  for (const example of examples) {
    const where = `${method.name} / ${example.name}`
    test(where, async () => {
      const stats = statsOf(method.name)
      const isSuccess = example.result !== undefined
      if (isSuccess) stats.success++
      else stats.errors++
      const candidates = deviationsFor(method.name)
      const skip = (deviation: Deviation): void => {
        usedDeviations.add(deviation)
        stats.skipped++
        skipLines.push(`SKIP ${where}: ${deviation.what}; ${deviation.reason} (${deviation.issue})`)
      }

      const stateName = stateOf(example.description)
      if (UNBUILDABLE.has(stateName)) {
        const deviation = candidates.find((candidate) => candidate.when === 'needs-state' && candidate.state === stateName)
        assert.ok(deviation, `${where}: needs ${STATE_DESCRIPTIONS[stateName]}, which cannot be built yet, and no deviation covers it`)
        return skip(deviation)
      }
      const state = await stateFor(stateName)
      const params = example.params.map((param) => param.value)
      sendingUnsigned = example.name.startsWith('unsigned')
      const outcome = await replayIn(state, method.name, params, example.description, async () =>
        callTyped(await clientFor(state, method.name), method.name, params),
      ).finally(() => {
        sendingUnsigned = false
      })
      checkEnvelope(where, lastReply)

      const notImplementedDeviation = candidates.find((candidate) => candidate.when === 'not-implemented')
      if (notImplementedDeviation !== undefined && notImplemented(outcome) && example['x-error']?.code !== -32601)
        return skip(notImplementedDeviation)
      const mismatchDeviation = candidates.find((candidate) => candidate.when === 'mismatch' && candidate.examples?.includes(example.name))
      if (mismatchDeviation !== undefined && !matches(example, outcome, resultValidator)) return skip(mismatchDeviation)
      if (isSuccess) {
        assert.ok(outcome.ok, `${where}: expected success, got ${outcome.ok ? '' : `${outcome.code} ${outcome.message}`}`)
        if (!outcome.ok) return
        const mismatch = compare(example.result?.value, outcome.result, '', placeholderPaths(example))
        assert.is(mismatch, undefined, `${where}: ${mismatch}`)
        assert.ok(resultValidator.Check(toValidationView(outcome.result)), `${where}: result breaks the result schema`)
        stats.successPassed++
      } else {
        const expected = example['x-error'] as { code: number; message: string }
        assert.not.ok(outcome.ok, `${where}: expected code ${expected.code}, got success`)
        if (outcome.ok) return
        assert.is(outcome.code, expected.code, `${where}: code (message: ${outcome.message})`)
        assert.is(outcome.message, expected.message, `${where}: message`)
        stats.errorsPassed++
      }
    })
  }

  // Every alias must reach the same handler: the same example gives the same envelope. The
  // canonical name is called once first, so a call that changes the state (a submission) answers
  // the canonical and the alias call from the same state.
  for (const alias of method['x-aliases'] ?? []) {
    test(`${alias} reaches ${method.name}`, async () => {
      const stats = statsOf(method.name)
      stats.aliases++
      // the first example a node can be put in the state of (an error example is as good a probe)
      const example = examples.find((candidate) => !UNBUILDABLE.has(stateOf(candidate.description)))
      if (example === undefined) return assert.unreachable(`${alias}: every example of ${method.name} needs a state that cannot be built`)
      const stateName = stateOf(example.description)
      const state = await stateFor(stateName)
      const client = clientOf(state)
      const params = example.params.map((param) => param.value)
      const [canonical, viaAlias] = await replayIn(state, method.name, params, example.description, async () => {
        await client.send(method.name, params)
        const first = { ...(await client.send(method.name, params)), id: 0 }
        return [first, { ...(await client.send(alias, params)), id: 0 }]
      })
      const mismatch = compare(
        canonical,
        viaAlias,
        '',
        placeholderPaths(example).map((path) => ['result', ...path]),
      )
      assert.is(mismatch, undefined, `${alias} (alias of ${method.name}): ${mismatch}`)
      stats.aliasesPassed++
    })
  }
}

test('every deviation is still needed', () => {
  const unused = deviations.filter((deviation) => !usedDeviations.has(deviation))
  assert.equal(
    unused.map((deviation) => deviation.methods.join(',')),
    [],
    'deviations that match nothing any more must be removed',
  )
})

function placeholderPaths(example: Example): string[][] {
  return (example['x-placeholders'] ?? []).map((pointer) => (pointer === '/' ? [] : pointer.split('/').slice(1)))
}

/** The first difference between an expected and an actual value, or undefined when they agree. */
function compare(expected: unknown, actual: unknown, at: string, placeholders: string[][]): string | undefined {
  const path = at === '' ? [] : at.split('/').slice(1)
  if (placeholders.some((pattern) => pattern.length === path.length && pattern.every((step, i) => step === '*' || step === path[i]))) {
    return actual === undefined ? `${at || '/'}: missing` : undefined
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${at || '/'}: expected an array, got ${describe(actual)}`
    if (expected.length !== actual.length) return `${at || '/'}: expected ${expected.length} items, got ${actual.length}`
    for (let i = 0; i < expected.length; i++) {
      const found = compare(expected[i], actual[i], `${at}/${i}`, placeholders)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${at || '/'}: expected an object, got ${describe(actual)}`
    const expectedKeys = Object.keys(expected).sort()
    const actualKeys = Object.keys(actual).sort()
    if (expectedKeys.join() !== actualKeys.join()) return `${at || '/'}: keys ${actualKeys.join(',')} instead of ${expectedKeys.join(',')}`
    for (const key of expectedKeys) {
      const found = compare(
        (expected as Record<string, unknown>)[key],
        (actual as Record<string, unknown>)[key],
        `${at}/${key}`,
        placeholders,
      )
      if (found !== undefined) return found
    }
    return undefined
  }
  return expected === actual ? undefined : `${at || '/'}: expected ${describe(expected)}, got ${describe(actual)}`
}

function describe(value: unknown): string {
  return typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value))
}

function printCoverage(): void {
  const rows = [...coverage.entries()]
  const width = Math.max(...rows.map(([name]) => name.length), 6)
  const lines = [`${'method'.padEnd(width)}  success  errors  aliases  skipped`]
  for (const [name, c] of rows) {
    lines.push(
      `${name.padEnd(width)}  ${`${c.successPassed}/${c.success}`.padStart(7)}  ${`${c.errorsPassed}/${c.errors}`.padStart(6)}  ${`${c.aliasesPassed}/${c.aliases}`.padStart(7)}  ${String(c.skipped).padStart(7)}`,
    )
  }
  const total = rows.reduce((sum, [, c]) => sum + c.success + c.errors, 0)
  const replayed = rows.reduce((sum, [, c]) => sum + c.successPassed + c.errorsPassed, 0)
  const skipped = rows.reduce((sum, [, c]) => sum + c.skipped, 0)
  console.log(
    `\nConformance coverage (${rows.length} methods, ${total} examples: ${replayed} replayed and matched, ${skipped} skipped by deviations.ts)`,
  )
  console.log(lines.join('\n'))
  console.log(`\nStates built (examples replayed in each): ${[...statesUsed].map(([name, count]) => `${name} ${count}`).join(', ')}`)
  if (skipLines.length > 0) console.log(`\n${skipLines.join('\n')}`)
  // scripts/run-tests.ts adds this to the skipped count of the closing line
  console.log(`\nDeviation skips: ${skipped}`)
}

test.run()
