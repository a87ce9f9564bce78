/**
 * block_ handlers against real nodes (openrpc.json, protocol.md §4 and §7). Node A batches for
 * 300 ms so bursts share a block; node B cuts a block per transaction for the 100-block cap and
 * long paging. Every block comes from real signed transactions.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import {
  artifact,
  call,
  commit,
  deploy,
  fails,
  ok,
  receiptOf,
  STORE_SOURCE,
  SUBMIT,
  send,
  startBatchingPair,
  submit,
  transfers,
  type WireBlock,
  type WireTx,
} from '../helpers/chain.ts'
import { envelope, post } from '../helpers/node.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

const ZERO_HASH = `0x${'00'.repeat(32)}`
const UNKNOWN_HASH = `0x${'cd'.repeat(32)}`
const NONE = 'There is no block generated!'

let nodes: KeelNode[] = []
let a: string
let b: string
let dev: Wallet
let devB: Wallet
const x = wallet()

/** node A's blocks, by number (index 0 unused) */
const blocks: WireBlock[] = []
/** tx hashes of each block of node A, in index order */
const txsOf: Record<number, string[]> = {}
let emptyBlock = 0

const byNumber = (url: string, number: unknown, isPlain?: boolean): Promise<WireBlock> =>
  ok<WireBlock>(url, 'block_getBlockByNumber', isPlain === undefined ? [number] : [number, isPlain])
const numbersOf = (list: WireBlock[]): number[] => list.map((block) => Number(block.number))
const plain = (block: WireBlock): WireBlock => {
  const { transactions: _, ...rest } = block
  return rest
}

test.before(async () => {
  ;({ nodes, a, b, dev, devB } = await startBatchingPair())
})

test.after(async () => {
  await Promise.all(nodes.map((node) => node.stop()))
})

test('an empty chain: -32011 for the latest block, height and genesis; -32602 for a number past the head; empty answers elsewhere', async () => {
  await fails(a, 'block_latestBlock', [], -32011, NONE)
  await fails(a, 'block_getChainHeight', [], -32011, NONE)
  await fails(a, 'block_getGenesisBlock', [], -32011, NONE)
  await fails(a, 'block_getBlockByNumber', ['latest'], -32011, NONE)
  await fails(a, 'block_getBlocks', [{ from: 'latest', to: 'latest' }], -32011, NONE)
  await fails(a, 'block_getBatchBlocksByNumber', [{ numbers: ['latest'] }], -32011, NONE)
  // a number past the head: -32602 with the real node's message, also at latest 0
  const outOfRange = (n: number) => `block number ${n} is out of range, and now latest block number is 0`
  await fails(a, 'block_getBlockByNumber', [1, true], -32602, outOfRange(1))
  await fails(a, 'block_getBlocksWithLimit', [{ from: 1, to: 1 }], -32602, outOfRange(1))
  await fails(a, 'block_getAvgGenerateTimeByBlockNumber', [{ from: 1, to: 1 }], -32602, outOfRange(1))
  await fails(a, 'block_getBatchBlocksByNumber', [{ numbers: [2] }], -32602, outOfRange(2))
  // bounds are read in order, so `from` past the head answers before `to: latest`
  await fails(a, 'block_getBlocks', [{ from: 1, to: 'latest' }], -32602, outOfRange(1))
  await fails(a, 'block_getBlockByHash', [UNKNOWN_HASH], -32001, `Not found block hash ${UNKNOWN_HASH}`)
  assert.equal(await ok(a, 'block_getBatchBlocksByHash', [{ hashes: [UNKNOWN_HASH] }]), [])
  assert.equal(await ok(a, 'block_getBatchBlocksByNumber', [{ numbers: [] }]), [])
  assert.equal(await ok(a, 'block_getBlocksByTime', [{ startTime: 0, endTime: 9_000_000_000_000_000_000n }]), {
    sumOfBlocks: '0x0',
    startBlock: null,
    endBlock: null,
  })
})

