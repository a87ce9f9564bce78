/**
 * The event service without a node: filter rules, the bounded caches (a slow poller loses the
 * oldest items and is told), expiry on an injected clock, and the sub_getLogs bounds over a fake
 * chain of 8000 blocks.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ChainReader } from '../../../src/api/chain-reader.ts'
import { createSubHandlers, MAX_LOG_RANGE, MAX_LOG_RESULTS } from '../../../src/api/sub.ts'
import type { BlockHeader, CommittedBlock, Receipt } from '../../../src/domain.ts'
import { RpcError } from '../../../src/errors.ts'
import { compileLogCriteria, compileStatusFilter, FILTER_LIMITS, matchLog } from '../../../src/events/filters.ts'
import { createEventHub } from '../../../src/events/hub.ts'
import { executorStatuses, formatStatusDate } from '../../../src/events/status.ts'
import { BoundedQueue, createPollingSubscriptions } from '../../../src/events/subscriptions.ts'
import { createLogger } from '../../../src/log.ts'

const log = createLogger({ level: 'silent' })
const A = `0x${'aa'.repeat(20)}`
const B = `0x${'bb'.repeat(20)}`
const T = (n: number) => `0x${n.toString(16).padStart(64, '0')}`

const wireLog = (address: string, topics: string[], blockNumber = 5) => ({
  address,
  topics,
  data: '',
  blockNumber,
  blockHash: T(0),
  txHash: T(0),
  txIndex: 0,
  index: 0,
})

test('matchLog: addresses (any case, 0x optional), position-wise topics, null and [] wildcards, OR lists, block bounds', () => {
  const match =
    (filter: Parameters<typeof compileLogCriteria>[0], bounds = {}) =>
    (l: ReturnType<typeof wireLog>) =>
      matchLog(compileLogCriteria(filter, bounds), l)
  const l = wireLog(A, [T(1), T(2), T(3)])
  assert.ok(match(undefined)(l))
  assert.ok(match({})(l))
  assert.ok(match({ addresses: [A.slice(2).toUpperCase()] })(l))
  assert.not.ok(match({ addresses: [B] })(l))
  assert.ok(match({ addresses: [] })(l), 'an empty address list is no limit')
  assert.ok(match({ topics: [T(1)] })(l))
  assert.ok(match({ topics: [T(1), T(2)] })(l), '[A, B] means A and B')
  assert.not.ok(match({ topics: [T(2)] })(l), 'topics are position-wise')
  assert.ok(match({ topics: [T(1), [T(9), T(2)]] })(l), '[A, [B, C]] means A and (B or C)')
  assert.not.ok(match({ topics: [T(1), [T(8), T(9)]] })(l))
  assert.ok(match({ topics: [null, T(2), T(3)] })(l), 'null is a wildcard')
  assert.ok(match({ topics: [[], T(2)] })(l), 'an empty list is a wildcard')
  assert.not.ok(match({ topics: [null, null, null, null] })(l), 'more positions than the log has topics')
  assert.ok(match({ topics: [T(1).toUpperCase().replace('0X', '0x')] })(l), 'topics compare case-insensitively')
  assert.ok(match({}, { fromBlock: 5, toBlock: 5 })(l), 'bounds are inclusive')
  assert.not.ok(match({}, { fromBlock: 6 })(l))
  assert.not.ok(match({}, { toBlock: 4 })(l))
})

test('filter bounds: 1000 entries per list, 4 topic positions, 64 KiB as JSON; past them -32602 naming the limit', () => {
  const refused = (run: () => unknown, message: string | RegExp): void => {
    try {
      run()
    } catch (error) {
      assert.instance(error, RpcError)
      assert.is((error as RpcError).code, -32602)
      if (typeof message === 'string') assert.is((error as RpcError).message, message)
      else assert.match((error as RpcError).message, message)
      return
    }
    assert.unreachable('accepted')
  }
  const addresses = (n: number) => Array.from({ length: n }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`)
  assert.is(compileLogCriteria({ addresses: addresses(FILTER_LIMITS.listEntries) }).addresses?.size, 1000)
  refused(
    () => compileLogCriteria({ addresses: addresses(1001) }),
    'invalid params: a log filter may list at most 1000 addresses; got 1001',
  )
  assert.is(compileLogCriteria({ topics: [null, null, null, T(1)] }).topics?.length, 4)
  refused(
    () => compileLogCriteria({ topics: [null, null, null, null, T(1)] }),
    /at most 4 topic positions \(a log has at most 4 topics\); got 5/,
  )
  const topics = (n: number) => Array.from({ length: n }, (_, i) => T(i))
  assert.ok(compileLogCriteria({ topics: [topics(900)] }))
  refused(() => compileLogCriteria({ topics: [topics(1001)] }), /at most 1000 alternative topics at one position; got 1001/)
  refused(
    () => compileLogCriteria({ topics: [topics(950)] }),
    /^invalid params: a log filter may be at most 65536 bytes as JSON; got 6\d{4}$/,
  )
  refused(
    () => compileStatusFilter({ error_codes_exclude: Array.from({ length: 1001 }, () => -1) }),
    /at most 1000 error_codes_exclude; got 1001/,
  )
  refused(() => compileStatusFilter({ subtypes: ['x'.repeat(FILTER_LIMITS.bytes)] }), /system status filter may be at most 65536 bytes/)
})

test('compileStatusFilter: a non-empty include list wins, else the exclude list; all three dimensions must pass', () => {
  const message = { module: 'executor', subType: 'timeout', errorCode: -32005 }
  const passes = (filter: Parameters<typeof compileStatusFilter>[0]) => compileStatusFilter(filter)(message)
  assert.ok(passes(undefined))
  assert.ok(passes({}))
  assert.ok(passes({ modules: ['executor', 'p2p'] }))
  assert.not.ok(passes({ modules: ['p2p'] }))
  assert.not.ok(passes({ modules_exclude: ['executor'] }))
  assert.ok(passes({ modules: ['executor'], modules_exclude: ['executor'] }), 'include wins')
  assert.ok(passes({ modules: [], modules_exclude: ['p2p'] }), 'an empty include list leaves the exclude list')
  assert.not.ok(passes({ subtypes: ['viewchange'] }))
  assert.ok(passes({ error_codes: [-32005n] }), 'bigint codes compare by value')
  assert.not.ok(passes({ error_codes_exclude: [-32005] }))
  assert.not.ok(passes({ modules: ['executor'], subtypes: ['timeout'], error_codes: [-1] }), 'every dimension must pass')
})

test('BoundedQueue: FIFO; a full queue drops its oldest item and says so', () => {
  const queue = new BoundedQueue<number>(3)
  assert.is(queue.push(1), 0)
  assert.is(queue.push(2), 0)
  assert.is(queue.push(3), 0)
  assert.is(queue.push(4), 1)
  assert.is(queue.push(5), 1)
  assert.equal(queue.drain(), [3, 4, 5])
  assert.equal(queue.drain(), [])
  // bounded in bytes too: the oldest go until the new item fits; one item larger than the bound is kept alone
  const bytes = new BoundedQueue<string>(100, 10)
  assert.is(bytes.push('a', 4), 0)
  assert.is(bytes.push('b', 4), 0)
  assert.is(bytes.push('c', 4), 1)
  assert.is(bytes.bytes, 8)
  assert.is(bytes.push('d', 9), 2)
  assert.is(bytes.push('huge', 50), 1)
  assert.equal(bytes.drain(), ['huge'])
  assert.is(bytes.bytes, 0)
  const big = new BoundedQueue<number>(1000)
  for (let i = 0; i < 1500; i++) big.push(i)
  const drained = big.drain()
  assert.is(drained.length, 1000)
  assert.equal(drained.slice(0, 2), [500, 501])
  assert.is(drained[999], 1499)
})

function fakeBlock(number: number, logs: { address: string; topics: string[] }[]): CommittedBlock {
  const header = { number, hash: T(1000 + number), parentHash: T(999 + number), writeTime: 1n, avgTimeMs: 0, txCount: 1, merkleRoot: T(0) }
  const receipt = {
    txHash: T(5000 + number),
    vmType: 'EVM',
    contractAddress: `0x${'00'.repeat(20)}`,
    gasUsed: 0,
    ret: '0x',
    logs: logs.map((l) => ({ ...l, data: '0x01' })),
    blockNumber: number,
    blockHash: header.hash,
    txIndex: 0,
    version: '1.3',
  }
  return { header: header as unknown as BlockHeader, txs: [], receipts: [receipt as unknown as Receipt], invalid: [] }
}

test('a slow poller loses its oldest items, keeps order, and is told through a jsonrpc overflow status', () => {
  const now = 0
  const hub = createEventHub({ nowNs: () => 1_510_000_000_123_456_789n, log })
  const subs = createPollingSubscriptions(hub, log, { nowMs: () => now, sweepEveryMs: 0, capacity: { block: 3, logs: 2, status: 10 } })
  const blocks = subs.newBlockSubscription(false)
  const logs = subs.newLogSubscription(compileLogCriteria({ addresses: [A] }))
  const status = subs.newStatusSubscription(compileStatusFilter({ subtypes: ['overflow'] }))
  for (let n = 1; n <= 5; n++) hub.publishBlock(fakeBlock(n, [{ address: A, topics: [T(n)] }]))
  assert.equal(subs.changes(blocks), [T(1003), T(1004), T(1005)], 'the newest three, in order')
  const got = subs.changes(logs) as { topics: string[]; data: string }[]
  assert.equal(
    got.map((l) => l.topics[0]),
    [T(4), T(5)],
  )
  assert.is(got[0].data, '01', 'log data without 0x')
  const told = subs.changes(status) as { module: string; subType: string; errorCode: number; message: string; date: string }[]
  assert.is(told.length, 2, 'one report per overflowing subscription per poll interval')
  assert.ok(told[0].message.includes(logs), 'the log cache (2 items) overflowed first, at block 3')
  assert.ok(told[1].message.includes(blocks), 'then the block cache (3 items), at block 4')
  assert.equal(
    told.map((m) => [m.module, m.subType, m.errorCode, m.date]),
    [
      ['jsonrpc', 'overflow', -32006, '2017-11-06T20:26:40.123456789Z'],
      ['jsonrpc', 'overflow', -32006, '2017-11-06T20:26:40.123456789Z'],
    ],
  )
  // after a poll, an overflow is reported again
  for (let n = 6; n <= 9; n++) hub.publishBlock(fakeBlock(n, []))
  assert.is(subs.changes(status).length, 1)
  subs.close()
})

test('archive subscriptions cache archive events only, in order, bounded like the others; other subscriptions never see them', () => {
  const hub = createEventHub({ nowNs: () => 1_510_000_000_123_456_789n, log })
  const subs = createPollingSubscriptions(hub, log, { nowMs: () => 0, sweepEveryMs: 0, capacity: { archive: 2 } })
  const archive = subs.newArchiveSubscription()
  const status = subs.newStatusSubscription(compileStatusFilter({}))
  const blocks = subs.newBlockSubscription(false)
  const event = (n: number) => ({
    type: 'do_archive' as const,
    filterId: `0x${String(n).repeat(32)}`,
    success: n !== 2,
    message: n === 2 ? 'why' : '',
  })
  for (let n = 1; n <= 3; n++) hub.publishArchive(event(n))
  hub.publishBlock(fakeBlock(1, []))
  assert.equal(subs.changes(archive), [event(2), event(3)], 'the newest two, in order')
  assert.equal(subs.changes(archive), [])
  assert.equal(subs.changes(blocks), [T(1001)])
  const statuses = subs.changes(status) as { subType: string }[]
  assert.equal(
    statuses.map((m) => m.subType),
    ['overflow'],
    'only the overflow report of the archive cache',
  )
  subs.close()
})

test('expiry: idle for more than idleMs → -32012, swept when blocks arrive; polling resets the clock', () => {
  let now = 0
  const hub = createEventHub({ nowNs: () => 0n, log })
  const subs = createPollingSubscriptions(hub, log, { nowMs: () => now, idleMs: 100, sweepEveryMs: 0, maxSubscriptions: 2 })
  const a = subs.newBlockSubscription(false)
  const b = subs.newBlockSubscription(true)
  assert.throws(
    () => subs.newBlockSubscription(false),
    (e: RpcError) => e.code === -32006,
  )
  now = 60
  subs.changes(a)
  now = 120
  hub.publishBlock(fakeBlock(1, []))
  assert.is(subs.size(), 1, 'b expired and was swept')
  assert.throws(
    () => subs.changes(b),
    (e: RpcError) => e.code === -32012 && e.message === 'required subscription does not existed or has expired',
  )
  assert.equal(subs.changes(a), [T(1001)])
  now = 221
  assert.throws(
    () => subs.remove(a),
    (e: RpcError) => e.code === -32012,
  )
  subs.newBlockSubscription(false)
  subs.newBlockSubscription(false)
  subs.close()
})

test('executorStatuses: one event per discarded transaction; a time-out is its own subType', () => {
  const block = fakeBlock(7, [])
  const tx = (hash: string) => ({ hash }) as never
  block.invalid = [
    { tx: tx(T(1)), invalidMsg: 'INVOKE_CONTRACT_FAILED', detail: 'reverted', blockNumber: 7 },
    { tx: tx(T(2)), invalidMsg: 'INVOKE_CONTRACT_FAILED', detail: 'execution budget exhausted (time-out)', blockNumber: 7 },
    { tx: tx(T(3)), invalidMsg: 'SIGFAILED', detail: 'bad signature', blockNumber: 7 },
  ]
  assert.equal(
    executorStatuses(block).map((e) => [e.module, e.status, e.subType, e.errorCode]),
    [
      ['executor', false, 'failure', -32005],
      ['executor', false, 'timeout', -32005],
      ['executor', false, 'failure', -32003],
    ],
  )
  assert.is(formatStatusDate(1_510_000_000_000_000_001n), '2017-11-06T20:26:40.000000001Z')
})

/** A chain of `height` blocks of one transaction each; every block's receipt holds `logsPerBlock` logs of A. */
function fakeChain(height: number, logsPerBlock: number): ChainReader {
  return {
    height: () => height,
    genesisNumber: () => (height === 0 ? 0 : 1),
    // headers without a bloom: every block is scanned, as for blocks written before blooms existed
    getBlock: () => undefined,
    getBlockTxHashes: (number: number) => (number >= 1 && number <= height ? [T(number)] : []),
    getReceipt: (hash: string) => {
      const number = Number(BigInt(hash))
      return fakeBlock(
        number,
        Array.from({ length: logsPerBlock }, () => ({ address: A, topics: [T(number)] })),
      ).receipts[0]
    },
  } as unknown as ChainReader
}

