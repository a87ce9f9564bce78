/**
 * tx_ handlers against real nodes (openrpc.json, protocol.md §4 and §7, reliability.md part B).
 * Node A batches for 300 ms, so a burst of submissions shares one block and a receipt can be
 * asked for before its block exists. Node B cuts a block per transaction, to build 100+ blocks
 * cheaply for the range cap and paging.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import {
  artifact,
  call,
  calldata,
  commit,
  deploy,
  fails,
  ok,
  receiptOf,
  STORE_SOURCE,
  SUBMIT,
  sendAll,
  settle,
  startBatchingPair,
  submit,
  transfers,
  type WireBlock,
  type WireReceipt,
  type WireTx,
} from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'
import { generatedTransfer2017, MANUAL_DEPLOY_PAYLOAD, manualDeploy, manualInvoke } from '../unit/crypto/vectors.ts'

const ZERO = `0x${'00'.repeat(20)}`
const UNKNOWN_HASH = `0x${'ab'.repeat(32)}`
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

let nodes: KeelNode[] = []
let a: string
let b: string
let dev: Wallet
let devB: Wallet
const x = wallet()
const y = wallet()
const z = wallet()

/** node A's chain, filled in by the building tests */
const built = {
  /** block 1: three transfers */
  burst: [] as string[],
  burstBlock: 0,
  /** a later single transfer */
  single: '',
  singleBlock: 0,
  store: '',
  /** discarded transactions by failure name */
  failed: {} as Record<string, string>,
  /** their signed params */
  failedParams: {} as Record<string, Record<string, unknown>>,
  failedBlock: 0,
  validCount: 0,
}

const blockA = (number: number | string, isPlain = false): Promise<WireBlock> =>
  ok<WireBlock>(a, 'block_getBlockByNumber', [number, isPlain])
const txA = (hash: string): Promise<WireTx> => ok<WireTx>(a, 'tx_getTransactionByHash', [hash])
const hashesOf = (txs: WireTx[]): string[] => txs.map((tx) => tx.hash)

test.before(async () => {
  // solc-js compiles synchronously in this thread: done before the nodes start, not for seconds
  // between two requests while a node closes the kept-alive connection the next one goes out on
  artifact(STORE_SOURCE, 'Store')
  ;({ nodes, a, b, dev, devB } = await startBatchingPair())
})

test.after(async () => {
  await Promise.all(nodes.map((node) => node.stop()))
})

// ---- an empty chain ----

test('an empty chain: `latest` answers -32011, a number -32602 out of range, counts 0, discard list -32001, time queries []', async () => {
  const none = 'There is no block generated!'
  const outOfRange = (n: number | string) => `block number ${n} is out of range, and now latest block number is 0`
  await fails(b, 'tx_getTransactions', [{ from: 'latest', to: 'latest' }], -32011, none)
  // the manual's samples: a number past the head on a chain with no block yet (latest 0)
  await fails(b, 'tx_getTransactions', [{ from: 1, to: 2 }], -32602, outOfRange(1))
  await fails(b, 'tx_getTransactions', [{ from: 0, to: 2 }], -32602, outOfRange(2))
  await fails(b, 'tx_getTransactionByBlockNumberAndIndex', [2, 0], -32602, outOfRange(2))
  await fails(b, 'tx_getTransactionByBlockNumberAndIndex', ['0x2', 0], -32602, outOfRange('0x2'))
  await fails(b, 'tx_getBlockTransactionCountByNumber', ['2'], -32602, outOfRange(2))
  await fails(b, 'tx_getTxAvgTimeByBlockNumber', [{ from: 1, to: 1 }], -32602, outOfRange(1))
  await fails(b, 'tx_getTransactionsWithLimit', [{ from: 1, to: 1 }], -32602, outOfRange(1))
  await fails(b, 'tx_getTransactionByBlockNumberAndIndex', ['latest', 0], -32011, none)
  await fails(b, 'tx_getBlockTransactionCountByNumber', ['latest'], -32011, none)
  await fails(b, 'tx_getTxAvgTimeByBlockNumber', [{ from: 'latest', to: 'latest' }], -32011, none)
  await fails(b, 'tx_getTransactionsWithLimit', [{ from: 'latest', to: 'latest' }], -32011, none)
  await fails(b, 'tx_getDiscardTransactions', [], -32001, 'Not found discard transactions')
  assert.is((await ok<{ count: string }>(b, 'tx_getTransactionsCount')).count, '0x0')
  const window = { startTime: 0, endTime: 9_000_000_000_000_000_000n }
  assert.equal(await ok(b, 'tx_getTransactionsByTime', [window]), [])
  assert.equal(await ok(b, 'tx_getDiscardTransactionsByTime', [window]), [])
  assert.is(await ok(b, 'tx_getTransactionsCountByTime', [window]), '0x0')
  assert.equal(await ok(b, 'tx_getTransactionsByTimeWithLimit', [window]), { hasmore: false, data: [] })
})

// ---- building node A's chain ----

test('a burst of transfers shares one block; a receipt is -32001 until its block is written', async () => {
  const txs = [dev.transfer(x.address, 1), dev.transfer(y.address, 2), dev.transfer(z.address, 3)]
  const hashes = await Promise.all(txs.map((tx) => submit(a, SUBMIT.transfer, tx)))
  // node A waits 300 ms before cutting the block: nothing is committed yet
  await fails(a, 'tx_getTransactionReceipt', [hashes[0]], -32001, `Not found receipt ${hashes[0]}`)
  await fails(a, 'tx_getTransactionByHash', [hashes[0]], -32001, `Not found transaction ${hashes[0]}`)
  // the exact same transaction again while it is pending
  await fails(a, SUBMIT.transfer, [txs[1]], -32007, `Repeated transaction ${hashes[1]}`)
  for (const hash of hashes) assert.is((await receiptOf(a, hash)).code, 0)
  await settle(a, hashes, 0)
  const blocks = await Promise.all(hashes.map(async (hash) => Number((await txA(hash)).blockNumber)))
  assert.equal(blocks, [1, 1, 1], 'the three transfers form block 1')
  // in index order (the order the node received them)
  const indexes = await Promise.all(hashes.map(async (hash) => Number((await txA(hash)).txIndex)))
  assert.equal([...indexes].sort(), [0, 1, 2])
  built.burst = hashes
    .map((hash, i) => ({ hash, index: indexes[i] }))
    .sort((p, q) => p.index - q.index)
    .map((entry) => entry.hash)
  built.burstBlock = 1

  const single = await commit(a, SUBMIT.transfer, dev.transfer(x.address, 4, { extra: 'single transfer' }))
  built.single = single.hash
  built.singleBlock = Number((await txA(single.hash)).blockNumber)
  assert.is(built.singleBlock, 2)
  built.store = (await deploy(a, dev, artifact(STORE_SOURCE, 'Store').bin)).address
  built.validCount = 5
})

