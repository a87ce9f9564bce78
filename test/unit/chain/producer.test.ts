/**
 * The producer as consensus uses it: the batch's time instead of the node's clock, the batch kept
 * with the block, and a replay on another node that must reach the same hash. Real stores,
 * executor and signatures on both nodes.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { BlockMismatchError, createBlockProducer } from '../../../src/chain/producer.ts'
import type { Hex, SignedTx } from '../../../src/domain.ts'
import { createExecutor } from '../../../src/exec/executor.ts'
import { createLogger } from '../../../src/log.ts'
import { openStore, type Store } from '../../../src/store/index.ts'
import { createStateHasher, type StateHasher } from '../../../src/store/state-hasher.ts'
import { flippedS, wallet } from '../../helpers/wallet.ts'

const log = createLogger({ level: 'silent' })
const alice = wallet()
const T = 1_800_000_000_000_000_123n

async function node(): Promise<{ store: Store; hasher: StateHasher; produce: ReturnType<typeof createBlockProducer>['produce'] }> {
  const store = await openStore(join(mkdtempSync(join(tmpdir(), 'keel-producer-')), 'ledger'))
  await store.initGenesis([{ address: alice.address as Hex, balance: 100n }])
  const hasher = await createStateHasher({ worker: false })
  // each node's own clock differs; a consensus block must not depend on it
  let clock = BigInt(Math.floor(Math.random() * 1e9))
  const producer = createBlockProducer({ store, executor: createExecutor(), hasher, nowNs: () => clock++, log })
  return { store, hasher, produce: producer.produce }
}

const signed = (value: number): SignedTx =>
  admitTransaction('transfer', alice.transfer(wallet().address, value), { nowNs: () => BigInt(Date.now()) * 1_000_000n })

test('a batch produced on one node replays to the same block on another; a different result commits nothing', async () => {
  const [a, b] = [await node(), await node()]
  const txs = [signed(30), signed(80), signed(50)] // the second overdraws: discarded alike on both
  const batch = { view: 2, txHashes: txs.map((tx) => tx.hash), proof: Uint8Array.of(1, 2, 3) }
  const ready = txs.map((tx) => ({ tx, signatureValid: true }))
  const first = await a.produce(ready, { timestamp: T, batch })
  assert.is(first.header.writeTime, T, 'the batch time, not the clock')
  assert.is(first.invalid.length, 1)
  assert.equal(a.store.getBlockBatch(1), { ...batch, timestamp: T }, 'the batch kept with its own time')

  await b.produce(ready, { timestamp: T, batch, expectHash: `0x${'ab'.repeat(32)}` }).then(
    () => assert.unreachable('a replay reaching another hash is refused'),
    (error: Error) => assert.instance(error, BlockMismatchError),
  )
  assert.is(b.store.height(), 0, 'nothing committed')
  const replayed = await b.produce(ready, { timestamp: T, batch, expectHash: first.header.hash })
  assert.is(replayed.header.hash, first.header.hash)
  assert.is(b.store.stateRoot(), a.store.stateRoot())

  // a batch time not after the parent's: parent + 1 ns on every node alike; the batch keeps the
  // time its proof signs (a view change's empty batch has time 0)
  const second = await a.produce([], { timestamp: 0n, batch: { view: 3, txHashes: [], proof: Uint8Array.of(4) } })
  assert.is(second.header.writeTime, T + 1n)
  assert.is(a.store.getBlockBatch(2)?.timestamp, 0n)
  for (const n of [a, b]) {
    await n.hasher.close()
    await n.store.close()
  }
})

/** the same content under the other valid signature (flipped s) */
const twinOf = (tx: SignedTx): SignedTx =>
  admitTransaction('transfer', { ...tx.signed, signature: flippedS(tx.signature) }, { nowNs: () => BigInt(Date.now()) * 1_000_000n })

test('two valid copies of one transaction (two VPs admitted one each): only the first ordered commits, the other is REPEATED, in one block or two', async () => {
  const n = await node()
  const first = signed(10)
  const twin = twinOf(first)
  assert.is.not(twin.hash, first.hash)
  assert.is(twin.signHash, first.signHash)
  const block = await n.produce([
    { tx: first, signatureValid: true },
    { tx: twin, signatureValid: true },
  ])
  assert.equal(
    block.invalid.map((invalid) => [invalid.tx.hash, invalid.invalidMsg]),
    [[twin.hash, 'REPEATED']],
  )
  assert.is(n.store.getReceipt(first.hash)?.txHash, first.hash)
  // a copy of a transaction an earlier block committed
  const third = twinOf(signed(20))
  const original = admitTransaction(
    'transfer',
    { ...third.signed, signature: twinOf(third).signature },
    { nowNs: () => BigInt(Date.now()) * 1_000_000n },
  )
  await n.produce([{ tx: original, signatureValid: true }])
  const later = await n.produce([
    { tx: third, signatureValid: true },
    { tx: signed(1), signatureValid: true },
  ])
  assert.equal(
    later.invalid.map((invalid) => invalid.invalidMsg),
    ['REPEATED'],
  )
  assert.is(later.header.txCount, 1)
  // a copy whose signature failed is SIGFAILED, not REPEATED, and holds nothing
  const forged = admitTransaction(
    'transfer',
    { ...first.signed, signature: `0x00${'5a'.repeat(64)}00` },
    { nowNs: () => BigInt(Date.now()) * 1_000_000n },
  )
  const third2 = await n.produce([{ tx: forged, signatureValid: false }])
  assert.equal(
    third2.invalid.map((invalid) => invalid.invalidMsg),
    ['SIGFAILED'],
  )
  await n.hasher.close()
  await n.store.close()
})

test.run()
