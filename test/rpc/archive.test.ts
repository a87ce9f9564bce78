/**
 * archive_ handlers and archive events against a real node (openrpc.json, protocol.md §5): one
 * block per transaction, blocks from real signed transfers, a contract deployment and call with a
 * log, and a discarded transaction. Snapshots now and at a future height, archive, every archived
 * query's answer, restore and restoreAll reading back byte for byte, deletion, errors.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import {
  type CallOptions,
  call as callAs,
  commit,
  fails as failsAs,
  ok as okAs,
  SUBMIT,
  send,
  sleep,
  type WireBlock,
  type WireTx,
} from '../helpers/chain.ts'
import { envelope, post, startTestNode } from '../helpers/node.ts'
import { PING_SELECTOR, SAMPLE_CONTRACT } from '../helpers/sample-chain.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

const ARCHIVE_ERROR = -32013
const NOT_EXISTED = 'manifest not existed'
const UNKNOWN_ID = `0x${'00'.repeat(16)}`

interface Manifest {
  height: number
  genesis: number
  hash: string
  filterId: string
  merkleRoot: string
  date: string
  namespace: string
}

interface ArchiveEvent {
  type: string
  filterId: string
  success: boolean
  message: string
}

let node: KeelNode
let url: string
let dev: Wallet
let subscription: string
/** tx hashes (valid and discarded) by block number */
const txsOf = new Map<number, string[]>()
let firstId: string
let secondId: string
let firstHeight: number
let secondHeight: number
/** a transfer committed in block 3, kept to resubmit once archived */
let resent: { hash: string; params: Record<string, unknown> }

/** the archive_ methods that change the node: operator methods, signed here by the genesis account (the admin) */
const OPERATOR_METHODS = new Set(['archive_snapshot', 'archive_deleteSnapshot', 'archive_archive', 'archive_restore', 'archive_restoreAll'])
const asAdmin = (method: string): CallOptions => (OPERATOR_METHODS.has(method) ? { operator: dev.privateKey } : {})
const call = <T = unknown>(url: string, method: string, params: unknown[] = []) => callAs<T>(url, method, params, asAdmin(method))
const ok = <T = unknown>(url: string, method: string, params: unknown[] = []) => okAs<T>(url, method, params, asAdmin(method))
const fails = (url: string, method: string, params: unknown[], code: number, message?: string | RegExp) =>
  failsAs(url, method, params, code, message, asAdmin(method))
const hex = (n: number): string => `0x${n.toString(16)}`
const raw = async (method: string, params: unknown[]): Promise<string> => (await post(url, envelope(method, params))).text
const snapshotFile = (id: string): string => join(node.config.node.dataDir, 'global', 'snapshots', `${id}.snap`)
const archiveFile = (id: string): string => join(node.config.node.dataDir, 'global', 'archive', `${id}.arc`)
const events = (): Promise<ArchiveEvent[]> => ok<ArchiveEvent[]>(url, 'sub_getSubscriptionChanges', [subscription])

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

const chainHeight = async (): Promise<number> => Number(await ok<string>(url, 'block_getChainHeight'))

/** One block: commits a transfer (or the given submission) and records its hash under the new block. */
async function block(method: string = SUBMIT.transfer, tx: Record<string, unknown> = dev.transfer(wallet().address, 1)): Promise<string> {
  const { hash } = await send(url, method, tx)
  const number = await chainHeight()
  txsOf.set(number, [...(txsOf.get(number) ?? []), hash])
  return hash
}

/** Every reply a client can get about blocks 1..height and their transactions, as raw text. */
async function capture(): Promise<Map<string, string>> {
  const replies = new Map<string, string>()
  const height = await chainHeight()
  for (let n = 1; n <= height; n++) {
    const text = await raw('block_getBlockByNumber', [n])
    replies.set(`block ${n}`, text)
    const found = (await call<WireBlock>(url, 'block_getBlockByNumber', [n])).result!
    replies.set(`block hash ${n}`, await raw('block_getBlockByHash', [found.hash]))
    for (const hash of txsOf.get(n) ?? []) {
      replies.set(`tx ${hash}`, await raw('tx_getTransactionByHash', [hash]))
      replies.set(`receipt ${hash}`, await raw('tx_getTransactionReceipt', [hash]))
    }
  }
  return replies
}