test('building node A: bursts, a deployment, a block of only discarded transactions', async () => {
  const record = async (hashes: string[]): Promise<number> => {
    const numbers = await Promise.all(
      hashes.map(async (hash) => Number((await ok<WireTx>(a, 'tx_getTransactionByHash', [hash])).blockNumber)),
    )
    assert.is(new Set(numbers).size, 1, `one block: ${numbers}`)
    const indexes = await Promise.all(hashes.map(async (hash) => Number((await ok<WireTx>(a, 'tx_getTransactionByHash', [hash])).txIndex)))
    const ordered = hashes.map((hash, i) => ({ hash, index: indexes[i] })).sort((p, q) => p.index - q.index)
    txsOf[numbers[0]] = ordered.map((entry) => entry.hash)
    return numbers[0]
  }
  assert.is(await record((await transfers(a, dev, x.address, 3, 1)).hashes), 1)
  assert.is(await record([(await commit(a, SUBMIT.transfer, dev.transfer(x.address, 2))).hash]), 2)
  assert.is(await record([(await deploy(a, dev, artifact(STORE_SOURCE, 'Store').bin)).hash]), 3)
  const poor = await send(a, SUBMIT.transfer, wallet().transfer(x.address, 1))
  assert.is(poor.reply.code, -32002)
  assert.is(await ok(a, 'block_getChainHeight'), '0x4', 'a block of one discarded transaction')
  emptyBlock = 4
  txsOf[4] = []
  assert.is(await record((await transfers(a, dev, x.address, 2, 3)).hashes), 5)
  for (let i = 0; i < 4; i++) await record([(await commit(a, SUBMIT.transfer, dev.transfer(x.address, 1))).hash])
  assert.is(await ok(a, 'block_getChainHeight'), '0x9')
  for (let number = 1; number <= 9; number++) blocks[number] = await byNumber(a, number)
})

test('block_latestBlock: the highest block with its transactions', async () => {
  const latest = await ok<WireBlock>(a, 'block_latestBlock')
  assert.equal(latest, blocks[9])
  assert.is(latest.number, '0x9')
  assert.is(latest.version, '1.3')
  assert.is(latest.txcounts, '0x1')
  assert.match(latest.hash, /^0x[0-9a-f]{64}$/)
  assert.match(latest.merkleRoot, /^0x[0-9a-f]{64}$/)
  assert.match(latest.avgTime, /^0x[0-9a-f]+$/)
  assert.is(latest.transactions?.length, 1)
  const [tx] = latest.transactions ?? []
  assert.equal(tx, await ok(a, 'tx_getTransactionByHash', [txsOf[9][0]]))
  assert.is(tx.blockHash, latest.hash)
  assert.is(tx.blockNumber, latest.number)
  const writeTime = BigInt(latest.writeTime)
  const now = BigInt(Date.now()) * 1_000_000n
  assert.ok(writeTime <= now + 1_000_000_000n && writeTime > now - 60_000_000_000n, 'writeTime is ns of now')
  assert.ok(BigInt(tx.timestamp) < writeTime, 'a tx is signed before its block is written')
})

test('the chain of blocks: parentHash links, increasing writeTime, counts, roots, transactions', async () => {
  assert.is(blocks[1].parentHash, ZERO_HASH, 'block 1 follows the empty genesis')
  for (let number = 2; number <= 9; number++) {
    assert.is(blocks[number].parentHash, blocks[number - 1].hash, `block ${number} links to ${number - 1}`)
    assert.ok(BigInt(blocks[number].writeTime) > BigInt(blocks[number - 1].writeTime), `writeTime of ${number} increases`)
  }
  assert.is(new Set(blocks.slice(1).map((block) => block.hash)).size, 9, 'distinct hashes')
  for (let number = 1; number <= 9; number++) {
    const block = blocks[number]
    assert.is(block.number, `0x${number.toString(16)}`)
    assert.is(block.txcounts, `0x${txsOf[number].length.toString(16)}`)
    if (txsOf[number].length === 0) assert.not.ok('transactions' in block, `block ${number} has no transactions key`)
    else
      assert.equal(
        block.transactions?.map((tx) => tx.hash),
        txsOf[number],
        `transactions of ${number}, in index order`,
      )
    for (const [i, tx] of (block.transactions ?? []).entries()) {
      assert.is(tx.txIndex, `0x${i.toString(16)}`)
      assert.is(tx.blockHash, block.hash)
    }
  }
  assert.is(blocks[1].txcounts, '0x3')
  assert.is(blocks[5].txcounts, '0x2')
  // state roots: a transfer changes the state; a block of discarded transactions does not
  assert.is.not(blocks[2].merkleRoot, blocks[1].merkleRoot)
  assert.is.not(blocks[3].merkleRoot, blocks[2].merkleRoot)
  assert.is(blocks[emptyBlock].merkleRoot, blocks[emptyBlock - 1].merkleRoot, 'nothing changed in the block of discarded txs')
  assert.is(blocks[emptyBlock].txcounts, '0x0')
})

