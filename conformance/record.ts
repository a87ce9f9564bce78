/**
 * Records the concrete values of the tx_, block_, contract_ and account_ examples of openrpc.json
 * from real nodes: it builds the states the examples name (conformance/states.ts, the sample chain
 * of test/helpers/sample-chain.ts by default), sets the params that point into the chain (hashes,
 * time windows, the re-signed TS SDK deployment; see `chainParams`), replays every example as the
 * conformance runner does, and takes each success result, and each error message whose code is
 * the documented one, from the node's reply. Placeholders are kept only where a value changes from
 * run to run (`placeholdersOf`). An error reply with another code than the example's is reported
 * and left alone: it is a finding, never something to record.
 *
 *   npx tsx conformance/record.ts           prints what would change
 *   npx tsx conformance/record.ts --write   rewrites openrpc.json (only the values that change)
 *   … --fresh                                also takes the node's values where placeholders stand
 *                                           (kept otherwise, so execution times do not churn)
 *
 * Then run `npm run codegen` and review the diff.
 */

import { readFileSync, writeFileSync } from 'node:fs'
import type { ExamplePairing as Example } from '../codegen/check.ts'
import { signStringFormatB, type TxFields } from '../src/crypto/sign-string.ts'
import { checkTransactionSignature, signSecp256k1 } from '../src/crypto/signature.ts'
import { parseJson, stringifyJson } from '../src/wire/json.ts'
import { rpc, SAMPLE_CONTRACT, SDK_PRIVATE_KEY, sampleBlocks, T0 } from '../test/helpers/sample-chain.ts'
import { createStates, replayIn, type StateName, SUBMISSIONS, stateOf, UNBUILDABLE } from './states.ts'

interface Method {
  name: string
  examples?: Example[]
}

const PREFIXES = ['tx_', 'block_', 'contract_', 'account_', 'simulate_']
/** not chain state: its output is the compiler's */
const NOT_RECORDED = new Set(['contract_compileContract'])
const documentUrl = new URL('../openrpc.json', import.meta.url)

const tenths = (n: number): bigint => T0 + (BigInt(n) * 1_000_000_000n) / 10n
const UNKNOWN_HASH = `0x${'0'.repeat(63)}1`

/** The TS SDK deployment of the sample contract, signed as @hyperchain/jssdk signs (format B 4.1, no low-s). */
function sdkDeploySignature(params: Record<string, unknown>): string {
  const fields = { ...params, opcode: params.opCode, payload: SAMPLE_CONTRACT } as unknown as TxFields
  return signSecp256k1(signStringFormatB(fields, { version: '4.1', sections: 'all' }), SDK_PRIVATE_KEY, { lowS: false })
}

/**
 * Params that point into the sample chain, by method and example name: a function of the chain
 * (tx hashes by name, block hashes) and the old params.
 */