test.before(async () => {
  node = await startTestNode({ chain: { batchSize: 1, batchTimeoutMs: 1 }, archive: { batchBlocks: 2 } }, { verifyWorkers: 1 })
  url = node.url
  dev = wallet(node.devAccount?.privateKey)
})

test.after(async () => {
  await node?.stop()
})

test('operator methods: unsigned, or signed by a key that is no admin, each is refused with -32008 and changes nothing', async () => {
  const stranger = wallet()
  const calls: [string, unknown[]][] = [
    ['archive_snapshot', [0]],
    ['archive_deleteSnapshot', [UNKNOWN_ID]],
    ['archive_archive', [UNKNOWN_ID, true]],
    ['archive_restore', [UNKNOWN_ID, false]],
    ['archive_restoreAll', [true]],
  ]
  for (const [method, params] of calls) {
    await failsAs(url, method, params, -32008, new RegExp(`^${method} is an operator method`))
    await failsAs(url, method, params, -32008, /is not one \(account_getAccountsByRole/, { operator: stranger.privateKey })
  }
})

test('before any block: nothing to snapshot, unknown ids, restoreAll with nothing archived', async () => {
  await fails(url, 'archive_snapshot', [0], ARCHIVE_ERROR, 'there is no block yet: snapshot a block once one is written')
  for (const method of ['archive_readSnapshot', 'archive_deleteSnapshot', 'archive_checkSnapshot', 'archive_queryArchiveExist'])
    await fails(url, method, [UNKNOWN_ID], ARCHIVE_ERROR, NOT_EXISTED)
  await fails(url, 'archive_archive', [UNKNOWN_ID, true], ARCHIVE_ERROR, NOT_EXISTED)
  await fails(url, 'archive_restore', [UNKNOWN_ID, false], ARCHIVE_ERROR, NOT_EXISTED)
  assert.is(await ok(url, 'archive_querySnapshotExist', [UNKNOWN_ID]), false)
  assert.equal(await ok(url, 'archive_listSnapshot'), [])
  assert.is(await ok(url, 'archive_restoreAll', [true]), true)
  subscription = await ok<string>(url, 'sub_newArchiveSubscription')
  assert.match(subscription, /^0x[0-9a-f]{32}$/)
})

test('snapshot now and at a future height: manifests, list, check', async () => {
  const deployed = await commit(url, SUBMIT.deploy, dev.deploy(SAMPLE_CONTRACT))
  txsOf.set(await chainHeight(), [deployed.hash])
  await block(SUBMIT.invoke, dev.invoke(deployed.contractAddress, PING_SELECTOR))
  const params = dev.transfer(wallet().address, 2)
  resent = { hash: await block(SUBMIT.transfer, params), params }
  // discarded: the sender has no balance; its record belongs to the block it was executed in
  await block(SUBMIT.transfer, wallet().transfer(dev.address, 5))
  await block()
  firstHeight = await chainHeight()
  assert.ok(firstHeight >= 4, `height ${firstHeight}`)

  // unsigned, the same snapshot request is refused and makes nothing
  await failsAs(url, 'archive_snapshot', [0], -32008, /operator-signature/)
  assert.equal(await ok(url, 'archive_listSnapshot'), [], 'the refused request made no snapshot')
  firstId = await ok<string>(url, 'archive_snapshot', [0])
  assert.match(firstId, /^0x[0-9a-f]{32}$/)
  await fails(url, 'archive_snapshot', [0], ARCHIVE_ERROR, 'duplicate snapshot requirement for same height')
  await fails(url, 'archive_snapshot', [firstHeight], ARCHIVE_ERROR, 'duplicate snapshot requirement for same height')
  await fails(url, 'archive_snapshot', [2], ARCHIVE_ERROR, 'trigger block number is less than chain height')
  secondHeight = firstHeight + 3
  secondId = await ok<string>(url, 'archive_snapshot', [secondHeight])
  await fails(url, 'archive_snapshot', [secondHeight], ARCHIVE_ERROR, 'duplicate snapshot requirement for same height')
  await until('the first snapshot', () => ok<boolean>(url, 'archive_querySnapshotExist', [firstId]))
  assert.is(await ok(url, 'archive_querySnapshotExist', [secondId]), false, 'the future snapshot waits for its block')
  await fails(
    url,
    'archive_readSnapshot',
    [secondId],
    ARCHIVE_ERROR,
    `snapshot ${secondId} is not made yet: it waits for block ${secondHeight} (chain height ${firstHeight})`,
  )

  const first = await ok<Manifest>(url, 'archive_readSnapshot', [firstId])
  const firstBlock = await ok<WireBlock>(url, 'block_getBlockByNumber', [firstHeight, true])
  assert.equal(
    { ...first, date: '' },
    {
      height: firstHeight,
      genesis: 1,
      hash: firstBlock.hash,
      filterId: firstId,
      merkleRoot: firstBlock.merkleRoot,
      date: '',
      namespace: 'global',
    },
  )
  assert.match(first.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)

  for (let i = 0; i < 3; i++) await block()
  await until('the second snapshot', () => ok<boolean>(url, 'archive_querySnapshotExist', [secondId]))
  const second = await ok<Manifest>(url, 'archive_readSnapshot', [secondId])
  const secondBlock = await ok<WireBlock>(url, 'block_getBlockByNumber', [secondHeight, true])
  assert.is(second.height, secondHeight)
  assert.is(second.hash, secondBlock.hash)
  assert.is(second.merkleRoot, secondBlock.merkleRoot, 'the state of exactly that block')
  assert.is.not(second.merkleRoot, first.merkleRoot, 'the transfers in between changed the state')
  assert.equal(await ok(url, 'archive_listSnapshot'), [first, second], 'oldest first')
  assert.is(await ok(url, 'archive_checkSnapshot', [firstId]), true)
  assert.is(await ok(url, 'archive_checkSnapshot', [secondId]), true)
  assert.is(await ok(url, 'archive_queryArchiveExist', [firstId]), false)
  assert.equal(await events(), [
    { type: 'make_snapshot', filterId: firstId, success: true, message: '' },
    { type: 'make_snapshot', filterId: secondId, success: true, message: '' },
  ])
})

let before: Map<string, string>

test('archive: the blocks below the snapshot answer -32001, newer ones and new blocks are unaffected', async () => {
  before = await capture()
  const height = await chainHeight()
  const statusId = await ok<string>(url, 'sub_newSystemStatusSubscription', [{ modules: ['archive'] }])
  assert.is(await ok(url, 'archive_archive', [firstId, true]), true)
  // progress: one archive/progress status per batch of 2 blocks, the last one counting every archived block
  const statuses = await ok<{ module: string; subType: string; status: boolean; message: string }[]>(url, 'sub_getSubscriptionChanges', [
    statusId,
  ])
  assert.ok(statuses.length >= 2, `progress events: ${JSON.stringify(statuses)}`)
  assert.ok(statuses.every((status) => status.module === 'archive' && status.subType === 'progress' && status.status))
  assert.match(statuses.at(-1)!.message, new RegExp(`: ${firstHeight - 1} of ${firstHeight - 1} blocks \\(\\d+ transactions\\)`))
  assert.is(await ok(url, 'archive_queryArchiveExist', [firstId]), true)
  assert.is(await ok(url, 'archive_queryArchiveExist', [secondId]), false)
  assert.is(await ok(url, 'block_getGenesisBlock'), hex(firstHeight))
  assert.is(await chainHeight(), height, 'the chain height does not move')
  assert.equal(await events(), [{ type: 'do_archive', filterId: firstId, success: true, message: '' }])

  for (let n = 1; n < firstHeight; n++) {
    const notFound = `Not found block number ${hex(n)}`
    await fails(url, 'block_getBlockByNumber', [n], -32001, notFound)
    await fails(url, 'block_getBatchBlocksByNumber', [{ numbers: [n] }], -32001, notFound)
    await fails(url, 'tx_getBlockTransactionCountByNumber', [hex(n)], -32001, notFound)
    await fails(url, 'tx_getTransactionByBlockNumberAndIndex', [n, 0], -32001, notFound)
    await fails(url, 'block_getBlocks', [{ from: n, to: firstHeight }], -32001, notFound)
    await fails(url, 'tx_getTransactions', [{ from: n, to: firstHeight }], -32001, notFound)
    const hashOf = JSON.parse(before.get(`block ${n}`)!).result.hash as string
    const gone = `was archived with snapshot ${firstId}; archive_restore ${firstId} brings it back`
    await fails(url, 'block_getBlockByHash', [hashOf], -32001, `Not found block hash ${hashOf}: block ${hex(n)} ${gone}`)
    await fails(url, 'tx_getBlockTransactionCountByHash', [hashOf], -32001, `Not found block hash ${hashOf}: block ${hex(n)} ${gone}`)
    for (const hash of txsOf.get(n) ?? []) {
      const where = `its block ${hex(n)} ${gone}`
      await fails(url, 'tx_getTransactionByHash', [hash], -32001, `Not found transaction ${hash}: ${where}`)
      await fails(url, 'tx_getTransactionReceipt', [hash], -32001, `Not found receipt ${hash}: ${where}`)
    }
  }
  for (let n = firstHeight; n <= height; n++) {
    assert.is(await raw('block_getBlockByNumber', [n]), before.get(`block ${n}`), `block ${n} is still live`)
    for (const hash of txsOf.get(n) ?? []) assert.is(await raw('tx_getTransactionByHash', [hash]), before.get(`tx ${hash}`))
  }
  const range = await ok<WireBlock[]>(url, 'block_getBlocks', [{ from: firstHeight, to: height }])
  assert.is(range.length, height - firstHeight + 1)
  await fails(url, SUBMIT.transfer, [resent.params], -32007, `Repeated transaction ${resent.hash}`)
  await block()
  assert.is(await chainHeight(), height + 1, 'new blocks still come')
  assert.is(await ok(url, 'archive_checkSnapshot', [firstId]), true, 'the snapshot still matches its (live) block')
})

test('archive errors: archived again, deleting an archived snapshot, restoring out of order', async () => {
  await fails(
    url,
    'archive_archive',
    [firstId, true],
    ARCHIVE_ERROR,
    `nothing to archive: snapshot ${firstId} is at block ${firstHeight}, and no live block is below it (the genesis is block ${firstHeight})`,
  )
  await fails(
    url,
    'archive_deleteSnapshot',
    [firstId],
    ARCHIVE_ERROR,
    `snapshot ${firstId} holds archived blocks 1-${firstHeight - 1}; restore them first (archive_restore)`,
  )
  await fails(url, 'archive_restore', [secondId, true], ARCHIVE_ERROR, `snapshot ${secondId} has no archived blocks to restore`)

  // the second archive runs in the background and continues where the first stopped
  assert.is(await ok(url, 'archive_archive', [secondId, false]), true)
  await until('the second archive', () => ok<boolean>(url, 'archive_queryArchiveExist', [secondId]))
  assert.is(await ok(url, 'block_getGenesisBlock'), hex(secondHeight))
  await fails(url, 'block_getBlockByNumber', [firstHeight], -32001, `Not found block number ${hex(firstHeight)}`)
  await fails(
    url,
    'archive_restore',
    [firstId, true],
    ARCHIVE_ERROR,
    `restore snapshot ${secondId} first: it archived the later blocks ${firstHeight}-${secondHeight - 1} (archive_restoreAll restores every archive)`,
  )
  assert.equal(await events(), [{ type: 'do_archive', filterId: secondId, success: true, message: '' }])
})

test('a damaged archive file fails the restore before anything moves; repaired, the restore works', async () => {
  const file = archiveFile(secondId)
  const intact = readFileSync(file)
  const damaged = Buffer.from(intact)
  damaged[damaged.length >> 1] ^= 0x01
  writeFileSync(file, damaged)
  const reply = await fails(url, 'archive_restore', [secondId, true], ARCHIVE_ERROR)
  assert.match(reply.message, `${file} is damaged`)
  assert.is(await ok(url, 'block_getGenesisBlock'), hex(secondHeight), 'nothing moved')
  assert.is(await ok(url, 'archive_queryArchiveExist', [secondId]), true)
  assert.equal(await events(), [{ type: 'do_restore', filterId: secondId, success: false, message: reply.message }])
  writeFileSync(file, intact)
})

test('restore, then restoreAll: every block, transaction and receipt reads back byte for byte', async () => {
  assert.is(await ok(url, 'archive_restore', [secondId, true]), true)
  assert.is(await ok(url, 'block_getGenesisBlock'), hex(firstHeight))
  assert.is(await ok(url, 'archive_queryArchiveExist', [secondId]), false)
  for (let n = firstHeight; n < secondHeight; n++) assert.is(await raw('block_getBlockByNumber', [n]), before.get(`block ${n}`))
  await fails(url, 'block_getBlockByNumber', [1], -32001, 'Not found block number 0x1')

  assert.is(await ok(url, 'archive_archive', [secondId, true]), true)
  assert.is(await ok(url, 'archive_restoreAll', [false]), true)
  await until('everything restored', async () => (await ok<string>(url, 'block_getGenesisBlock')) === '0x1')
  assert.is(await ok(url, 'archive_queryArchiveExist', [firstId]), false)
  const after = await capture()
  for (const [what, text] of before) assert.is(after.get(what), text, `${what} reads back as before`)
  assert.equal(await events(), [
    { type: 'do_restore', filterId: secondId, success: true, message: '' },
    { type: 'do_archive', filterId: secondId, success: true, message: '' },
    { type: 'do_restore', filterId: secondId, success: true, message: '' },
    { type: 'do_restore', filterId: firstId, success: true, message: '' },
  ])
  const tx = await ok<WireTx>(url, 'tx_getTransactionByHash', [txsOf.get(2)![0]])
  assert.is(tx.blockNumber, '0x2')
})

test('checkSnapshot is false once the snapshot file is tampered with', async () => {
  assert.is(await ok(url, 'archive_checkSnapshot', [secondId]), true)
  const file = snapshotFile(secondId)
  const bytes = readFileSync(file)
  // the last byte of the last entry's value, just before the 41-byte trailer
  bytes[bytes.length - 42] ^= 0x01
  writeFileSync(file, bytes)
  assert.is(await ok(url, 'archive_checkSnapshot', [secondId]), false)
  assert.is(await ok(url, 'archive_checkSnapshot', [firstId]), true, 'the other snapshot is intact')
})

test('deleteSnapshot: gone from every query; a pending request can be deleted too', async () => {
  assert.is(await ok(url, 'archive_deleteSnapshot', [secondId]), true)
  assert.is(await ok(url, 'archive_querySnapshotExist', [secondId]), false)
  await fails(url, 'archive_readSnapshot', [secondId], ARCHIVE_ERROR, NOT_EXISTED)
  await fails(url, 'archive_deleteSnapshot', [secondId], ARCHIVE_ERROR, NOT_EXISTED)
  assert.equal(
    (await ok<Manifest[]>(url, 'archive_listSnapshot')).map((m) => m.filterId),
    [firstId],
  )
  const pending = await ok<string>(url, 'archive_snapshot', [(await chainHeight()) + 1000])
  assert.is(await ok(url, 'archive_deleteSnapshot', [pending]), true)
  await fails(url, 'archive_readSnapshot', [pending], ARCHIVE_ERROR, NOT_EXISTED)
  assert.equal(await events(), [
    { type: 'delete_snapshot', filterId: secondId, success: true, message: '' },
    { type: 'delete_snapshot', filterId: pending, success: true, message: '' },
  ])
})

test('snapshots "now" while blocks are being written: each is the state of exactly its block', async () => {
  const submitted = Promise.all(Array.from({ length: 30 }, () => ok<string>(url, SUBMIT.transfer, [dev.transfer(wallet().address, 1)])))
  let done = false
  void submitted.finally(() => {
    done = true
  })
  const ids: string[] = []
  while (!done || ids.length === 0) {
    const reply = await call<string>(url, 'archive_snapshot', [0])
    if (reply.code === 0) ids.push(reply.result!)
    else assert.is(reply.message, 'duplicate snapshot requirement for same height')
  }
  for (const hash of await submitted)
    await until(`receipt ${hash}`, async () => (await call(url, 'tx_getTransactionReceipt', [hash])).code === 0)
  await block()
  for (const id of ids) {
    await until(`snapshot ${id}`, () => ok<boolean>(url, 'archive_querySnapshotExist', [id]))
    const manifest = await ok<Manifest>(url, 'archive_readSnapshot', [id])
    const at = await ok<WireBlock>(url, 'block_getBlockByNumber', [manifest.height, true])
    assert.is(manifest.merkleRoot, at.merkleRoot, `snapshot ${id} holds the state of block ${manifest.height}`)
    assert.is(await ok(url, 'archive_checkSnapshot', [id]), true)
  }
  const made = (await events()).filter((event) => event.type === 'make_snapshot')
  assert.equal(made.map((event) => [event.filterId, event.success]).sort(), ids.map((id) => [id, true]).sort())
})

test('param errors are -32602', async () => {
  await fails(url, 'archive_snapshot', ['latest'], -32602)
  await fails(url, 'archive_snapshot', [-1], -32602)
  await fails(url, 'archive_archive', [firstId], -32602)
  await fails(url, 'archive_querySnapshotExist', ['0xABC'], -32602)
})

test.run()