test('block_getBlockByNumber / ByHash: isPlain, number forms, unknown and bad input', async () => {
  for (const number of [5, '5', '0x5', 5n]) assert.equal(await byNumber(a, number), blocks[5], String(number))
  assert.equal(await byNumber(a, 5, false), blocks[5])
  assert.equal(await byNumber(a, 5, true), plain(blocks[5]))
  assert.not.ok('transactions' in (await byNumber(a, 5, true)))
  assert.equal(await byNumber(a, 'latest', true), plain(blocks[9]))

  assert.equal(await ok(a, 'block_getBlockByHash', [blocks[5].hash]), blocks[5], 'isPlain defaults to false')
  assert.equal(await ok(a, 'block_getBlockByHash', [blocks[5].hash, false]), blocks[5])
  assert.equal(await ok(a, 'block_getBlockByHash', [blocks[5].hash, true]), plain(blocks[5]))
  assert.equal(await ok(a, 'block_getBlockByHash', [blocks[5].hash.toUpperCase().replace('0X', '0x'), true]), plain(blocks[5]))
  assert.equal(await ok(a, 'block_getBlockByHash', [blocks[emptyBlock].hash, false]), blocks[emptyBlock])

  await fails(a, 'block_getBlockByHash', [UNKNOWN_HASH, true], -32001, `Not found block hash ${UNKNOWN_HASH}`)
  await fails(a, 'block_getBlockByHash', [blocks[5].hash.slice(2)], -32602)
  await fails(a, 'block_getBlockByHash', ['0x1234'], -32602)
  await fails(a, 'block_getBlockByNumber', [10], -32602, 'block number 10 is out of range, and now latest block number is 9')
  await fails(a, 'block_getBlockByNumber', ['0xa'], -32602, 'block number 0xa is out of range, and now latest block number is 9')
  await fails(a, 'block_getBlockByNumber', [0], -32602, "block number can't be negative or zero, but get 0")
  await fails(a, 'block_getBlockByNumber', ['0x0'], -32602, "block number can't be negative or zero, but get 0x0")
  await fails(a, 'block_getBlockByNumber', [-1], -32602)
  await fails(a, 'block_getBlockByNumber', ['next'], -32602)
  await fails(a, 'block_getBlockByNumber', [1, 'yes'], -32602)
})

test('block_getBlocks: newest first, isPlain, forms and range errors', async () => {
  const all = await ok<WireBlock[]>(a, 'block_getBlocks', [{ from: 1, to: 9 }])
  assert.equal(numbersOf(all), [9, 8, 7, 6, 5, 4, 3, 2, 1])
  assert.equal(all, blocks.slice(1).reverse())
  const bare = await ok<WireBlock[]>(a, 'block_getBlocks', [{ from: '0x2', to: '5', isPlain: true }])
  assert.equal(
    bare,
    [5, 4, 3, 2].map((number) => plain(blocks[number])),
  )
  assert.equal(await ok(a, 'block_getBlocks', [{ from: 'latest', to: 'latest' }]), [blocks[9]])
  assert.equal(await ok(a, 'block_getBlocks', [{ from: 3, to: 3, isPlain: false }]), [blocks[3]])
  await fails(a, 'block_getBlocks', [{ from: 5, to: 4 }], -32602, 'invalid params, from = 5, to = 4')
  await fails(a, 'block_getBlocks', [{ from: 0, to: 4 }], -32602, 'invalid params, from = 0, to = 4')
  await fails(a, 'block_getBlocks', [{ from: 'latest', to: 1 }], -32602, 'invalid params, from = 9, to = 1')
  await fails(a, 'block_getBlocks', [{ from: 1, to: 12 }], -32602, 'block number 12 is out of range, and now latest block number is 9')
  await fails(
    a,
    'block_getBlocks',
    [{ from: '0x10', to: 'latest' }],
    -32602,
    'block number 0x10 is out of range, and now latest block number is 9',
  )
  await fails(a, 'block_getBlocks', [{ to: 4 }], -32602)
})