type ParamsOf = (chain: { h: Record<string, string>; b: string[] }, old: unknown[]) => unknown[]
const chainParams: Record<string, Record<string, ParamsOf>> = {
  tx_getTransactionByHash: {
    'committed transfer': ({ h }) => [h.transfer],
    'discarded transfer': ({ h }) => [h.badSignature],
  },
  tx_getTransactionByBlockHashAndIndex: {
    'first transaction of block 1': ({ b }) => [b[1], 0],
    'hex index': ({ b }) => [b[2], '0x0'],
    'index past the end': ({ b }) => [b[1], 5],
    'missing index': ({ b }) => [b[1]],
  },
  tx_getTransactionReceipt: {
    transfer: ({ h }) => [h.transfer],
    deployment: ({ h }) => [h.deploy],
    'call that emitted a log': ({ h }) => [h.call],
    'not committed yet': ({ h }) => [h.pending],
    'balance too low': ({ h }) => [h.overdrawn],
    'bad signature': ({ h }) => [h.badSignature],
    'deployment failed': ({ h }) => [h.deployReverted],
    'call failed': ({ h }) => [h.callReverted],
    'not the deployer': ({ h }) => [h.freezeByStranger],
    'hash too short': ({ h }) => [h.transfer.slice(0, 6)],
  },
  tx_getBlockTransactionCountByHash: {
    'block 1': ({ b }) => [b[1]],
    'no 0x prefix': ({ b }) => [b[1].slice(2)],
  },
  tx_getSignHash: {
    'deployment (no to)': () => {
      const { signature: _, ...fields } = sampleBlocks[1].txs.deploy.params
      return [fields]
    },
  },
  tx_getTransactionsByTime: {
    'blocks 1 and 2': () => [{ startTime: tenths(10), endTime: tenths(20) }],
    'start after end': () => [{ startTime: tenths(20), endTime: tenths(10) }],
  },
  tx_getDiscardTransactionsByTime: {
    'one discarded transfer': () => [{ startTime: tenths(1), endTime: tenths(3) }],
  },
  tx_getBatchTransactions: {
    'two hashes': ({ h }) => [{ hashes: [h.transfer, h.call] }],
    'the spec spelling hashs, one unknown hash': ({ h }) => [{ hashs: [h.deploy, UNKNOWN_HASH] }],
    'no hashes key': ({ h }) => [{ hash: [h.transfer] }],
    'bad hash': ({ h }) => [{ hashes: [h.transfer, '0x12'] }],
  },
  tx_getBatchReceipt: {
    'two receipts, one pending hash skipped': ({ h }) => [{ hashes: [h.transfer, h.pending, h.call] }],
    'a discarded transfer in the list': ({ h }) => [{ hashes: [h.transfer, h.overdrawn] }],
    'bad signature in the list': ({ h }) => [{ hashes: [h.badSignature] }],
    'failed deployment in the list': ({ h }) => [{ hashes: [h.deployReverted] }],
    'failed call in the list': ({ h }) => [{ hashes: [h.callReverted] }],
    'permission failure in the list': ({ h }) => [{ hashes: [h.freezeByStranger] }],
  },
  tx_getTransactionsByTimeWithLimit: {
    'first page': () => [{ startTime: tenths(10), endTime: tenths(30), metaData: { pageSize: 2 } }],
  },
  tx_getTransactionsCountByTime: {
    'blocks 1 to 3': () => [{ startTime: tenths(10), endTime: tenths(30) }],
  },
  block_getBlockByHash: {
    'with transactions': ({ b }) => [b[1], false],
    plain: ({ b }) => [b[2], true],
    'three arguments': ({ b }) => [b[1], true, 1],
  },
  block_getBatchBlocksByHash: {
    'two plain blocks': ({ b }) => [{ hashes: [b[1], b[3]], isPlain: true }],
    'with transactions, one unknown hash': ({ b }) => [{ hashes: [UNKNOWN_HASH, b[2]] }],
  },
  block_getBlocksByTime: {
    'blocks 1 and 2': () => [{ startTime: tenths(10), endTime: tenths(20) }],
  },
}

/** Every contract_deployContract example sends the TS SDK deployment of the sample contract (or a broken copy of it). */
function deployParams(old: unknown[]): unknown[] {
  const tx = { ...(old[0] as Record<string, unknown>) }
  const base = { ...tx }
  if (typeof tx.payload === 'string' && tx.payload.length > 10) tx.payload = SAMPLE_CONTRACT
  if (typeof tx.signature === 'string' && tx.signature !== '') tx.signature = sdkDeploySignature({ ...base, type: 'EVM' })
  return [tx]
}

/** Pointers of values that change from run to run: execution times (wall clock), the time of the answer. */
function placeholdersOf(method: string, result: unknown): string[] {
  if (method === 'tx_getTxAvgTimeByBlockNumber') return ['/']
  const found = new Set<string>()
  const walk = (value: unknown, path: string[]): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, [...path, '*'])
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === 'executeTime' || key === 'avgTime') found.add(`/${[...path, key].join('/')}`)
        else walk(child, [...path, key])
      }
    }
  }
  walk(result, [])
  if (method === 'tx_getTransactionsCount' || method === 'tx_getInvalidTransactionsCount') found.add('/timestamp')
  // signed with the node's key by a randomised ECDSA
  if (method === 'tx_getTransactionReceiptWithSignature') found.add('/signature')
  return [...found]
}

/**
 * Success examples the node wrongly refuses in their own state (a finding kept under a `mismatch`
 * deviation): their result is recorded on another state where nothing collides with them.
 */
const recordOn: Record<string, Record<string, StateName>> = {
  // the pool takes it for a copy of the freeze vector (same 2017 sign hash); see deviations.ts
  contract_maintainContract: { unfreeze: 'empty' },
}

/**
 * The node's result, except at placeholder paths that were placeholders already: there the old
 * value stays (it is compared by presence only), so re-recording does not churn execution times.
 */