test('failures of every kind in one burst: a block with no valid transaction', async () => {
  const forged = wallet().transfer(y.address, 1)
  forged.from = dev.address
  const poor = wallet()
  const items = [
    { name: 'SIGFAILED', method: SUBMIT.transfer, tx: forged },
    { name: 'OUTOFBALANCE', method: SUBMIT.transfer, tx: poor.transfer(x.address, 5) },
    { name: 'DEPLOY_CONTRACT_FAILED', method: SUBMIT.deploy, tx: dev.deploy(artifact(STORE_SOURCE, 'Broken').bin) },
    { name: 'INVOKE_CONTRACT_FAILED', method: SUBMIT.invoke, tx: dev.invoke(built.store, calldata('fail()')) },
    { name: 'INVALID_PERMISSION', method: SUBMIT.maintain, tx: x.maintain(built.store, 2) },
  ]
  const { hashes, replies } = await sendAll(a, items)
  const codes: Record<string, number> = {
    OUTOFBALANCE: -32002,
    SIGFAILED: -32003,
    DEPLOY_CONTRACT_FAILED: -32004,
    INVOKE_CONTRACT_FAILED: -32005,
    INVALID_PERMISSION: -32008,
  }
  for (const [i, item] of items.entries()) {
    assert.is(replies[i].code, codes[item.name], `${item.name}: ${replies[i].message}`)
    assert.is(replies[i].message, item.name, 'the failure name is the message')
    assert.not.ok('result' in replies[i])
    built.failed[item.name] = hashes[i]
    built.failedParams[item.name] = item.tx
  }
  const latest = await ok<WireBlock>(a, 'block_latestBlock')
  built.failedBlock = Number(latest.number)
  assert.is(built.failedBlock, 4)
  assert.is(latest.txcounts, '0x0')
  assert.not.ok('transactions' in latest, 'no transactions key when a block holds none')
})

// ---- discard list ----

test('tx_getDiscardTransactions: every failure listed with invalid and invalidMsg', async () => {
  const list = await ok<WireTx[]>(a, 'tx_getDiscardTransactions')
  assert.is(list.length, 5)
  const byHash = new Map(list.map((tx) => [tx.hash, tx]))
  for (const [name, hash] of Object.entries(built.failed)) {
    const tx = byHash.get(hash)
    assert.ok(tx !== undefined, `${name} is listed`)
    assert.is(tx?.invalid, true)
    assert.is(tx?.invalidMsg, name)
    assert.not.ok('blockNumber' in (tx as object), 'a discarded tx has no block fields')
  }
  const timestamps = list.map((tx) => BigInt(tx.timestamp))
  assert.equal(
    timestamps,
    [...timestamps].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0)),
    'oldest first',
  )
  const forged = byHash.get(built.failed.SIGFAILED)
  assert.is(forged?.from, dev.address)
  assert.is(forged?.to, y.address)
  assert.is(forged?.amount, '0x1')
  assert.is(byHash.get(built.failed.DEPLOY_CONTRACT_FAILED)?.to, ZERO)
})

// ---- by hash ----

test('tx_getTransactionByHash: committed, discarded, case, bad forms, unknown', async () => {
  const tx = await txA(built.single)
  const params = await ok<WireTx[]>(a, 'tx_getTransactions', [{ from: built.singleBlock, to: built.singleBlock }])
  assert.equal(params, [tx])
  assert.is(tx.version, '1.3')
  assert.is(tx.hash, built.single)
  assert.is(tx.blockNumber, '0x2')
  assert.is(tx.txIndex, '0x0')
  assert.is(tx.from, dev.address)
  assert.is(tx.to, x.address)
  assert.is(tx.amount, '0x4')
  assert.is(tx.extra, 'single transfer')
  assert.is(tx.payload, '0x0')
  assert.match(tx.executeTime, /^0x[0-9a-f]+$/)
  assert.ok(BigInt(tx.timestamp) > 1_600_000_000_000_000_000n, 'timestamp in ns, as signed')
  assert.ok(BigInt(tx.nonce) > 0n)
  const block = await blockA(2)
  assert.is(tx.blockHash, block.hash)

  assert.equal(await txA(built.single.toUpperCase().replace('0X', '0x')), tx, 'hex case does not matter')
  const invalid = await txA(built.failed.OUTOFBALANCE)
  assert.is(invalid.invalid, true)
  assert.is(invalid.invalidMsg, 'OUTOFBALANCE')
  assert.is(invalid.amount, '0x5')

  await fails(a, 'tx_getTransactionByHash', [UNKNOWN_HASH], -32001, `Not found transaction ${UNKNOWN_HASH}`)
  await fails(a, 'tx_getTransactionByHash', [built.single.slice(2)], -32602)
  await fails(a, 'tx_getTransactionByHash', [built.single.slice(0, 64)], -32602)
  await fails(a, 'tx_getTransactionByHash', [`${built.single}00`], -32602)
  await fails(a, 'tx_getTransactionByHash', [`0x${'zz'.repeat(32)}`], -32602)
  await fails(a, 'tx_getTransactionByHash', [], -32602)
})

// ---- by block and index ----