test('block_getAvgGenerateTimeByBlockNumber: (writeTime(to) - writeTime(from)) / (to - from) in ms', async () => {
  const expected = (from: number, to: number): string =>
    `0x${((BigInt(blocks[to].writeTime) - BigInt(blocks[from].writeTime)) / BigInt(to - from) / 1_000_000n).toString(16)}`
  assert.is(await ok(a, 'block_getAvgGenerateTimeByBlockNumber', [{ from: 1, to: 9 }]), expected(1, 9))
  assert.is(await ok(a, 'block_getAvgGenerateTimeByBlockNumber', [{ from: '0x2', to: 'latest' }]), expected(2, 9))
  assert.is(await ok(a, 'block_getAvgGenerateTimeByBlockNumber', [{ from: 4, to: 5 }]), expected(4, 5))
  assert.ok(Number(expected(1, 9)) >= 250, `blocks 300 ms apart or more: ${expected(1, 9)}`)
  assert.is(await ok(a, 'block_getAvgGenerateTimeByBlockNumber', [{ from: 3, to: 3 }]), '0x0')
  await fails(a, 'block_getAvgGenerateTimeByBlockNumber', [{ from: 3, to: 2 }], -32602, 'invalid params, from = 3, to = 2')
  await fails(
    a,
    'block_getAvgGenerateTimeByBlockNumber',
    [{ from: 1, to: 99 }],
    -32602,
    'block number 99 is out of range, and now latest block number is 9',
  )
})

test('block_getBlocksByTime: counts the blocks in a window; an empty window', async () => {
  const t = (number: number): bigint => BigInt(blocks[number].writeTime)
  assert.equal(await ok(a, 'block_getBlocksByTime', [{ startTime: t(1), endTime: t(3) }]), {
    sumOfBlocks: '0x3',
    startBlock: '0x1',
    endBlock: '0x3',
  })
  assert.equal(await ok(a, 'block_getBlocksByTime', [{ startTime: t(4), endTime: t(4) }]), {
    sumOfBlocks: '0x1',
    startBlock: '0x4',
    endBlock: '0x4',
  })
  assert.equal(await ok(a, 'block_getBlocksByTime', [{ startTime: t(2) - 1n, endTime: t(9) + 1n }]), {
    sumOfBlocks: '0x8',
    startBlock: '0x2',
    endBlock: '0x9',
  })
  assert.equal(await ok(a, 'block_getBlocksByTime', [{ startTime: t(1) + 1n, endTime: t(2) - 1n }]), {
    sumOfBlocks: '0x0',
    startBlock: null,
    endBlock: null,
  })
  assert.equal(await ok(a, 'block_getBlocksByTime', [{ startTime: 1, endTime: 2 }]), {
    sumOfBlocks: '0x0',
    startBlock: null,
    endBlock: null,
  })
  await fails(
    a,
    'block_getBlocksByTime',
    [{ startTime: t(3), endTime: t(1) }],
    -32602,
    'invalid params, both startTime and endTime must be positive, startTime must be less than endTime',
  )
  await fails(a, 'block_getBlocksByTime', [{ startTime: -5, endTime: t(1) }], -32602)
})

test('block_getGenesisBlock and block_getChainHeight', async () => {
  assert.is(await ok(a, 'block_getGenesisBlock'), '0x1')
  assert.is(await ok(a, 'block_getChainHeight'), '0x9')
})

test('block_getBatchBlocksByHash: request order, unknown skipped, `hashs`, isPlain, cap', async () => {
  const hashes = [blocks[3].hash, UNKNOWN_HASH, blocks[1].hash, blocks[3].hash]
  assert.equal(await ok(a, 'block_getBatchBlocksByHash', [{ hashes }]), [blocks[3], blocks[1], blocks[3]])
  assert.equal(await ok(a, 'block_getBatchBlocksByHash', [{ hashs: hashes, isPlain: true }]), [
    plain(blocks[3]),
    plain(blocks[1]),
    plain(blocks[3]),
  ])
  assert.equal(await ok(a, 'block_getBatchBlocksByHash', [{ hashes: [] }]), [])
  const many = Array.from({ length: 101 }, () => blocks[1].hash)
  await fails(a, 'block_getBatchBlocksByHash', [{ hashes: many }], -32602, 'too many items: at most 100 per call, got 101')
  assert.is((await ok<WireBlock[]>(a, 'block_getBatchBlocksByHash', [{ hashes: many.slice(1), isPlain: true }])).length, 100)
  await fails(a, 'block_getBatchBlocksByHash', [{ hashes: ['0xabc'] }], -32602)
})

