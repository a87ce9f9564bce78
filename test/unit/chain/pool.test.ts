/**
 * The pool: admission (signature checked, duplicates refused, durable in the pool log before `add`
 * resolves), restore after a restart, and the pool as consensus uses it: a peer's batch settles
 * transactions still queued here, a view change gives taken ones back, relayed transactions pass a
 * full pool. Real store and verifier.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { signatureVerifier } from '../../../src/chain/index.ts'
import { createTxPool, type TxPool } from '../../../src/chain/pool.ts'
import { createRateLimit, type RateLimit } from '../../../src/chain/rate-limit.ts'
import { createVerifyPool, type VerifyPool } from '../../../src/crypto/verify-pool.ts'
import type { SignedTx } from '../../../src/domain.ts'
import { createLogger } from '../../../src/log.ts'
import { openEnvironment, openKeyspaces } from '../../../src/store/db.ts'
import { openStore, type Store } from '../../../src/store/index.ts'
import { wallet } from '../../helpers/wallet.ts'

const sender = wallet()
const signed = (count: number): SignedTx[] =>
  Array.from({ length: count }, () =>
    admitTransaction('transfer', sender.transfer(wallet().address, 1), { nowNs: () => BigInt(Date.now()) * 1_000_000n }),
  )

const newPool = (store: Store, verifyPool: VerifyPool, capacity: number, rateLimit?: RateLimit): TxPool =>
  createTxPool({
    store,
    verifier: signatureVerifier(verifyPool),
    capacity,
    verifyBatch: 64,
    log: createLogger({ level: 'silent' }),
    rateLimit,
  })

async function withPool(
  capacity: number,
  run: (pool: TxPool, store: Store, path: string) => Promise<void>,
  rateLimit?: RateLimit,
): Promise<void> {
  const path = join(mkdtempSync(join(tmpdir(), 'keel-pool-')), 'ledger')
  const store = await openStore(path)
  await store.initGenesis([{ address: sender.address, balance: 10n ** 18n }])
  const verifyPool = await createVerifyPool({ workers: 0 })
  const pool = newPool(store, verifyPool, capacity, rateLimit)
  await pool.restore()
  try {
    await run(pool, store, path)
  } finally {
    await verifyPool.close()
    await store.close()
  }
}

async function rejectsWith(run: () => Promise<unknown>, code: number): Promise<void> {
  try {
    await run()
  } catch (error) {
    assert.is((error as { code?: number }).code, code)
    return
  }
  assert.unreachable(`expected a rejection with ${code}`)
}

const verified = (pool: TxPool, count: number) =>
  new Promise<void>((resolve) => {
    const check = () => (pool.readyCount() >= count ? resolve() : setTimeout(check, 5))
    check()
  })

test('take skips transactions a peer batch already settled; get sees waiting and taken ones', async () => {
  await withPool(100, async (pool) => {
    const txs = signed(6)
    for (const tx of txs) await pool.add(tx)
    await verified(pool, 6)
    pool.settle([txs[0].hash, txs[2].hash])
    assert.is(pool.readyCount(), 4)
    const first = pool.take(2)
    assert.equal(
      first.map((ready) => ready.tx.hash),
      [txs[1].hash, txs[3].hash],
    )
    assert.ok(first.every((ready) => ready.signatureValid))
    assert.is(pool.get(txs[1].hash)?.tx.hash, txs[1].hash, 'a taken transaction is still held until it commits')
    assert.is(pool.get(txs[0].hash), undefined)
    assert.is(pool.size(), 4)
  })
})

test('requeue gives taken transactions back to the head, in order; settled ones stay out', async () => {
  await withPool(100, async (pool) => {
    const txs = signed(5)
    for (const tx of txs) await pool.add(tx)
    await verified(pool, 5)
    const batch = pool.take(3).map((ready) => ready.tx.hash)
    pool.settle([batch[1]])
    pool.requeue(batch)
    pool.requeue([txs[4].hash])
    assert.equal(
      pool.take(10).map((ready) => ready.tx.hash),
      [txs[0].hash, txs[2].hash, txs[3].hash, txs[4].hash],
    )
  })
})

test('waiting lists what waits longer than asked, not what a batch took (for re-gossip)', async () => {
  await withPool(100, async (pool) => {
    const txs = signed(4)
    for (const tx of txs) await pool.add(tx)
    await verified(pool, 4)
    assert.equal(pool.waiting(60_000, 10), [], 'nothing is a minute old')
    await new Promise((resolve) => setTimeout(resolve, 30))
    pool.take(1)
    assert.equal(
      pool.waiting(20, 2).map((tx) => tx.hash),
      [txs[1].hash, txs[2].hash],
      'oldest first, at most 2, the taken one left out',
    )
  })
})

test('a full pool refuses a client transaction (-32006) but takes one relayed by a peer', async () => {
  await withPool(2, async (pool) => {
    const txs = signed(4)
    await pool.add(txs[0])
    await pool.add(txs[1])
    await rejectsWith(() => pool.add(txs[2]), -32006)
    await pool.add(txs[3], { fromPeer: true })
    assert.is(pool.size(), 3)
    await verified(pool, 3)
    await rejectsWith(() => pool.add(txs[3], { fromPeer: true }), -32007)
  })
})

test('a backup that never takes keeps its queue bounded as peer batches settle it', async () => {
  await withPool(10_000, async (pool) => {
    const txs = signed(3000)
    await Promise.all(txs.map((tx) => pool.add(tx)))
    await verified(pool, 3000)
    pool.settle(txs.slice(0, 2990).map((tx) => tx.hash))
    assert.is(pool.size(), 10)
    assert.is(pool.readyCount(), 10)
    assert.equal(
      pool.take(100).map((ready) => ready.tx.hash),
      txs.slice(2990).map((tx) => tx.hash),
    )
  })
})

test('a verifier that fails (closed at shutdown) is retried after a pause, not in a hot loop', async () => {
  const store = await openStore(join(mkdtempSync(join(tmpdir(), 'keel-pool-')), 'ledger'))
  await store.initGenesis([{ address: sender.address, balance: 10n ** 18n }])
  const verifyPool = await createVerifyPool({ workers: 0 })
  await verifyPool.close()
  const real = signatureVerifier(verifyPool)
  let attempts = 0
  const counting = {
    verify: (txs: readonly SignedTx[]) => {
      attempts++
      return real.verify(txs)
    },
  }
  const pool = createTxPool({ store, verifier: counting, capacity: 10, verifyBatch: 64, log: createLogger({ level: 'silent' }) })
  await pool.restore()
  let answered = false
  void pool.add(signed(1)[0]).then(() => {
    answered = true
  })
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.is(attempts, 1, 'one attempt, the retry waits a second')
  assert.not.ok(answered, 'a transaction is answered only once its signature was checked')
  assert.is(pool.readyCount(), 0, 'an unverified transaction is never handed out')
  await store.close()
})

test('add resolves once the transaction is in the pool log; a restart restores the pending ones in order, not those a block holds', async () => {
  await withPool(100, async (pool, store, path) => {
    const txs = signed(5)
    const forged = { ...signed(1)[0], signature: `0x00${'11'.repeat(65)}` }
    for (const tx of [...txs, forged]) await pool.add(tx)
    assert.is(pool.get(forged.hash)?.signatureValid, false, 'a bad signature is admitted, to be recorded as SIGFAILED')
    await store.close()
    const reopened = await openStore(path)
    const verifyPool = await createVerifyPool({ workers: 0 })
    const again = newPool(reopened, verifyPool, 100)
    assert.is(await again.restore(), 6)
    assert.equal(
      again.take(10).map((ready) => [ready.tx.hash, ready.signatureValid]),
      [...txs.map((tx) => [tx.hash, true]), [forged.hash, false]],
    )
    const restored = again.get(txs[0].hash)!.tx
    assert.equal(restored, txs[0], 'every field back, bigints and the signed params included')
    await verifyPool.close()
    await reopened.close()
  })
})

test('a repeated hash or (from, sign hash) is refused with -32007, pending or not; of two copies racing in one wins', async () => {
  await withPool(100, async (pool) => {
    const [tx, other] = signed(2)
    await pool.add(tx)
    await rejectsWith(() => pool.add(tx), -32007)
    await rejectsWith(() => pool.add({ ...tx, hash: `0x${'ab'.repeat(32)}` }), -32007)
    const results = await Promise.allSettled([pool.add(other), pool.add(other)])
    assert.equal(
      results.map((result) => result.status),
      ['fulfilled', 'rejected'],
    )
    assert.is(pool.size(), 2)
  })
})

test('pending transactions an older store layout kept in LMDB (keyspaces 13/14) move into the pool log at restore', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'keel-pool-legacy-')), 'ledger')
  const [old1, old2] = signed(2)
  const root = openEnvironment(path, undefined)
  const dbs = openKeyspaces(root)
  await root.transaction(() => {
    for (const [seq, tx] of [old1, old2].entries()) {
      dbs.pending.putSync(seq + 1, tx)
      dbs.pendingByHash.putSync(Buffer.from(tx.hash.slice(2), 'hex'), seq + 1)
    }
  })
  await root.close()
  const store = await openStore(path)
  await store.initGenesis([{ address: sender.address, balance: 10n ** 18n }])
  const verifyPool = await createVerifyPool({ workers: 0 })
  const pool = newPool(store, verifyPool, 10)
  assert.is(await pool.restore(), 2)
  await verified(pool, 2)
  assert.equal(
    pool.take(10).map((ready) => ready.tx.hash),
    [old1.hash, old2.hash],
  )
  assert.equal(store.legacyPending(), [], 'moved, not copied')
  await store.close()
  const reopened = await openStore(path)
  const again = newPool(reopened, verifyPool, 10)
  assert.is(await again.restore(), 2, 'now from the pool log')
  await verifyPool.close()
  await reopened.close()
})

test('a transaction that cannot be encoded is refused and holds nothing', async () => {
  await withPool(100, async (pool) => {
    const [tx] = signed(1)
    try {
      await pool.add({ ...tx, signed: { ...tx.signed, s: Symbol('x') } }, { signatureValid: true })
      assert.unreachable()
    } catch (error) {
      assert.not.instance(error, assert.Assertion)
    }
    assert.is(pool.get(tx.hash), undefined)
    await pool.add(tx)
    assert.is(pool.size(), 1)
  })
})

test('the rate limit refuses a client transaction past it, never a relayed one, and tells a duplicate it is known', async () => {
  const limit = createRateLimit({ perSecond: 0.001, burst: 2 })
  await withPool(
    100,
    async (pool) => {
      const txs = signed(5)
      await pool.add(txs[0])
      await pool.add(txs[1])
      await rejectsWith(() => pool.add(txs[2]), -32006)
      assert.is(pool.get(txs[2].hash), undefined, 'a refused transaction holds nothing')
      await rejectsWith(() => pool.add(txs[0]), -32007)
      await pool.add(txs[3], { fromPeer: true })
      await pool.add(txs[4], { fromPeer: true })
      assert.is(pool.size(), 4)
    },
    limit,
  )
})

test.run()