test('tx_getTransactionByBlockHashAndIndex / ByBlockNumberAndIndex and their aliases', async () => {
  const block = await blockA(built.burstBlock)
  for (const [i, hash] of built.burst.entries()) {
    for (const index of [i, String(i), `0x${i.toString(16)}`]) {
      assert.is((await ok<WireTx>(a, 'tx_getTransactionByBlockHashAndIndex', [block.hash, index])).hash, hash)
      assert.is((await ok<WireTx>(a, 'tx_getTransactionByBlockNumberAndIndex', [built.burstBlock, index])).hash, hash)
    }
  }
  for (const number of ['1', '0x1', 1]) {
    assert.is((await ok<WireTx>(a, 'tx_getTransactionByBlockNumberAndIndex', [number, 2])).hash, built.burst[2])
  }
  assert.is((await ok<WireTx>(a, 'tx_getTransactionsByBlockHashAndIndex', [block.hash, 1])).hash, built.burst[1])
  assert.is((await ok<WireTx>(a, 'tx_getTransactionsByBlockNumberAndIndex', ['0x1', '0x1'])).hash, built.burst[1])
  assert.is(
    (await ok<WireTx>(a, 'tx_getTransactionByBlockHashAndIndex', [block.hash.toUpperCase().replace('0X', '0x'), 0])).hash,
    built.burst[0],
  )

  const past = 'Invalid params. This block contains 3 transactions, but the index 3 is out of range'
  await fails(a, 'tx_getTransactionByBlockHashAndIndex', [block.hash, 3], -32602, past)
  await fails(a, 'tx_getTransactionByBlockNumberAndIndex', [1, '0x3'], -32602, past)
  await fails(a, 'tx_getTransactionsByBlockNumberAndIndex', [1, '3'], -32602, past)
  await fails(
    a,
    'tx_getTransactionByBlockNumberAndIndex',
    [built.failedBlock, 0],
    -32602,
    'Invalid params. This block contains 0 transactions, but the index 0 is out of range',
  )
  await fails(a, 'tx_getTransactionByBlockHashAndIndex', [UNKNOWN_HASH, 0], -32001, `Not found block hash ${UNKNOWN_HASH}`)
  await fails(a, 'tx_getTransactionsByBlockHashAndIndex', [UNKNOWN_HASH, 0], -32001, `Not found block hash ${UNKNOWN_HASH}`)
  const height = Number((await ok<string>(a, 'block_getChainHeight')) as string)
  await fails(
    a,
    'tx_getTransactionByBlockNumberAndIndex',
    [99, 0],
    -32602,
    `block number 99 is out of range, and now latest block number is ${height}`,
  )
  await fails(a, 'tx_getTransactionByBlockNumberAndIndex', [0, 0], -32602, "block number can't be negative or zero, but get 0")
  await fails(a, 'tx_getTransactionByBlockNumberAndIndex', [1, -1], -32602)
  await fails(a, 'tx_getTransactionByBlockNumberAndIndex', [1, 'one'], -32602)
  await fails(a, 'tx_getTransactionByBlockNumberAndIndex', [-1, 0], -32602)
  // the latest block is the one of discarded transactions
  await fails(
    a,
    'tx_getTransactionByBlockNumberAndIndex',
    ['latest', 0],
    -32602,
    'Invalid params. This block contains 0 transactions, but the index 0 is out of range',
  )
})

test('tx_getBlockTransactionCountByHash / ByNumber', async () => {
  const block = await blockA(1)
  assert.is(await ok(a, 'tx_getBlockTransactionCountByHash', [block.hash]), '0x3')
  for (const number of [1, '1', '0x1']) assert.is(await ok(a, 'tx_getBlockTransactionCountByNumber', [number]), '0x3')
  assert.is(await ok(a, 'tx_getBlockTransactionCountByNumber', [built.singleBlock]), '0x1')
  assert.is(await ok(a, 'tx_getBlockTransactionCountByNumber', [built.failedBlock]), '0x0', 'discarded txs are not counted')
  const failed = await blockA(built.failedBlock)
  assert.is(await ok(a, 'tx_getBlockTransactionCountByHash', [failed.hash]), '0x0')
  await fails(a, 'tx_getBlockTransactionCountByHash', [UNKNOWN_HASH], -32001, `Not found block hash ${UNKNOWN_HASH}`)
  const height = Number(await ok<string>(a, 'block_getChainHeight'))
  await fails(
    a,
    'tx_getBlockTransactionCountByNumber',
    ['0x63'],
    -32602,
    `block number 0x63 is out of range, and now latest block number is ${height}`,
  )
  assert.is(await ok(a, 'tx_getBlockTransactionCountByNumber', ['latest']), (await blockA('latest')).txcounts)
})

// ---- ranges ----

test('tx_getTransactions: newest block first, index order inside a block, every number form', async () => {
  const height = Number(await ok<string>(a, 'block_getChainHeight'))
  const all = await ok<WireTx[]>(a, 'tx_getTransactions', [{ from: 1, to: height }])
  assert.is(all.length, built.validCount)
  const numbers = all.map((tx) => Number(tx.blockNumber))
  assert.equal(
    numbers,
    [...numbers].sort((p, q) => q - p),
    'blocks in descending order',
  )
  const firstBlock = all.filter((tx) => tx.blockNumber === '0x1')
  assert.equal(hashesOf(firstBlock), built.burst, 'index order inside block 1')
  assert.equal(hashesOf(all).slice(-3), built.burst)

  for (const [from, to] of [
    ['1', String(height)],
    ['0x1', `0x${height.toString(16)}`],
    [1, 'latest'],
    [1n, BigInt(height)],
  ] as const) {
    assert.equal(hashesOf(await ok<WireTx[]>(a, 'tx_getTransactions', [{ from, to }])), hashesOf(all), `${from}..${to}`)
  }
  assert.equal(hashesOf(await ok<WireTx[]>(a, 'tx_getTransactions', [{ from: 1, to: 1 }])), built.burst)
  assert.equal(await ok(a, 'tx_getTransactions', [{ from: built.failedBlock, to: built.failedBlock }]), [], 'a block of discarded txs')
  const latest = await ok<WireTx[]>(a, 'tx_getTransactions', [{ from: 'latest', to: 'latest' }])
  assert.equal(latest, await ok(a, 'tx_getTransactions', [{ from: height, to: height }]))
})