test('block_getBatchBlocksByNumber: request order, repeats, forms; a bad number fails with its message', async () => {
  assert.equal(await ok(a, 'block_getBatchBlocksByNumber', [{ numbers: [5, '0x1', 'latest', '5'] }]), [
    blocks[5],
    blocks[1],
    blocks[9],
    blocks[5],
  ])
  assert.equal(await ok(a, 'block_getBatchBlocksByNumber', [{ numbers: [2, 4], isPlain: true }]), [plain(blocks[2]), plain(blocks[4])])
  await fails(
    a,
    'block_getBatchBlocksByNumber',
    [{ numbers: [1, 10] }],
    -32602,
    'block number 10 is out of range, and now latest block number is 9',
  )
  await fails(a, 'block_getBatchBlocksByNumber', [{ numbers: [0, 1] }], -32602, "block number can't be negative or zero, but get 0")
  await fails(
    a,
    'block_getBatchBlocksByNumber',
    [{ numbers: ['0x63'] }],
    -32602,
    'block number 0x63 is out of range, and now latest block number is 9',
  )
  await fails(a, 'block_getBatchBlocksByNumber', [{ numbers: [-1] }], -32602)
  const many = Array.from({ length: 101 }, () => 1)
  await fails(a, 'block_getBatchBlocksByNumber', [{ numbers: many }], -32602, 'too many items: at most 100 per call, got 101')
  assert.is((await ok<WireBlock[]>(a, 'block_getBatchBlocksByNumber', [{ numbers: many.slice(1), isPlain: true }])).length, 100)
})

interface Page {
  hasmore: boolean
  data: WireBlock[]
}

test('block_getBlocksWithLimit: pages forward and backward with a bookmark', async () => {
  const first = await ok<Page>(a, 'block_getBlocksWithLimit', [{ from: 1, to: 'latest', metadata: { pageSize: 4 } }])
  assert.equal(first, { hasmore: true, data: [1, 2, 3, 4].map((n) => blocks[n]) })
  const second = await ok<Page>(a, 'block_getBlocksWithLimit', [
    { from: 1, to: 'latest', metadata: { pageSize: 4, bookmark: { blkNum: 4 } } },
  ])
  assert.equal(numbersOf(second.data), [5, 6, 7, 8])
  assert.is(second.hasmore, true)
  const third = await ok<Page>(a, 'block_getBlocksWithLimit', [
    { from: 1, to: 'latest', isPlain: true, metadata: { pageSize: 4, bookmark: { blkNum: '0x8' } } },
  ])
  assert.equal(third, { hasmore: false, data: [plain(blocks[9])] })

  const back = await ok<Page>(a, 'block_getBlocksWithLimit', [{ from: 2, to: 9, metadata: { pageSize: 3, backward: true } }])
  assert.equal(numbersOf(back.data), [9, 8, 7])
  assert.is(back.hasmore, true)
  const back2 = await ok<Page>(a, 'block_getBlocksWithLimit', [
    { from: 2, to: 9, metadata: { pageSize: 3, backward: true, bookmark: { blkNum: 4 } } },
  ])
  assert.equal(back2, { hasmore: false, data: [blocks[3], blocks[2]] })

  const whole = await ok<Page>(a, 'block_getBlocksWithLimit', [{ from: 1, to: 9 }])
  assert.equal(numbersOf(whole.data), [1, 2, 3, 4, 5, 6, 7, 8, 9], 'pageSize defaults to 10')
  assert.is(whole.hasmore, false)
  await fails(a, 'block_getBlocksWithLimit', [{ from: 3, to: 2 }], -32602, 'invalid params, from = 3, to = 2')
  await fails(a, 'block_getBlocksWithLimit', [{ from: 1, to: 2, metadata: { pageSize: 0 } }], -32602)
})

