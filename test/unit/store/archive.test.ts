/** The store's archive operations (src/store/index.ts): visibility through the genesis, idempotent batches, guards, persistence. */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type ArchivedBlock, openStore, rootOfEntries, type Store } from '../../../src/store/index.ts'
import { addr, changes, commitNext, makeTx, tempDir } from './fixtures.ts'

const dir = tempDir('archive')
let store: Store
const range = { snapshotId: `0x${'ab'.repeat(16)}`, from: 1, to: 3 }
const valid = [1, 2, 3, 4, 5].map((n) => makeTx(`valid${n}`))
const invalid = makeTx('invalid2')
let entries: ArchivedBlock[]
let block1Hash: string

const thrown = async (work: () => Promise<unknown>, pattern: RegExp): Promise<void> => {
  try {
    await work()
  } catch (error) {
    assert.match((error as Error).message, pattern)
    return
  }
  assert.unreachable(`expected an error matching ${pattern}`)
}

test.before(async () => {
  store = await openStore(dir)
  await store.initGenesis([{ address: addr('alice'), balance: 1000n }])
  for (const [i, tx] of valid.entries()) {
    await commitNext(store, {
      valid: [tx],
      invalid: i === 1 ? [invalid] : [],
      changes: changes({ accounts: [[addr(`holder${i}`), { balance: BigInt(i + 1), nonce: 0n }]] }),
    })
  }
})

test.after(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

test('worldAt reads the state of the latest block only; its entries give that block merkleRoot', async () => {
  assert.is(store.worldAt(4), undefined, 'block 5 changed the state since block 4')
  const world = store.worldAt(5)!
  try {
    assert.is(world.root, store.getBlock(5)!.merkleRoot)
    assert.is(await rootOfEntries(world.entries()), world.root)
  } finally {
    world.close()
  }
})

test('startArchive hides the range at once; removeArchived twice is harmless; the txs stay duplicates', async () => {
  entries = [1, 2, 3].map((n) => store.blockEntries(n))
  block1Hash = store.getBlock(1)!.hash
  await thrown(() => store.startArchive({ ...range, from: 2 }), /must start at the genesis 1/)
  await thrown(() => store.startArchive({ ...range, to: 5 }), /end below 5/)
  await store.startArchive(range)
  assert.is(store.genesisNumber(), 4)
  assert.equal(store.archiveRecord().op, { kind: 'archive', range })
  assert.is(store.getBlock(1), undefined)
  assert.is(store.getTx(valid[0].hash), undefined, 'hidden before it is removed')
  assert.is(store.archivedBlockOf(valid[0].hash), 1)
  await thrown(() => store.startRestore(range), /an? archive of .* is in progress/)

  await store.removeArchived(entries.slice(0, 2))
  await store.removeArchived(entries)
  await store.finishArchiveOp()
  assert.equal(store.archiveRecord(), { genesis: 4, ranges: [range] })
  assert.is(store.archivedBlockOf(valid[2].hash), 3)
  assert.is(store.archivedBlockOf(invalid.hash), 2)
  assert.is(store.archivedBlockOfHash(block1Hash), 1)
  assert.is(store.archivedBlockOfHash(store.getBlock(4)!.hash), undefined, 'a live block is not archived')
  assert.ok(store.hasTx(valid[0].hash), 'an archived tx is still a duplicate')
  assert.is(store.getBlock(4)?.number, 4)
  assert.is(store.blocksByTime(0n, 2n ** 62n).first, 4)
})

test('new blocks commit above an archived range; startRestore refuses anything but the latest range', async () => {
  await commitNext(store, { valid: [makeTx('valid6')] })
  assert.is(store.height(), 6)
  await thrown(() => store.startRestore({ ...range, to: 2 }), /is not the latest archived range/)
})

test('putRestored twice stays hidden until finishArchiveOp; then every entry reads back as it was', async () => {
  await store.startRestore(range)
  await store.putRestored(entries)
  await store.putRestored(entries)
  assert.is(store.getBlock(1), undefined, 'below the genesis until the restore ends')
  assert.is(store.genesisNumber(), 4)
  await store.finishArchiveOp()
  assert.equal(store.archiveRecord(), { genesis: 1, ranges: [] })
  assert.equal(
    [1, 2, 3].map((n) => store.blockEntries(n)),
    entries,
  )
  assert.is(store.getTx(valid[0].hash)?.blockNumber, 1)
  assert.is(store.getInvalidTx(invalid.hash)?.blockNumber, 2)
  assert.is(store.archivedBlockOf(valid[0].hash), undefined)
})

test('the archive record survives a reopen', async () => {
  await store.startArchive(range)
  await store.close()
  store = await openStore(dir)
  assert.equal(store.archiveRecord(), { genesis: 4, ranges: [], op: { kind: 'archive', range } })
  assert.is(store.getBlock(2), undefined)
  await store.removeArchived(entries)
  await store.finishArchiveOp()
  assert.equal(store.archiveRecord(), { genesis: 4, ranges: [range] })
})

test.run()