function keepVarying(result: unknown, old: unknown, placeholders: string[], oldPlaceholders: string[]): unknown {
  const kept = new Set(placeholders.filter((pointer) => oldPlaceholders.includes(pointer)))
  if (kept.has('/')) return old
  const walk = (value: unknown, previous: unknown, path: string[]): unknown => {
    if (kept.has(`/${path.join('/')}`) && previous !== undefined && typeof previous === typeof value) return previous
    if (Array.isArray(value)) return value.map((item, i) => walk(item, Array.isArray(previous) ? previous[i] : undefined, [...path, '*']))
    if (value !== null && typeof value === 'object') {
      const prev = previous !== null && typeof previous === 'object' ? (previous as Record<string, unknown>) : {}
      return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, walk(child, prev[key], [...path, key])]))
    }
    return value
  }
  return walk(result, old, [])
}

// ---- a JSON reader that keeps where each value sits, so only changed values are rewritten

interface Span {
  start: number
  end: number
  members?: { key: string; keyStart: number; value: Span }[]
  items?: Span[]
}

function spanOf(text: string): Span {
  let i = 0
  const space = (): void => {
    while (/\s/.test(text[i])) i++
  }
  const string = (): string => {
    const start = i
    i++
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
    return JSON.parse(text.slice(start, i)) as string
  }
  const value = (): Span => {
    space()
    const start = i
    if (text[i] === '{') {
      i++
      const members: Span['members'] = []
      space()
      while (text[i] !== '}') {
        const keyStart = i
        const key = string()
        space()
        i++ // :
        members.push({ key, keyStart, value: value() })
        space()
        if (text[i] === ',') i++
        space()
      }
      i++
      return { start, end: i, members }
    }
    if (text[i] === '[') {
      i++
      const items: Span[] = []
      space()
      while (text[i] !== ']') {
        items.push(value())
        space()
        if (text[i] === ',') i++
        space()
      }
      i++
      return { start, end: i, items }
    }
    if (text[i] === '"') {
      string()
      return { start, end: i }
    }
    while (i < text.length && !/[\s,\]}]/.test(text[i])) i++
    return { start, end: i }
  }
  return value()
}

const member = (span: Span, key: string) => span.members?.find((candidate) => candidate.key === key)

/** Compact when it fits in 140 columns, else one member or item per line (the style of openrpc.json). */
function format(value: unknown, indent: string, used: number): string {
  const compact = compactOf(value)
  if (indent.length + used + compact.length <= 140 || value === null || typeof value !== 'object') return compact
  const inner = `${indent}  `
  if (Array.isArray(value)) return `[\n${value.map((item) => inner + format(item, inner, 1)).join(',\n')}\n${indent}]`
  const entries = Object.entries(value)
  return `{\n${entries.map(([key, child]) => `${inner}${JSON.stringify(key)}: ${format(child, inner, JSON.stringify(key).length + 3)}`).join(',\n')}\n${indent}}`
}