test('node B: 105 blocks; the 100-block cap, long pages and parent links', async () => {
  const { blocks: numbers } = await transfers(b, devB, x.address, 105, 1)
  assert.is(new Set(numbers).size, 105)
  assert.is(await ok(b, 'block_getChainHeight'), '0x69')
  const cap = (n: number) => `range too large: at most 100 blocks per call, asked for ${n}`
  await fails(b, 'block_getBlocks', [{ from: 1, to: 101 }], -32602, cap(101))
  await fails(b, 'block_getBlocks', [{ from: '0x1', to: 'latest', isPlain: true }], -32602, cap(105))
  await fails(b, 'block_getBlocksWithLimit', [{ from: 1, to: 'latest' }], -32602, cap(105))

  const hundred = await ok<WireBlock[]>(b, 'block_getBlocks', [{ from: 6, to: 'latest', isPlain: true }])
  assert.equal(
    numbersOf(hundred),
    Array.from({ length: 100 }, (_, i) => 105 - i),
  )
  const rest = await ok<WireBlock[]>(b, 'block_getBlocks', [{ from: 1, to: 6, isPlain: true }])
  const chain = [...hundred, ...rest.slice(1)]
  for (let i = 0; i < chain.length - 1; i++) assert.is(chain[i].parentHash, chain[i + 1].hash, `parent of ${chain[i].number}`)
  assert.is(chain[chain.length - 1].parentHash, ZERO_HASH)

  const page = await ok<Page>(b, 'block_getBlocksWithLimit', [{ from: 1, to: 100, isPlain: true, metadata: { pageSize: 1000 } }])
  assert.is(page.data.length, 100, 'pageSize above 100 counts as 100')
  assert.is(page.hasmore, false)
  const page99 = await ok<Page>(b, 'block_getBlocksWithLimit', [{ from: 1, to: 100, isPlain: true, metadata: { pageSize: 99 } }])
  assert.is(page99.hasmore, true)

  // the average has no block cap
  const t1 = BigInt((await byNumber(b, 1, true)).writeTime)
  const t105 = BigInt((await byNumber(b, 105, true)).writeTime)
  assert.is(
    await ok(b, 'block_getAvgGenerateTimeByBlockNumber', [{ from: 1, to: 105 }]),
    `0x${((t105 - t1) / 104n / 1_000_000n).toString(16)}`,
  )
  assert.equal(await ok(b, 'block_getBlocksByTime', [{ startTime: t1, endTime: t105 }]), {
    sumOfBlocks: '0x69',
    startBlock: '0x1',
    endBlock: '0x69',
  })
})

test('read-your-writes: once a receipt is visible, its block and the height are visible too', async () => {
  // a client that polled a receipt then asks for the block of that transaction must find it
  const violations: string[] = []
  for (let i = 0; i < 100; i++) {
    const hash = await submit(b, SUBMIT.transfer, devB.transfer(x.address, 1))
    assert.is((await receiptOf(b, hash)).code, 0)
    const tx = await ok<WireTx>(b, 'tx_getTransactionByHash', [hash])
    const [heightReply, blockReply] = await Promise.all([
      call<string>(b, 'block_getChainHeight'),
      call<WireBlock>(b, 'block_getBlockByNumber', [tx.blockNumber, true]),
    ])
    if (heightReply.result !== tx.blockNumber || blockReply.code !== 0) {
      violations.push(
        `receipt of ${hash} in block ${tx.blockNumber}, then block_getChainHeight → ${heightReply.result ?? heightReply.message}, ` +
          `block_getBlockByNumber(${tx.blockNumber}) → ${blockReply.code} ${blockReply.message}`,
      )
    }
  }
  assert.equal(violations.slice(0, 3), [], `${violations.length} of 100 receipts were visible before their block`)
})

test("a full block over 8 KiB leaves as its kept bytes between the envelope's pieces: the same answer, an exact length", async () => {
  const { hashes, blocks: numbers } = await transfers(a, dev, x.address, 30, 1, { sameBlock: true })
  const number = numbers[0]
  assert.ok(
    numbers.every((n) => n === number),
    'one block',
  )
  for (let round = 0; round < 2; round++) {
    // the first reply makes the kept answer, the second writes its kept bytes
    const reply = await post(a, envelope('block_getBlockByNumber', [number, false], { id: 7 }))
    const length = Buffer.byteLength(reply.text)
    assert.is(Number(reply.headers['content-length']), length, "content-length is the body's byte length")
    assert.ok(length > 10 * 1024, `a reply above the 8 KiB threshold with room to spare (${length} bytes)`)
    assert.ok(reply.text.endsWith('}\n'), 'ends with a newline, as every reply')
    const body = reply.body as { id: number; code: number; result: WireBlock }
    assert.is(body.id, 7)
    assert.is(body.code, 0)
    assert.equal(body.result.transactions?.map((tx) => tx.hash).sort(), [...hashes].sort())
    assert.equal(plain(body.result), await byNumber(a, number, true), "the block itself is the plain answer's")
    for (const tx of body.result.transactions ?? []) assert.equal(tx, await ok<WireTx>(a, 'tx_getTransactionByHash', [tx.hash]))
  }
})

test.run()