test('tx_getTransactions: range errors with the exact messages', async () => {
  const height = Number(await ok<string>(a, 'block_getChainHeight'))
  const range = (from: unknown, to: unknown) => [{ from, to }]
  await fails(a, 'tx_getTransactions', range(3, 2), -32602, 'invalid params, from = 3, to = 2')
  await fails(a, 'tx_getTransactions', range('0x3', '0x2'), -32602, 'invalid params, from = 3, to = 2')
  await fails(a, 'tx_getTransactions', range('latest', 1), -32602, `invalid params, from = ${height}, to = 1`)
  await fails(a, 'tx_getTransactions', range(0, 2), -32602, 'invalid params, from = 0, to = 2')
  await fails(a, 'tx_getTransactions', range('0', '0'), -32602, 'invalid params, from = 0, to = 0')
  await fails(a, 'tx_getTransactions', range(1, 0), -32602, 'invalid params, from = 1, to = 0')
  const past = (given: string) => `block number ${given} is out of range, and now latest block number is ${height}`
  await fails(a, 'tx_getTransactions', range(1, 999), -32602, past('999'))
  await fails(a, 'tx_getTransactions', range(1, '999'), -32602, past('999'))
  await fails(a, 'tx_getTransactions', range(1, '0x3e7'), -32602, past('0x3e7'))
  await fails(a, 'tx_getTransactions', range(height + 1, height + 2), -32602, past(String(height + 1)))
  // the schema: negative, words, fractions, missing bounds
  await fails(a, 'tx_getTransactions', range(-1, 2), -32602)
  await fails(a, 'tx_getTransactions', range('-1', 2), -32602)
  await fails(a, 'tx_getTransactions', range('first', 2), -32602)
  await fails(a, 'tx_getTransactions', range(1.5, 2), -32602)
  await fails(a, 'tx_getTransactions', [{ from: 1 }], -32602)
  await fails(a, 'tx_getTransactions', [], -32602)
})

test('node B: 105 one-transaction blocks; the 100-block cap on ranges', async () => {
  const { blocks } = await transfers(b, devB, x.address, 105, 1)
  assert.is(new Set(blocks).size, 105, 'batchSize 1: one block per transaction')
  assert.is(await ok(b, 'block_getChainHeight'), '0x69')

  const hundred = await ok<WireTx[]>(b, 'tx_getTransactions', [{ from: 1, to: 100 }])
  assert.is(hundred.length, 100)
  assert.equal(
    hundred.map((tx) => Number(tx.blockNumber)),
    Array.from({ length: 100 }, (_, i) => 100 - i),
  )
  assert.is((await ok<WireTx[]>(b, 'tx_getTransactions', [{ from: 6, to: 'latest' }])).length, 100)
  const cap = (n: number) => `range too large: at most 100 blocks per call, asked for ${n}`
  await fails(b, 'tx_getTransactions', [{ from: 1, to: 101 }], -32602, cap(101))
  await fails(b, 'tx_getTransactions', [{ from: '0x1', to: 'latest' }], -32602, cap(105))
  await fails(b, 'tx_getTransactions', [{ from: 5, to: 'latest' }], -32602, cap(101))
  await fails(b, 'tx_getTransactionsWithLimit', [{ from: 1, to: 105 }], -32602, cap(105))
  // the average has no cap
  assert.match(await ok<string>(b, 'tx_getTxAvgTimeByBlockNumber', [{ from: 1, to: 105 }]), /^0x[0-9a-f]+$/)
})

test('tx_getTxAvgTimeByBlockNumber: hex ms, a one-transaction block matches the block avgTime, range errors', async () => {
  const block = await blockA(built.singleBlock)
  assert.is(await ok(a, 'tx_getTxAvgTimeByBlockNumber', [{ from: built.singleBlock, to: built.singleBlock }]), block.avgTime)
  assert.is(await ok(a, 'tx_getTxAvgTimeByBlockNumber', [{ from: built.failedBlock, to: built.failedBlock }]), '0x0', 'no txs')
  const all = await ok<string>(a, 'tx_getTxAvgTimeByBlockNumber', [{ from: '1', to: 'latest' }])
  assert.match(all, /^0x[0-9a-f]+$/)
  assert.ok(Number(all) < 5000, `average ${all} ms`)
  await fails(a, 'tx_getTxAvgTimeByBlockNumber', [{ from: 2, to: 1 }], -32602, 'invalid params, from = 2, to = 1')
  const height = Number(await ok<string>(a, 'block_getChainHeight'))
  await fails(
    a,
    'tx_getTxAvgTimeByBlockNumber',
    [{ from: 1, to: 1000 }],
    -32602,
    `block number 1000 is out of range, and now latest block number is ${height}`,
  )
})

// ---- counts ----

test('tx_getTransactionsCount: valid committed transactions, and the time of the answer', async () => {
  const before = BigInt(Date.now()) * 1_000_000n
  const result = await ok<{ count: string; timestamp: number | bigint }>(a, 'tx_getTransactionsCount')
  const after = BigInt(Date.now()) * 1_000_000n
  assert.is(result.count, `0x${built.validCount.toString(16)}`)
  assert.ok(BigInt(result.timestamp) >= before - 1_000_000n && BigInt(result.timestamp) <= after + 1_000_000n, 'ns timestamp of now')
  assert.is((await ok<{ count: string }>(b, 'tx_getTransactionsCount')).count, '0x69')
})

// ---- receipts ----

test('tx_getTransactionReceipt: a transfer, a deployment, unknown, bad hash', async () => {
  const receipt = await ok<WireReceipt>(a, 'tx_getTransactionReceipt', [built.single])
  assert.equal(receipt, {
    version: '1.3',
    txHash: built.single,
    vmType: 'EVM',
    contractAddress: ZERO,
    gasUsed: 0,
    ret: '0x0',
    log: [],
  })
  const upper = await ok<WireReceipt>(a, 'tx_getTransactionReceipt', [built.single.toUpperCase().replace('0X', '0x')])
  assert.equal(upper, receipt)
  await fails(a, 'tx_getTransactionReceipt', [UNKNOWN_HASH], -32001, `Not found receipt ${UNKNOWN_HASH}`)
  await fails(a, 'tx_getTransactionReceipt', ['0x1234'], -32602)
  for (const [name, hash] of Object.entries(built.failed)) {
    const reply = await call(a, 'tx_getTransactionReceipt', [hash])
    assert.is(reply.message, name)
  }
})