const rpcError = (run: () => unknown): RpcError => {
  try {
    run()
  } catch (error) {
    if (error instanceof RpcError) return error
    throw error
  }
  throw new Error('no error')
}

test('sub_getLogs bounds: 5000 blocks and 10000 logs per call; range after clamping to genesis and head', () => {
  const subscriptions = {} as never
  const handlers = createSubHandlers({ chain: fakeChain(8000, 2), subscriptions })
  const context = {} as never
  const getLogs = (filter?: Record<string, unknown>) => handlers.sub_getLogs(filter === undefined ? [] : [filter], context) as unknown[]
  assert.is(MAX_LOG_RANGE, 5000)
  assert.is(MAX_LOG_RESULTS, 10_000)
  assert.is(getLogs({ fromBlock: 1, toBlock: 5000 }).length, 10_000, '5000 blocks and 10000 logs: the most one call returns')
  let error = rpcError(() => getLogs({ fromBlock: 1, toBlock: 6000 }))
  assert.equal([error.code, error.message], [-32602, 'range too large: at most 5000 blocks per log query, asked for 6000'])
  error = rpcError(() => getLogs())
  assert.equal([error.code, error.message], [-32602, 'range too large: at most 5000 blocks per log query, asked for 8000'])
  assert.is(getLogs({ fromBlock: 3001 }).length, 10_000, 'toBlock defaults to the head')
  assert.is(getLogs({ fromBlock: 7999, toBlock: 'latest' }).length, 4)
  assert.is(getLogs({ fromBlock: '0x1f3f', toBlock: 100_000 }).length, 4, 'toBlock is lowered to the head')
  error = rpcError(() => getLogs({ fromBlock: 8001 }))
  assert.equal([error.code, error.message], [-32602, 'invalid params. current genesis 1, current head 8000'])

  const dense = createSubHandlers({ chain: fakeChain(8000, 3), subscriptions })
  error = rpcError(() => dense.sub_getLogs([{ fromBlock: 1, toBlock: 5000 }], context))
  assert.equal([error.code, error.message], [-32602, 'result too large: at most 10000 logs per call; narrow the range'])
  assert.is(
    (dense.sub_getLogs([{ fromBlock: 1, toBlock: 5000, topics: [[T(1), T(2)]] }], context) as unknown[]).length,
    6,
    'the cap counts matches only',
  )

  error = rpcError(() => createSubHandlers({ chain: fakeChain(0, 0), subscriptions }).sub_getLogs([], context))
  assert.equal([error.code, error.message], [-32011, 'There is no block generated!'])
})

test.run()
