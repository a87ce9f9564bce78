import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { ContractMeta, Hex } from '../../../src/domain.ts'
import { emptyChanges, ZERO_WORD } from '../../../src/domain.ts'
import { openEnvironment, openKeyspaces } from '../../../src/store/db.ts'
import { EMPTY_STATE_ROOT, openStore, type Store, ZERO_HASH } from '../../../src/store/index.ts'
import { addr, changes, commitNext, hexOf, makeTx, nextBlock, T0, tempDir, word } from './fixtures.ts'

const dir = tempDir('main')
let store: Store

const alice = addr('alice')
const bob = addr('bob')
const huge = 2n ** 200n + 12345n
const alloc = [
  { address: alice, balance: huge },
  { address: bob, balance: 1_000n },
]

test.before(async () => {
  store = await openStore(dir)
})

test.after(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

test("a fresh store: no block, empty state root, nothing pending (the pool log is the pool's: test/unit/chain/pool.test.ts)", () => {
  assert.is(store.height(), 0)
  assert.is(store.genesisNumber(), 0)
  assert.is(store.getBlock(1), undefined)
  assert.is(store.getBlock(0), undefined)
  assert.is(store.stateRoot(), EMPTY_STATE_ROOT)
  assert.equal(store.legacyPending(), [])
  assert.is(store.countTxs(), 0)
  assert.equal(store.blocksByTime(0n, 2n ** 63n), { count: 0 })
})

test('initGenesis writes the alloc once; the same alloc again (any order) is a no-op; another alloc throws', async () => {
  await store.initGenesis(alloc)
  const genesisRoot = store.stateRoot()
  assert.is.not(genesisRoot, EMPTY_STATE_ROOT)
  assert.equal(store.state.getAccount(alice), { balance: huge, nonce: 0n })
  assert.equal(store.state.getAccount(bob.toUpperCase().replace('0X', '0x')), { balance: 1_000n, nonce: 0n })
  assert.is(store.state.getAccount(addr('nobody')), undefined)
  assert.is(store.height(), 0, 'genesis is state, not a block')

  await store.initGenesis([...alloc].reverse())
  assert.is(store.stateRoot(), genesisRoot)
  try {
    await store.initGenesis([{ address: alice, balance: 1n }])
    assert.unreachable('a different alloc must be refused')
  } catch (error) {
    assert.match((error as Error).message, /different genesis/)
  }
  try {
    await store.initGenesis([alloc[0], alloc[0]])
    assert.unreachable('duplicate addresses must be refused')
  } catch (error) {
    assert.match((error as Error).message, /twice/)
  }
  assert.is(store.stateRoot(), genesisRoot)
})

const t1 = makeTx('t1', { timestamp: T0 + 10n })
const t2 = makeTx('t2', { timestamp: T0 + 30n, kind: 'deploy', to: null })
const t3 = makeTx('t3', { timestamp: T0 + 20n })
const bad1 = makeTx('bad1', { timestamp: T0 + 15n })

const creator = addr('creator')
const c1 = addr('contract1')
const c2 = addr('contract2')
const meta = (createdInBlock: number, status: ContractMeta['status'] = 'normal'): ContractMeta => ({
  creator,
  createdAt: T0 + 1_000_000_000n,
  createdInBlock,
  status,
  vmType: 'EVM',
})

test('commitBlock writes header, txs, receipts, invalid txs, indexes and state; pending txs leave the pool', async () => {
  const before = store.stateRoot()
  const block = await commitNext(store, {
    valid: [t1, t2],
    invalid: [bad1],
    // receipt order decides deployment order: c2 was created by txs[0]
    contractAddress: { 0: c2, 1: c1 },
    changes: changes({
      accounts: [
        [alice, { balance: huge - 5n, nonce: 2n }],
        [creator, { balance: 0n, nonce: 2n }],
      ],
      code: [
        [c1, '0x6080'],
        [c2, '0x60806040'],
      ],
      storage: [[c1, [[word(1), word(0xbeef)]]]],
      contracts: [
        [c1, meta(1)],
        [c2, meta(1)],
      ],
    }),
  })
  const { header } = block
  assert.is(store.height(), 1)
  assert.is(store.genesisNumber(), 1)
  assert.is.not(store.stateRoot(), before)
  assert.is(store.stateRoot(), header.merkleRoot)
  assert.equal(store.getBlock(1), header)
  assert.equal(store.getBlockByHash(header.hash), header)
  assert.is(store.getBlockByHash(hexOf('nope')), undefined)
  assert.equal(store.getBlockTxHashes(1), [t1.hash, t2.hash])
  assert.equal(store.getBlockInvalidTxHashes(1), [bad1.hash])
  assert.equal(store.getBlockTxHashes(2), [])

  assert.equal(store.getTx(t2.hash), block.txs[1])
  assert.is(store.getTx(t2.hash)?.tx.to, null)
  assert.equal(store.getReceipt(t1.hash), block.receipts[0])
  assert.is(store.getReceipt(bad1.hash), undefined)
  assert.equal(store.getInvalidTx(bad1.hash), block.invalid[0])
  assert.is(store.getInvalidTx(t1.hash), undefined)
  assert.ok(store.hasTx(t1.hash) && store.hasTx(bad1.hash))
  assert.not.ok(store.hasTx(hexOf('unknown')))
  assert.not.ok(store.hasTx('0x12'))
  assert.is(store.findBySignHash(bad1.from, bad1.signHash), bad1.hash)
  assert.is(store.countTxs(), 2)

  assert.equal(store.state.getAccount(alice), { balance: huge - 5n, nonce: 2n })
  assert.equal(store.state.getAccount(bob), { balance: 1_000n, nonce: 0n }, 'untouched genesis account')
  assert.is(store.state.getCode(c1), '0x6080')
  assert.is(store.state.getCode(bob), '0x')
  assert.is(store.state.getStorage(c1, word(1)), word(0xbeef))
  assert.is(store.state.getStorage(c1, '0x01'), word(0xbeef), 'short slot form is the same word')
  assert.is(store.state.getStorage(c1, word(2)), word(0))
  assert.equal(store.state.getContractMeta(c1), meta(1))
  assert.is(store.state.getContractMeta(bob), undefined)
  assert.equal(store.getDeployedList(creator), [c2, c1])
  assert.equal(store.getDeployedList(bob), [])
})

test('a later block: txs not seen as pending, state updates and deletions, deployment list grows', async () => {
  const c3 = addr('contract3')
  const block = await commitNext(store, {
    valid: [t3, makeTx('remote', { timestamp: T0 + 40n })],
    changes: changes({
      accounts: [[bob, { balance: 2_000n, nonce: 0n }]],
      code: [[c2, '0x']],
      storage: [[c1, [[word(1), ZERO_WORD]]]],
      contracts: [
        [c3, meta(2)],
        [c1, meta(1, 'frozen')],
      ],
    }),
  })
  assert.is(store.height(), 2)
  assert.is(block.header.parentHash, store.getBlock(1)!.hash)
  assert.is(store.countTxs(), 4)
  assert.is(store.state.getCode(c2), '0x')
  assert.is(store.state.getStorage(c1, word(1)), word(0))
  assert.is(store.state.getContractMeta(c1)?.status, 'frozen')
  assert.equal(store.getDeployedList(creator), [c2, c1, c3])
  assert.equal(store.getBlockInvalidTxHashes(2), [])
})

test('time indexes: inclusive bounds, time order, limits', () => {
  assert.equal(store.txHashesByTime(T0, T0 + 100n, 10), [t1.hash, t3.hash, t2.hash, makeTx('remote').hash])
  assert.equal(store.txHashesByTime(T0 + 10n, T0 + 20n, 10), [t1.hash, t3.hash])
  assert.equal(store.txHashesByTime(T0 + 11n, T0 + 19n, 10), [])
  assert.equal(store.txHashesByTime(T0, T0 + 100n, 2), [t1.hash, t3.hash])
  assert.equal(store.txHashesByTime(T0, T0 + 100n, 0), [])
  assert.equal(store.txHashesByTime(T0 + 100n, T0, 10), [])
  assert.equal(store.txHashesByTime(-(2n ** 80n), 2n ** 80n, 10).length, 4, 'bounds beyond int64 are clamped')
  assert.equal(store.invalidTxHashesByTime(T0 + 15n, T0 + 15n, 10), [bad1.hash])
  assert.equal(store.invalidTxHashesByTime(T0 + 16n, T0 + 99n, 10), [])
  assert.equal(store.listInvalidTxHashes(10), [bad1.hash])
  assert.equal(store.listInvalidTxHashes(0), [])

  const w1 = store.getBlock(1)!.writeTime
  const w2 = store.getBlock(2)!.writeTime
  assert.equal(store.blocksByTime(w1, w2), { count: 2, first: 1, last: 2 })
  assert.equal(store.blocksByTime(w2, w2), { count: 1, first: 2, last: 2 })
  assert.equal(store.blocksByTime(w1 + 1n, w2 - 1n), { count: 0 })
})

test('commitBlock refuses a wrong number, a wrong parent, a wrong merkleRoot and inconsistent records', async () => {
  const good = nextBlock(store, { valid: [makeTx('r1')] })
  const refuse = async (block: typeof good, pattern: RegExp): Promise<void> => {
    try {
      await store.commitBlock(block)
      assert.unreachable(`expected ${pattern}`)
    } catch (error) {
      assert.match((error as Error).message, pattern)
    }
  }
  await refuse({ ...good, header: { ...good.header, number: 4 } }, /not height \+ 1 \(3\)/)
  await refuse({ ...good, header: { ...good.header, number: 2 } }, /not height \+ 1/)
  await refuse({ ...good, header: { ...good.header, parentHash: ZERO_HASH } }, /parentHash/)
  await refuse({ ...good, header: { ...good.header, parentHash: hexOf('x') } }, /parentHash/)
  await refuse({ ...good, header: { ...good.header, merkleRoot: hexOf('x') } }, /merkleRoot/)
  await refuse({ ...good, header: { ...good.header, txCount: 5 } }, /txCount/)
  await refuse({ ...good, receipts: [] }, /receipts/)
  await refuse({ ...good, txs: [{ ...good.txs[0], txIndex: 3 }] }, /index/)
  await refuse({ ...good, header: { ...good.header, hash: store.getBlock(1)!.hash } }, /already stored/)
  const replay = nextBlock(store, { valid: [t1] })
  await refuse(replay, /already committed/)
  assert.is(store.height(), 2)
  await store.commitBlock(good)
  assert.is(store.height(), 3)
  await commitNext(store, { invalid: [makeTx('batch-x'), makeTx('batch-y')] })
  assert.ok(store.hasTx(makeTx('batch-x').hash))
})

test('a commit that fails midway (a record the encoder cannot encode) leaves the store unchanged; other writes in the same batch survive', async () => {
  const inBlock = makeTx('atomic-in-block', { timestamp: T0 + 600n })
  const carol = addr('carol')
  const block = nextBlock(store, {
    valid: [inBlock, makeTx('atomic-2', { timestamp: T0 + 601n })],
    changes: changes({ accounts: [[carol, { balance: 77n, nonce: 0n }]], storage: [[carol, [[word(5), word(6)]]]] }),
    writeTime: T0 + 999_000_000_000n,
  })
  // the header, txs[0], receipts[0] and more are written before receipts[1] makes msgpack throw
  ;(block.receipts[1] as unknown as { ret: unknown }).ret = Symbol('not encodable')
  const snapshot = {
    height: store.height(),
    root: store.stateRoot(),
    count: store.countTxs(),
    blocks: store.blocksByTime(0n, 2n ** 63n - 1n),
    byTime: store.txHashesByTime(0n, 2n ** 63n - 1n, 100),
  }
  const [commit, other] = await Promise.allSettled([store.commitBlock(block), store.putSnapshotRequest(1_000_000, 'atomic-other')])
  assert.is(commit.status, 'rejected')
  assert.match(String((commit as PromiseRejectedResult).reason), /symbol/i)
  assert.is(other.status, 'fulfilled')

  assert.is(store.height(), snapshot.height)
  assert.is(store.stateRoot(), snapshot.root)
  assert.is(store.countTxs(), snapshot.count)
  assert.equal(store.blocksByTime(0n, 2n ** 63n - 1n), snapshot.blocks)
  assert.equal(store.txHashesByTime(0n, 2n ** 63n - 1n, 100), snapshot.byTime)
  assert.is(store.getBlock(block.header.number), undefined)
  assert.is(store.getBlockByHash(block.header.hash), undefined)
  assert.equal(store.getBlockTxHashes(block.header.number), [])
  assert.is(store.getTx(inBlock.hash), undefined)
  assert.is(store.getReceipt(inBlock.hash), undefined)
  assert.is(store.state.getAccount(carol), undefined)
  assert.is(store.state.getStorage(carol, word(5)), word(0))
  assert.equal(store.snapshotRequests(), [{ height: 1_000_000, snapshotId: 'atomic-other' }])
  await store.removeSnapshotRequest(1_000_000)

  // the same block, repaired, commits
  block.receipts[1].ret = '0x'
  await store.commitBlock(block)
  assert.is(store.height(), snapshot.height + 1)
  assert.equal(store.state.getAccount(carol), { balance: 77n, nonce: 0n })
})

test('stateRootAfter writes nothing and refuses to run while a commit is in flight', async () => {
  const dave = addr('dave')
  const c = changes({ accounts: [[dave, { balance: 1n, nonce: 0n }]] })
  const root = store.stateRoot()
  const after = store.stateRootAfter(c)
  assert.is.not(after, root)
  assert.is(store.stateRoot(), root)
  assert.is(store.state.getAccount(dave), undefined)
  assert.is(store.stateRootAfter(emptyChanges()), root)

  const commit = store.commitBlock(nextBlock(store, { changes: c }))
  assert.throws(() => store.stateRootAfter(c), /in flight/)
  await commit
  assert.is(store.stateRoot(), after)
})

test('malformed inputs to reads answer "not found"', () => {
  assert.is(store.getTx('0x1234'), undefined)
  assert.is(store.getTx('nothex' as Hex), undefined)
  assert.is(store.getReceipt(''), undefined)
  assert.is(store.getBlock(-1), undefined)
  assert.is(store.getBlock(1.5), undefined)
  assert.equal(store.getBlockTxHashes(Number.NaN), [])
  assert.is(store.state.getAccount('0x00'), undefined)
  assert.is(store.state.getStorage('0x00', word(1)), word(0))
  assert.is(store.findBySignHash('0x', '0x'), undefined)
  assert.equal(store.getDeployedList('0x'), [])
})

test('reopening after close keeps everything', async () => {
  const before = {
    height: store.height(),
    root: store.stateRoot(),
    block1: store.getBlock(1),
    tx: store.getTx(t1.hash),
    receipt: store.getReceipt(t2.hash),
    invalid: store.getInvalidTx(bad1.hash),
    deployed: store.getDeployedList(creator),
    alice: store.state.getAccount(alice),
    meta: store.state.getContractMeta(c1),
    byTime: store.txHashesByTime(0n, 2n ** 63n - 1n, 100),
    count: store.countTxs(),
  }
  await store.close()
  await store.close()
  assert.throws(() => store.stateRootAfter(emptyChanges()), /closed/)
  store = await openStore(dir, { mapSizeBytes: 256 * 1024 * 1024 })
  assert.equal(
    {
      height: store.height(),
      root: store.stateRoot(),
      block1: store.getBlock(1),
      tx: store.getTx(t1.hash),
      receipt: store.getReceipt(t2.hash),
      invalid: store.getInvalidTx(bad1.hash),
      deployed: store.getDeployedList(creator),
      alice: store.state.getAccount(alice),
      meta: store.state.getContractMeta(c1),
      byTime: store.txHashesByTime(0n, 2n ** 63n - 1n, 100),
      count: store.countTxs(),
    },
    before,
  )
  assert.is(store.getBlock(1)!.writeTime, T0 + 1_000_000_000n)
  assert.is(store.getTx(t1.hash)!.executeTimeNs, 5_000_000_123)
  assert.is(store.state.getAccount(alice)!.balance, huge - 5n)
  const late = makeTx('after-reopen')
  // the genesis record survives: the same alloc is still a no-op, another still throws
  await store.initGenesis(alloc)
  try {
    await store.initGenesis([])
    assert.unreachable()
  } catch (error) {
    assert.match((error as Error).message, /different genesis/)
  }
  // and the chain continues
  await commitNext(store, { valid: [late] })
  assert.ok(store.hasTx(late.hash))
  await store.flushed()
})

test('the consensus log: one durable write of many records, read back by prefix after reopening, deletes', async () => {
  const path = `${tempDir('consensus')}/ledger`
  let store = await openStore(path)
  await store.writeConsensus([
    { key: 'vote/0000000001/0000000002', value: Uint8Array.of(1, 2) },
    { key: 'vote/0000000001/0000000003', value: Uint8Array.of(3) },
    { key: 'view', value: Uint8Array.of(1) },
    { key: 'checkpoint/0000000010', value: Uint8Array.of(10) },
  ])
  await store.close()
  store = await openStore(path)
  assert.equal(
    [...store.readConsensus('vote/')].map(({ key, value }) => [key, [...value]]),
    [
      ['vote/0000000001/0000000002', [1, 2]],
      ['vote/0000000001/0000000003', [3]],
    ],
  )
  await store.writeConsensus([
    { key: 'vote/0000000001/0000000002', value: undefined },
    { key: 'view', value: Uint8Array.of(2) },
  ])
  assert.equal(
    [...store.readConsensus()].map(({ key }) => key),
    ['checkpoint/0000000010', 'view', 'vote/0000000001/0000000003'],
  )
  assert.equal([...[...store.readConsensus('view')][0].value], [2])
  await store.close()
})

test('consensus records of the older layout (ledger keyspace 23) move to the consensus log at open, once', async () => {
  const path = `${tempDir('consensus-legacy')}/ledger`
  await (await openStore(path)).close()
  const root = openEnvironment(path, undefined)
  const legacy = openKeyspaces(root).consensus
  await legacy.put('view', Uint8Array.of(4))
  await legacy.put('vote/0000000004/0000000031', Uint8Array.of(7, 7))
  await root.close()
  let store = await openStore(path)
  const records = () => [...store.readConsensus()].map(({ key, value }) => [key, [...value]])
  assert.equal(records(), [
    ['view', [4]],
    ['vote/0000000004/0000000031', [7, 7]],
  ])
  await store.writeConsensus([{ key: 'view', value: Uint8Array.of(5) }])
  await store.close()
  store = await openStore(path)
  assert.equal(records(), [
    ['view', [5]],
    ['vote/0000000004/0000000031', [7, 7]],
  ])
  await store.close()
  const reopened = openEnvironment(path, undefined)
  assert.is([...openKeyspaces(reopened).consensus.getKeys({})].length, 0, 'nothing left in keyspace 23')
  await reopened.close()
})

test('a consensus block keeps its batch as named (skipped txs included) and proof; a block tx missing from its batch is refused', async () => {
  const store = await openStore(`${tempDir('batches')}/ledger`)
  const good = makeTx('batch-good')
  const bad = makeTx('batch-bad')
  const block = nextBlock(store, { valid: [good], invalid: [bad] })
  const proof = Uint8Array.of(9, 8, 7)
  const mismatched = { ...block, batch: { view: 3, txHashes: [bad.hash], proof } }
  try {
    await store.commitBlock(mismatched)
    assert.unreachable('a block holding a tx its batch does not name is refused')
  } catch (error) {
    assert.match((error as Error).message, new RegExp(`tx ${good.hash} of block 1 is not in its batch`))
  }
  const skipped = makeTx('already-committed').hash
  await store.commitBlock({ ...block, batch: { view: 3, txHashes: [bad.hash, skipped, good.hash], proof } })
  assert.equal(store.getBlockBatch(1), { view: 3, txHashes: [bad.hash, skipped, good.hash], proof })
  assert.is(store.getBlockBatch(2), undefined)
  await commitNext(store)
  assert.is(store.getBlockBatch(2), undefined, 'a solo block has no batch')
  assert.ok(
    store.blockEntries(1).entries.some((entry) => entry.space === 24),
    'archiving a block moves its batch with it',
  )
  await store.close()
})

test('the first tx recorded under a (from, sign hash) keeps it, within one block as across blocks', async () => {
  const store = await openStore(`${tempDir('sign-keys')}/ledger`)
  const original = makeTx('signed-once')
  // a copy under another hash with the same sender and sign hash (e.g. a different signature): invalid, after the original
  const copy = makeTx('signed-copy', { from: original.from, signHash: original.signHash })
  await commitNext(store, { valid: [original], invalid: [copy] })
  assert.is(store.findBySignHash(original.from, original.signHash), original.hash, 'the valid one, listed first, keeps the key')
  const later = makeTx('signed-later', { from: original.from, signHash: original.signHash })
  await commitNext(store, { invalid: [later] })
  assert.is(store.findBySignHash(original.from, original.signHash), original.hash, 'a later block does not take it over')
  assert.ok(store.hasTx(copy.hash) && store.hasTx(later.hash))
  await store.close()
})

test.run()