// ---- batch queries ----

test('tx_getBatchTransactions: request order, `hashs`, unknown skipped, discarded included, cap', async () => {
  const hashes = [built.single, UNKNOWN_HASH, built.burst[2], built.failed.SIGFAILED, built.burst[0]]
  const found = await ok<WireTx[]>(a, 'tx_getBatchTransactions', [{ hashes }])
  assert.equal(hashesOf(found), [built.single, built.burst[2], built.failed.SIGFAILED, built.burst[0]])
  assert.is(found[2].invalid, true)
  assert.is(found[2].invalidMsg, 'SIGFAILED')
  assert.equal(await ok(a, 'tx_getBatchTransactions', [{ hashs: hashes }]), found, 'the spec spelling `hashs`')
  assert.equal(await ok(a, 'tx_getBatchTransactions', [{ hashes: [UNKNOWN_HASH] }]), [])
  assert.equal(await ok(a, 'tx_getBatchTransactions', [{ hashes: [] }]), [])
  const many = Array.from({ length: 101 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`)
  await fails(a, 'tx_getBatchTransactions', [{ hashes: many }], -32602, 'too many items: at most 100 per call, got 101')
  assert.equal(await ok(a, 'tx_getBatchTransactions', [{ hashes: many.slice(0, 100) }]), [])
  await fails(a, 'tx_getBatchTransactions', [{ hashes: ['0x12'] }], -32602)
})

test('tx_getBatchReceipt: request order, `hashs`, unknown skipped, a discarded one fails the call, cap', async () => {
  const hashes = [built.burst[1], UNKNOWN_HASH, built.single]
  const receipts = await ok<WireReceipt[]>(a, 'tx_getBatchReceipt', [{ hashes }])
  assert.equal(
    receipts.map((r) => r.txHash),
    [built.burst[1], built.single],
  )
  assert.equal(await ok(a, 'tx_getBatchReceipt', [{ hashs: hashes }]), receipts)
  assert.equal(await ok(a, 'tx_getBatchReceipt', [{ hashes: [UNKNOWN_HASH] }]), [])
  await fails(a, 'tx_getBatchReceipt', [{ hashes: [built.single, built.failed.INVALID_PERMISSION] }], -32008, 'INVALID_PERMISSION')
  await fails(a, 'tx_getBatchReceipt', [{ hashs: [built.failed.OUTOFBALANCE, built.single] }], -32002, 'OUTOFBALANCE')
  const many = Array.from({ length: 101 }, () => built.single)
  await fails(a, 'tx_getBatchReceipt', [{ hashes: many }], -32602, 'too many items: at most 100 per call, got 101')
  assert.is((await ok<WireReceipt[]>(a, 'tx_getBatchReceipt', [{ hashes: many.slice(1) }])).length, 100, 'repeats are answered')
})

// ---- sign hash ----

test('tx_getSignHash: the protocol.md §1.3 vectors', async () => {
  assert.is(
    await ok(a, 'tx_getSignHash', [
      {
        from: '0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc',
        payload: MANUAL_DEPLOY_PAYLOAD,
        timestamp: 1487771157166000000n,
        nonce: 5373500328656597,
      },
    ]),
    '0x2e6a644a4ca6a9daba4444995dc0dda039208e642df11db35438d18e7c3b13c3',
  )
  assert.is(manualDeploy.signHash, '0x2e6a644a4ca6a9daba4444995dc0dda039208e642df11db35438d18e7c3b13c3')
  assert.is(
    await ok(a, 'tx_getSignHash', [
      {
        from: '0x17d806c92fa941b4b7a8ffffc58fa2f297a3bffc',
        to: '0x000f1a7a08ccc48e5d30f80850cf1cf283aa3abd',
        value: 100,
        timestamp: 1510000000000000000n,
        nonce: 1234567890123456,
      },
    ]),
    '0xc9c3e54b41ae3c1488ce751b0dea2fa0105b961ed5ece3fee13ad48a97c3c821',
  )
  assert.is(generatedTransfer2017.hash, '0xc9c3e54b41ae3c1488ce751b0dea2fa0105b961ed5ece3fee13ad48a97c3c821')
  // the manual's contract_invokeContract example (protocol.md §1.3)
  assert.is(await ok(a, 'tx_getSignHash', [manualInvoke.tx]), '0xc77ae09da835938f69a985b47519febf8ba2c9864a575a7cd15b3aa220d882ce')
  // the same vector with the value as hex, the address without 0x, and extra (not signed)
  assert.is(
    await ok(a, 'tx_getSignHash', [
      {
        from: '17d806c92fa941b4b7a8ffffc58fa2f297a3bffc',
        to: '0x000F1A7A08CCC48E5D30F80850CF1CF283AA3ABD',
        value: '0x64',
        extra: 'not signed',
        timestamp: 1510000000000000000n,
        nonce: 1234567890123456,
      },
    ]),
    '0xc9c3e54b41ae3c1488ce751b0dea2fa0105b961ed5ece3fee13ad48a97c3c821',
  )
  await fails(a, 'tx_getSignHash', [{ from: ZERO, value: 1, timestamp: 1, nonce: 1 }], -32602, 'address `from` is invalid')
  await fails(a, 'tx_getSignHash', [{ from: dev.address, value: 1, timestamp: 0, nonce: 1 }], -32602, '`timestamp` is invalid')
  await fails(a, 'tx_getSignHash', [{ from: dev.address, value: 1, timestamp: 1, nonce: 0 }], -32602)
  await fails(a, 'tx_getSignHash', [{ from: dev.address, value: 1, nonce: 1 }], -32602)
})

// ---- time windows ----

test('tx_getTransactionsByTime: the blocks written in the window, newest block first', async () => {
  const b1 = await blockA(1)
  const b2 = await blockA(built.singleBlock)
  const latest = await blockA('latest')
  const t1 = BigInt(b1.writeTime)
  const t2 = BigInt(b2.writeTime)
  // exactly block 1's write time: its three transactions
  assert.equal(hashesOf(await ok<WireTx[]>(a, 'tx_getTransactionsByTime', [{ startTime: t1, endTime: t1 }])), built.burst)
  // blocks 1 and 2: block 2 first
  assert.equal(hashesOf(await ok<WireTx[]>(a, 'tx_getTransactionsByTime', [{ startTime: t1, endTime: t2 }])), [
    built.single,
    ...built.burst,
  ])
  // every block
  const all = await ok<WireTx[]>(a, 'tx_getTransactionsByTime', [{ startTime: t1, endTime: BigInt(latest.writeTime) }])
  assert.equal(all, await ok(a, 'tx_getTransactions', [{ from: 1, to: 'latest' }]))
  // just after block 1 and before block 2
  assert.equal(await ok(a, 'tx_getTransactionsByTime', [{ startTime: t1 + 1n, endTime: t2 - 1n }]), [])
  assert.equal(await ok(a, 'tx_getTransactionsByTime', [{ startTime: 1, endTime: 2 }]), [])
  const bad = 'invalid params, both startTime and endTime must be positive, startTime must be less than endTime'
  await fails(a, 'tx_getTransactionsByTime', [{ startTime: t2, endTime: t1 }], -32602, bad)
  await fails(a, 'tx_getTransactionsByTime', [{ startTime: -1, endTime: t1 }], -32602)
  await fails(a, 'tx_getTransactionsByTime', [{ startTime: t1 }], -32602)
})

test('tx_getTransactionsCountByTime', async () => {
  const t1 = BigInt((await blockA(1)).writeTime)
  const t2 = BigInt((await blockA(built.singleBlock)).writeTime)
  const tLatest = BigInt((await blockA('latest')).writeTime)
  assert.is(await ok(a, 'tx_getTransactionsCountByTime', [{ startTime: t1, endTime: t1 }]), '0x3')
  assert.is(await ok(a, 'tx_getTransactionsCountByTime', [{ startTime: t1, endTime: t2 }]), '0x4')
  assert.is(await ok(a, 'tx_getTransactionsCountByTime', [{ startTime: 0, endTime: tLatest }]), `0x${built.validCount.toString(16)}`)
  assert.is(await ok(a, 'tx_getTransactionsCountByTime', [{ startTime: 1, endTime: 2 }]), '0x0')
  await fails(
    a,
    'tx_getTransactionsCountByTime',
    [{ startTime: 2, endTime: 1 }],
    -32602,
    'invalid params, both startTime and endTime must be positive, startTime must be less than endTime',
  )
})

test('tx_getDiscardTransactionsByTime: by the discarded transactions own timestamps', async () => {
  const list = await ok<WireTx[]>(a, 'tx_getDiscardTransactions')
  const times = list.map((tx) => BigInt(tx.timestamp)).sort((p, q) => (p < q ? -1 : p > q ? 1 : 0))
  const all = await ok<WireTx[]>(a, 'tx_getDiscardTransactionsByTime', [{ startTime: times[0], endTime: times[times.length - 1] }])
  assert.equal(all, list, 'the whole window: every discarded tx, oldest first')
  const one = await ok<WireTx[]>(a, 'tx_getDiscardTransactionsByTime', [{ startTime: times[0], endTime: times[0] }])
  assert.is(one.length, 1)
  assert.is(BigInt(one[0].timestamp), times[0])
  assert.is(one[0].invalid, true)
  assert.equal(await ok(a, 'tx_getDiscardTransactionsByTime', [{ startTime: 1, endTime: 2 }]), [])
  await fails(
    a,
    'tx_getDiscardTransactionsByTime',
    [{ startTime: times[1], endTime: times[0] }],
    -32602,
    'invalid params, both startTime and endTime must be positive, startTime must be less than endTime',
  )
})

// ---- submission checks ----

test('tx_sendTransaction: the submission checks and their messages', async () => {
  const now = BigInt(Date.now()) * 1_000_000n
  const minute = 60_000_000_000n
  const check = (tx: Record<string, unknown>, message: string) => fails(a, SUBMIT.transfer, [tx], -32602, message)
  await check({ ...dev.transfer(x.address, 1), from: ZERO }, 'address `from` is invalid')
  await check({ ...dev.transfer(x.address, 1), from: ZERO.slice(2) }, 'address `from` is invalid')
  await check({ ...dev.transfer(x.address, 1), to: ZERO }, 'address `to` is invalid')
  await check(dev.transfer(x.address, 1, { timestamp: 0n }), '`timestamp` is invalid')
  await check(dev.transfer(x.address, 1, { timestamp: now + 6n * minute }), '`timestamp` is invalid')
  await check(dev.transfer(x.address, 1, { timestamp: now - 25n * 60n * minute }), 'transaction out of date')
  await check({ ...dev.transfer(x.address, 1), signature: '' }, 'missing params `signature`')
  await check({ ...dev.transfer(x.address, 1), signature: '0x' }, 'missing params `signature`')
  // the schema
  await fails(a, SUBMIT.transfer, [{ ...dev.transfer(x.address, 1), nonce: 0 }], -32602)
  await fails(a, SUBMIT.transfer, [{ ...dev.transfer(x.address, 1), from: '0x1234' }], -32602)
  await fails(a, SUBMIT.transfer, [{ ...dev.transfer(x.address, 1), value: -1 }], -32602)
  const { signature: _, ...unsigned } = dev.transfer(x.address, 1)
  await fails(a, SUBMIT.transfer, [unsigned], -32602)
  // just inside the window is accepted
  const edge = await commit(a, SUBMIT.transfer, dev.transfer(x.address, 1, { timestamp: now + 4n * minute }))
  assert.is(edge.contractAddress, ZERO)
  const old = await commit(a, SUBMIT.transfer, dev.transfer(x.address, 1, { timestamp: now - 23n * 60n * minute }))
  assert.is(old.ret, '0x0')
  built.validCount += 2
})

test('tx_sendTransaction: replays are -32007, also with a flipped-s signature or a changed unsigned field', async () => {
  const tx = dev.transfer(y.address, 7)
  const hash = (await commit(a, SUBMIT.transfer, tx)).hash
  built.validCount += 1
  await fails(a, SUBMIT.transfer, [tx], -32007, `Repeated transaction ${hash}`)
  const upper = { ...tx, signature: String(tx.signature).toUpperCase().replace('0X', '0x') }
  await fails(a, SUBMIT.transfer, [upper], -32007, `Repeated transaction ${hash}`)

  // the other valid signature of the same content: (r, n - s) with the recovery bit flipped
  const sig = String(tx.signature).slice(2)
  const s = BigInt(`0x${sig.slice(66, 130)}`)
  const v = Number.parseInt(sig.slice(130, 132), 16)
  const flipped = `0x${sig.slice(0, 66)}${(SECP256K1_N - s).toString(16).padStart(64, '0')}${(v ^ 1).toString(16).padStart(2, '0')}`
  const malleated = await call(a, SUBMIT.transfer, [{ ...tx, signature: flipped }])
  assert.is(malleated.code, -32007, `flipped s: ${malleated.message}`)
  assert.match(malleated.message, /^Repeated transaction 0x[0-9a-f]{64}$/)

  // extra is no part of the 2017 sign string: refused as unsigned content (tx-spoiled.test.ts)
  const changed = await call(a, SUBMIT.transfer, [{ ...tx, extra: 'not part of the sign string' }])
  assert.is(changed.code, -32602, `changed extra: ${changed.message}`)
  assert.match(changed.message, /^extra is not covered by the 2017 sign string/)

  // a contract call replayed
  const call1 = dev.invoke(built.store, calldata('set(uint256)', 1n))
  const callHash = (await commit(a, SUBMIT.invoke, call1)).hash
  built.validCount += 1
  await fails(a, SUBMIT.invoke, [call1], -32007, `Repeated transaction ${callHash}`)
  const other = await call(a, SUBMIT.invoke, [{ ...call1, extra: 'x' }])
  assert.is(other.code, -32602, `changed extra on a contract call: ${other.message}`)
  // a discarded transaction cannot be replayed either
  const forged = await call(a, SUBMIT.transfer, [built.failedParams.SIGFAILED])
  assert.is(forged.code, -32007, `replay of a discarded tx: ${forged.message}`)
  assert.is(forged.message, `Repeated transaction ${built.failed.SIGFAILED}`)
})

test('tx_getGasPrice and tx_getTransactionsVersion', async () => {
  const price = await call(a, 'tx_getGasPrice')
  assert.is(price.code, 0)
  assert.is(price.result, 0)
  assert.is(typeof price.result, 'number', 'a JSON integer')
  assert.is(await ok(a, 'tx_getTransactionsVersion'), '4.1')
  assert.is(await ok(a, 'tx_getGasPrice', []), 0)
})

// ---- paging ----

interface Page {
  hasmore: boolean
  data: WireTx[]
}

async function pageThrough(
  url: string,
  method: string,
  query: Record<string, unknown>,
  metadataKey = 'metadata',
): Promise<{ hashes: string[]; pages: number }> {
  const hashes: string[] = []
  let bookmark: Record<string, unknown> | undefined
  let pages = 0
  for (;;) {
    const meta = { ...((query[metadataKey] as object) ?? {}), ...(bookmark === undefined ? {} : { bookmark }) }
    const page = await ok<Page>(url, method, [{ ...query, [metadataKey]: meta }])
    pages++
    hashes.push(...hashesOf(page.data))
    if (!page.hasmore) return { hashes, pages }
    assert.ok(page.data.length > 0, 'a page that promises more is not empty')
    const last = page.data[page.data.length - 1]
    bookmark = { blkNum: last.blockNumber, txIndex: last.txIndex }
    if (pages > 200) throw new Error('paging does not end')
  }
}

test('tx_getTransactionsWithLimit: pages forward and backward with a bookmark', async () => {
  const all = hashesOf(await ok<WireTx[]>(a, 'tx_getTransactions', [{ from: 1, to: 'latest' }]))
  const ascending = (await Promise.all(all.map((hash) => txA(hash))))
    .sort((p, q) => Number(p.blockNumber) - Number(q.blockNumber) || Number(p.txIndex) - Number(q.txIndex))
    .map((tx) => tx.hash)

  const first = await ok<Page>(a, 'tx_getTransactionsWithLimit', [{ from: 1, to: 'latest', metadata: { pageSize: 2 } }])
  assert.is(first.hasmore, true)
  assert.equal(hashesOf(first.data), built.burst.slice(0, 2))
  const second = await ok<Page>(a, 'tx_getTransactionsWithLimit', [
    { from: 1, to: 'latest', metadata: { pageSize: 2, bookmark: { blkNum: 1, txIndex: 1 } } },
  ])
  assert.equal(hashesOf(second.data), [built.burst[2], built.single], 'continues after the bookmark, across blocks')

  const forward = await pageThrough(a, 'tx_getTransactionsWithLimit', { from: 1, to: 'latest', metadata: { pageSize: 2 } })
  assert.equal(forward.hashes, ascending)
  assert.is(forward.pages, Math.ceil(ascending.length / 2))
  const backward = await pageThrough(a, 'tx_getTransactionsWithLimit', { from: 1, to: 'latest', metadata: { pageSize: 3, backward: true } })
  assert.equal(backward.hashes, [...ascending].reverse())

  const whole = await ok<Page>(a, 'tx_getTransactionsWithLimit', [{ from: 1, to: 'latest' }])
  assert.equal(hashesOf(whole.data), ascending.slice(0, 10), 'pageSize defaults to 10')
  assert.is(whole.hasmore, ascending.length > 10)
  const hexBookmark = await ok<Page>(a, 'tx_getTransactionsWithLimit', [
    { from: '0x1', to: 'latest', metadata: { pageSize: 1, bookmark: { blkNum: '0x1', txIndex: '0x0' } } },
  ])
  assert.equal(hashesOf(hexBookmark.data), [built.burst[1]])
  // a bookmark without txIndex stands for its whole block, in both directions
  const afterBlock1 = await ok<Page>(a, 'tx_getTransactionsWithLimit', [
    { from: 1, to: 'latest', metadata: { pageSize: 1, bookmark: { blkNum: 1 } } },
  ])
  assert.equal(hashesOf(afterBlock1.data), [built.single])
  const beforeBlock2 = await ok<Page>(a, 'tx_getTransactionsWithLimit', [
    { from: 1, to: 'latest', metadata: { pageSize: 5, backward: true, bookmark: { blkNum: 2 } } },
  ])
  assert.equal(hashesOf(beforeBlock2.data), [...built.burst].reverse(), 'backward from block 2 continues in block 1')
  assert.is(beforeBlock2.hasmore, false)
  await fails(a, 'tx_getTransactionsWithLimit', [{ from: 2, to: 1 }], -32602, 'invalid params, from = 2, to = 1')
  await fails(a, 'tx_getTransactionsWithLimit', [{ from: 1, to: 2, metadata: { pageSize: 0 } }], -32602)

  // node B: pageSize past 100 counts as 100
  const big = await ok<Page>(b, 'tx_getTransactionsWithLimit', [{ from: 1, to: 100, metadata: { pageSize: 500 } }])
  assert.is(big.data.length, 100)
  assert.is(big.hasmore, false)
  const capped = await ok<Page>(b, 'tx_getTransactionsWithLimit', [{ from: 6, to: 105, metadata: { pageSize: 99 } }])
  assert.is(capped.data.length, 99)
  assert.is(capped.hasmore, true)
  assert.is(capped.data[0].blockNumber, '0x6')
})

test('tx_getTransactionsByTimeWithLimit: pages over the window; `metaData` spelling; empty window', async () => {
  const t1 = BigInt((await blockA(1)).writeTime)
  const tLatest = BigInt((await blockA('latest')).writeTime)
  const inWindow = await ok<WireTx[]>(a, 'tx_getTransactionsByTime', [{ startTime: t1, endTime: tLatest }])
  const ascending = [...inWindow]
    .sort((p, q) => Number(p.blockNumber) - Number(q.blockNumber) || Number(p.txIndex) - Number(q.txIndex))
    .map((tx) => tx.hash)
  const window = { startTime: t1, endTime: tLatest }
  const forward = await pageThrough(a, 'tx_getTransactionsByTimeWithLimit', { ...window, metadata: { pageSize: 2 } })
  assert.equal(forward.hashes, ascending)
  const sdk = await pageThrough(a, 'tx_getTransactionsByTimeWithLimit', { ...window, metaData: { pageSize: 3 } }, 'metaData')
  assert.equal(sdk.hashes, ascending, 'the SDK spelling metaData')
  const backward = await pageThrough(a, 'tx_getTransactionsByTimeWithLimit', { ...window, metadata: { pageSize: 2, backward: true } })
  assert.equal(backward.hashes, [...ascending].reverse())
  const blockOne = await ok<Page>(a, 'tx_getTransactionsByTimeWithLimit', [{ startTime: t1, endTime: t1 }])
  assert.equal(hashesOf(blockOne.data), built.burst, 'selected by block write time')
  assert.equal(await ok(a, 'tx_getTransactionsByTimeWithLimit', [{ startTime: 1, endTime: 2 }]), { hasmore: false, data: [] })
  await fails(
    a,
    'tx_getTransactionsByTimeWithLimit',
    [{ startTime: 2, endTime: 1 }],
    -32602,
    'invalid params, both startTime and endTime must be positive, startTime must be less than endTime',
  )
})

test('node C: more than 5000 transactions in a range or a window → result too large; paging still works', async () => {
  const nodeC = await startTestNode({ chain: { batchTimeoutMs: 200 } }, { verifyWorkers: 2 })
  try {
    const c = nodeC.url
    const payer = wallet(nodeC.devAccount?.privateKey)
    const txs = Array.from({ length: 5001 }, () => payer.transfer(x.address, 1))
    const hashes: string[] = []
    for (let i = 0; i < txs.length; i += 250) {
      hashes.push(...(await Promise.all(txs.slice(i, i + 250).map((tx) => submit(c, SUBMIT.transfer, tx)))))
    }
    assert.is((await receiptOf(c, hashes[hashes.length - 1])).code, 0)
    await Promise.all([receiptOf(c, hashes[0]), receiptOf(c, hashes[2500])])
    await settle(c, [hashes[hashes.length - 1]], 0)
    assert.is((await ok<{ count: string }>(c, 'tx_getTransactionsCount')).count, '0x1389')
    const height = Number(await ok<string>(c, 'block_getChainHeight'))
    assert.ok(height <= 100, `${height} blocks`)
    const tooMany = 'result too large: at most 5000 transactions per call; narrow the range'
    await fails(c, 'tx_getTransactions', [{ from: 1, to: 'latest' }], -32602, tooMany)
    const first = BigInt((await ok<WireBlock>(c, 'block_getBlockByNumber', [1, true])).writeTime)
    const last = BigInt((await ok<WireBlock>(c, 'block_getBlockByNumber', ['latest', true])).writeTime)
    await fails(c, 'tx_getTransactionsByTime', [{ startTime: first, endTime: last }], -32602, tooMany)
    assert.is(await ok(c, 'tx_getTransactionsCountByTime', [{ startTime: first, endTime: last }]), '0x1389')
    // without the first block it fits, unless the first block held a single transaction
    const firstCount = Number(await ok<string>(c, 'tx_getBlockTransactionCountByNumber', [1]))
    const fit = await call<WireTx[]>(c, 'tx_getTransactions', [{ from: 2, to: 'latest' }])
    assert.is(fit.code, 0, fit.message)
    assert.is(fit.result?.length, 5001 - firstCount)
    // paging is not capped
    const page = await ok<Page>(c, 'tx_getTransactionsWithLimit', [{ from: 1, to: 'latest', metadata: { pageSize: 100, backward: true } }])
    assert.is(page.data.length, 100)
    assert.is(page.hasmore, true)
    const lastCount = Number(await ok<string>(c, 'tx_getBlockTransactionCountByNumber', ['latest']))
    const newest = await ok<WireTx>(c, 'tx_getTransactionByBlockNumberAndIndex', ['latest', lastCount - 1])
    assert.is(page.data[0].hash, newest.hash, 'backward starts at the newest transaction')
    const timed = await ok<Page>(c, 'tx_getTransactionsByTimeWithLimit', [{ startTime: first, endTime: last, metadata: { pageSize: 100 } }])
    assert.is(timed.data.length, 100)
    assert.is(timed.hasmore, true)
  } finally {
    await nodeC.stop()
  }
})

test.run()