function compactOf(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[${value.map(compactOf).join(', ')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
    return entries.length === 0 ? '{}' : `{ ${entries.map(([key, child]) => `${JSON.stringify(key)}: ${compactOf(child)}`).join(', ')} }`
  }
  return stringifyJson(value)
}

const indentAt = (text: string, offset: number): string => {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1
  return /^ */.exec(text.slice(lineStart))?.[0] ?? ''
}

// ---- recording

const same = (a: unknown, b: unknown): boolean => stringifyJson(a) === stringifyJson(b)

async function main(): Promise<void> {
  const write = process.argv.includes('--write')
  const fresh = process.argv.includes('--fresh')
  const text = readFileSync(documentUrl, 'utf8')
  const document = parseJson(text, { maxDepth: 512 }) as unknown as { methods: Method[] }
  const root = spanOf(text)
  const methodSpans = member(root, 'methods')?.value.items ?? []
  const edits: { start: number; end: number; text: string }[] = []
  const problems: string[] = []
  let changed = 0

  const states = createStates()
  try {
    const sample = await states.get('sample')
    const blocks = ['']
    for (const number of [1, 2, 3])
      blocks.push(((await rpc(sample.node.url, 'block_getBlockByNumber', [number, true])).result as { hash: string }).hash)
    const chain = { h: sample.hashes, b: blocks }

    for (const [m, method] of document.methods.entries()) {
      if (!PREFIXES.some((prefix) => method.name.startsWith(prefix)) || NOT_RECORDED.has(method.name)) continue
      const exampleSpans = member(methodSpans[m], 'examples')?.value.items ?? []
      for (const [e, example] of (method.examples ?? []).entries()) {
        const where = `${method.name} / ${example.name}`
        const span = exampleSpans[e]
        const updates: Record<string, unknown> = {}

        const oldParams = example.params.map((param) => param.value)
        const build = chainParams[method.name]?.[example.name]
        const params = method.name === 'contract_deployContract' ? deployParams(oldParams) : (build?.(chain, oldParams) ?? oldParams)
        if (params.length !== example.params.length)
          problems.push(`${where}: the recorder gives ${params.length} params for ${example.params.length}`)
        const description = example.description
        const stateName = recordOn[method.name]?.[example.name] ?? stateOf(description)
        if (!UNBUILDABLE.has(stateName)) {
          const state = await states.get(stateName)
          const reply = (await replayIn(state, method.name, params, description, () => rpc(state.node.url, method.name, params))) as {
            code: number
            message: string
            result?: unknown
          }
          if (example.result !== undefined) {
            if (reply.code !== 0) problems.push(`${where}: expected success, the node answers ${reply.code} ${reply.message}`)
            else {
              const placeholders = placeholdersOf(method.name, reply.result)
              const value = fresh
                ? reply.result
                : keepVarying(reply.result, example.result.value, placeholders, example['x-placeholders'] ?? [])
              updates.result = { ...example.result, value }
              updates['x-placeholders'] = placeholders.length === 0 ? undefined : placeholders
            }
            if (SUBMISSIONS.has(method.name)) {
              const tx = params[0] as Record<string, unknown>
              const check = checkTransactionSignature(
                { ...tx, opcode: tx.opcode ?? tx.opCode } as unknown as TxFields,
                tx.signature as string,
              )
              if (!check.valid) problems.push(`${where}: the signature does not verify (${check.reason})`)
            }
          } else if (example['x-error'] !== undefined) {
            if (reply.code !== example['x-error'].code)
              problems.push(`${where}: expected code ${example['x-error'].code}, the node answers ${reply.code} ${reply.message}`)
            else updates['x-error'] = { ...example['x-error'], message: reply.message }
          }
        }
        let touched = params.some((value, i) => !same(value, oldParams[i]))
        if (touched)
          edits.push(
            replaceValue(
              text,
              span,
              'params',
              example.params.map((param, i) => ({ ...param, value: params[i] })),
            ),
          )
        for (const [key, value] of Object.entries(updates)) {
          const old = (example as unknown as Record<string, unknown>)[key]
          if (same(old, value) || (old === undefined && value === undefined)) continue
          touched = true
          edits.push(setMember(text, span, key, value))
        }
        if (touched) {
          changed++
          console.log(`changed: ${where}`)
        }
      }
    }
  } finally {
    await states.stopAll()
  }

  edits.sort((a, b) => b.start - a.start)
  let out = text
  for (const edit of edits) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end)
  parseJson(out, { maxDepth: 512 })
  console.log(`\n${changed} examples change${problems.length === 0 ? '' : `; ${problems.length} problems:\n- ${problems.join('\n- ')}`}`)
  if (write) {
    writeFileSync(documentUrl, out)
    console.log('openrpc.json written; run `npm run codegen` and review the diff')
  }
}

/** Replaces the value of `key` in the object at `span` (which holds it). */
function replaceValue(text: string, span: Span, key: string, value: unknown): { start: number; end: number; text: string } {
  const found = member(span, key)
  if (found === undefined) throw new Error(`no member ${key}`)
  const indent = indentAt(text, found.keyStart)
  const used = found.keyStart - text.lastIndexOf('\n', found.keyStart - 1) - 1 - indent.length + JSON.stringify(key).length + 2
  return { start: found.value.start, end: found.value.end, text: format(value, indent, used) }
}

/** Sets, adds (after the last member) or removes (value undefined) member `key` of the object at `span`. */
function setMember(text: string, span: Span, key: string, value: unknown): { start: number; end: number; text: string } {
  const members = span.members ?? []
  const index = members.findIndex((candidate) => candidate.key === key)
  if (index >= 0 && value !== undefined) return replaceValue(text, span, key, value)
  if (index >= 0) {
    // from the end of the previous member (its comma included) to the end of this one
    const start = index === 0 ? members[0].keyStart : members[index - 1].value.end
    const end = index === 0 ? (members[1]?.keyStart ?? members[0].value.end) : members[index].value.end
    return { start, end, text: '' }
  }
  const last = members[members.length - 1]
  const indent = indentAt(text, last.keyStart)
  const insert = `,\n${indent}${JSON.stringify(key)}: ${format(value, indent, JSON.stringify(key).length + 2)}`
  return { start: last.value.end, end: last.value.end, text: insert }
}

await main()
