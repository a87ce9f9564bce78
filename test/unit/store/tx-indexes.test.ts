/**
 * Keyspaces 30–33 (src/store/repos/tx-indexes.ts): written with their block, walked in chain order
 * both ways, moved out and back with an archived block, and built at open for a store written
 * before they existed.
 */
import { rmSync } from 'node:fs'
import { open } from 'lmdb'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { addressKey, extraIdKey, type IndexedTx, openStore, type Store, type TxIndexName } from '../../../src/store/index.ts'
import { Keyspace } from '../../../src/store/keyspace.ts'
import { addr, commitNext, makeTx, tempDir } from './fixtures.ts'

const dir = tempDir('txindexes')
let store: Store
const alice = addr('alice')
const contract = addr('contract')
const ZERO = `0x${'00'.repeat(20)}`

// block 1: alice pays bob [7, "x"], alice deploys `contract`; one invalid tx to the contract
// block 2: carol calls the contract [7]; alice pays bob again
// block 3: alice calls the contract with a long string id; an invalid deployment
const long = 'y'.repeat(300)
const txs = {
  pay1: makeTx('pay1', { from: alice, to: addr('bob'), signed: { extraIdInt64: [7n], extraIdString: ['x'] } }),
  deploy: makeTx('deploy', { from: alice, to: null, kind: 'deploy' }),
  badCall: makeTx('badCall', { from: addr('mallory'), to: contract }),
  call: makeTx('call', { from: addr('carol'), to: contract, signed: { extraIdInt64: [7, 7] } }),
  pay2: makeTx('pay2', { from: alice, to: addr('bob') }),
  longCall: makeTx('longCall', { from: alice, to: contract, signed: { extraIdString: [long] } }),
  badDeploy: makeTx('badDeploy', { from: alice, to: null, kind: 'deploy' }),
}

const walk = (index: TxIndexName, prefix: Buffer, from = 1, to = 99, backward = false): string[] =>
  [...store.scanTxIndex(index, prefix, from, to, backward)].map(
    (found: IndexedTx) => `${found.block}:${found.index}:${found.hash.slice(0, 8)}`,
  )
const at = (block: number, index: number, tx: { hash: string }): string => `${block}:${index}:${tx.hash.slice(0, 8)}`

async function build(): Promise<void> {
  await commitNext(store, { valid: [txs.pay1, txs.deploy], invalid: [txs.badCall], contractAddress: { 1: contract } })
  await commitNext(store, { valid: [txs.call, txs.pay2] })
  await commitNext(store, { valid: [txs.longCall], invalid: [txs.badDeploy] })
}

test.before(async () => {
  store = await openStore(dir)
  await store.initGenesis([{ address: alice, balance: 1n }])
  await build()
})

test.after(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

test('by sender, in chain order and reversed, within a block range', () => {
  const key = addressKey(alice)!
  assert.equal(walk('from', key), [at(1, 0, txs.pay1), at(1, 1, txs.deploy), at(2, 1, txs.pay2), at(3, 0, txs.longCall)])
  assert.equal(walk('from', key, 1, 99, true), [at(3, 0, txs.longCall), at(2, 1, txs.pay2), at(1, 1, txs.deploy), at(1, 0, txs.pay1)])
  assert.equal(walk('from', key, 2, 2), [at(2, 1, txs.pay2)])
  assert.equal(walk('from', addressKey(addr('nobody'))!), [])
})

test('by receiver: a deployment counts for the contract it created, not the zero address', () => {
  assert.equal(walk('receiver', addressKey(contract)!), [at(1, 1, txs.deploy), at(2, 0, txs.call), at(3, 0, txs.longCall)])
  assert.equal(walk('receiver', addressKey(ZERO)!), [])
})

test('by extra id: integers and strings apart, a repeated id once, a long string by its hash', () => {
  assert.equal(walk('extraId', extraIdKey(7n)), [at(1, 0, txs.pay1), at(2, 0, txs.call)])
  assert.equal(walk('extraId', extraIdKey('x')), [at(1, 0, txs.pay1)])
  assert.equal(walk('extraId', extraIdKey('7')), [], 'the string "7" is not the integer 7')
  assert.equal(walk('extraId', extraIdKey(long)), [at(3, 0, txs.longCall)])
  assert.equal(walk('extraId', extraIdKey(-7n)), [])
})

test("invalid transactions by `to`: index among the block's invalid ones; a deployment under the zero address", () => {
  assert.equal(walk('invalidTo', addressKey(contract)!), [at(1, 0, txs.badCall)])
  assert.equal(walk('invalidTo', addressKey(ZERO)!), [at(3, 0, txs.badDeploy)])
})

test('an archived block takes its entries with it; restoring brings them back', async () => {
  const entries = store.blockEntries(1)
  const indexed = entries.entries.filter((entry) => entry.space >= Keyspace.txsByFrom && entry.space <= Keyspace.invalidTxsByTo)
  assert.is(indexed.length, 2 + 2 + 2 + 1, 'sender ×2, receiver ×2 (bob, the contract), extra id ×2, invalid to ×1')
  const range = { snapshotId: `0x${'cd'.repeat(16)}`, from: 1, to: 1 }
  await store.startArchive(range)
  await store.removeArchived([entries])
  await store.finishArchiveOp()
  assert.equal(walk('from', addressKey(alice)!), [at(2, 1, txs.pay2), at(3, 0, txs.longCall)])
  assert.equal(walk('invalidTo', addressKey(contract)!), [])
  await store.startRestore(range)
  await store.putRestored([entries])
  await store.finishArchiveOp()
  assert.is(store.genesisNumber(), 1)
  assert.equal(walk('extraId', extraIdKey(7n)), [at(1, 0, txs.pay1), at(2, 0, txs.call)])
  assert.equal(walk('invalidTo', addressKey(contract)!), [at(1, 0, txs.badCall)])
})

test('a store written before the indexes existed is indexed at open', async () => {
  await store.close()
  // what a store of an earlier build looks like: no index entries, no marker
  const env = open({ path: dir, maxDbs: 64 })
  for (const space of [Keyspace.txsByFrom, Keyspace.txsByReceiver, Keyspace.txsByExtraId, Keyspace.invalidTxsByTo])
    await env.openDB({ name: String(space), keyEncoding: 'binary', encoding: 'binary' }).clearAsync()
  await env.openDB({ name: String(Keyspace.meta), keyEncoding: 'ordered-binary' }).remove('txIndexes')
  await env.close()
  store = await openStore(dir)
  assert.equal(walk('receiver', addressKey(contract)!), [at(1, 1, txs.deploy), at(2, 0, txs.call), at(3, 0, txs.longCall)])
  assert.equal(walk('extraId', extraIdKey(long)), [at(3, 0, txs.longCall)])
  assert.equal(walk('invalidTo', addressKey(ZERO)!), [at(3, 0, txs.badDeploy)])
})

test.run()
