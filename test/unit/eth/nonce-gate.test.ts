/**
 * The pool's gate for Ethereum nonces (src/chain/eth-nonce-gate.ts) in a real pool: a nonce gap waits
 * out of the batches until the transaction before it is taken, a given-back batch counts again
 * from the chain, and Hyperchain-dialect transactions pass straight through; what waits is bounded
 * per sender and in all (geth's "txpool is full"), and a take or a ready count looks only at the
 * senders whose turn moved. Real store, pool log and transaction decoding.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Wallet } from 'ethers'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { createNonceGate } from '../../../src/chain/eth-nonce-gate.ts'
import { signatureVerifier } from '../../../src/chain/index.ts'
import { createTxPool, type TakeGate, type TxPool } from '../../../src/chain/pool.ts'
import { createVerifyPool, type VerifyPool } from '../../../src/crypto/verify-pool.ts'
import type { SignedTx } from '../../../src/domain.ts'
import { decodeEthereumTx, ethereumSignedTx } from '../../../src/eth/transaction.ts'
import { createLogger } from '../../../src/log.ts'
import { openStore, type Store } from '../../../src/store/index.ts'
import { wallet } from '../../helpers/wallet.ts'

const eth = new Wallet(`0x${'5e'.repeat(32)}`)
const hyper = wallet()
let verifyPool: VerifyPool
let pool: TxPool
/** the committed nonce the gate reads, moved by the test as blocks would */
let committed = 0n

const ethTx = async (nonce: number, from = eth): Promise<SignedTx> => {
  const raw = await from.signTransaction({
    type: 2,
    chainId: 1337n,
    nonce,
    to: hyper.address,
    gasLimit: 21000n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
  })
  return ethereumSignedTx(raw, decodeEthereumTx(raw, 1337n), BigInt(Date.now()) * 1_000_000n)
}
const hyperTx = (): SignedTx =>
  admitTransaction('transfer', hyper.transfer(wallet().address, 1), { nowNs: () => BigInt(Date.now()) * 1_000_000n })
const nonces = (txs: { tx: SignedTx }[]): string[] => txs.map(({ tx }) => (tx.signed.ethereum === undefined ? 'h' : String(tx.nonce)))

const stores: Store[] = []
/** a pool over a store of its own, with `gate` */
const poolWith = async (gate: TakeGate): Promise<TxPool> => {
  const own = await openStore(join(mkdtempSync(join(tmpdir(), 'keel-gate-')), 'ledger'))
  stores.push(own)
  await own.initGenesis([])
  const created = createTxPool({
    store: own,
    verifier: signatureVerifier(verifyPool),
    capacity: 10_000,
    verifyBatch: 16,
    log: createLogger({ level: 'silent' }),
    gate,
  })
  await created.restore()
  return created
}

test.before(async () => {
  verifyPool = await createVerifyPool({ workers: 0 })
  pool = await poolWith(createNonceGate(() => committed))
})
test.after(async () => {
  await verifyPool.close()
  for (const own of stores) await own.close()
})

test('a nonce gap waits; the transaction before it releases it; Hyperchain transactions pass', async () => {
  const [n0, n1, n2] = [await ethTx(0), await ethTx(1), await ethTx(2)]
  await pool.add(n2, { signatureValid: true })
  await pool.add(hyperTx())
  assert.is(pool.readyCount(), 1, 'only the Hyperchain transaction is ready')
  assert.equal(nonces(pool.take(10)), ['h'])
  assert.is(pool.readyCount(), 0, 'nonce 2 waits for 0 and 1')
  assert.equal(nonces(pool.take(10)), [], 'no batch for a transaction that waits')
  await pool.add(n1, { signatureValid: true })
  await pool.add(n0, { signatureValid: true })
  assert.equal(nonces(pool.take(10)), ['0', '1', '2'], 'in nonce order, in one batch')
  // the batch was given back (a view change): counted again from the chain
  pool.requeue([n0.hash, n1.hash, n2.hash])
  assert.equal(nonces(pool.take(1)), ['0'])
  assert.equal(nonces(pool.take(10)), ['1', '2'])
  pool.settle([n0.hash, n1.hash, n2.hash])
  committed = 3n
  const n4 = await ethTx(4)
  await pool.add(n4, { signatureValid: true })
  assert.equal(nonces(pool.take(10)), [], 'nonce 4 waits for 3')
  const n3 = await ethTx(3)
  await pool.add(n3, { signatureValid: true })
  assert.equal(nonces(pool.take(10)), ['3', '4'])
})

test('what waits is bounded per sender and in all: past either, "txpool is full"; a transaction whose turn came is still admitted', async () => {
  const bounded = await poolWith(createNonceGate(() => 0n, { perSender: 3, total: 5 }))
  const [a, b, c] = ['a1', 'b2', 'c3'].map((byte) => new Wallet(`0x${byte.repeat(32)}`))
  const full = async (tx: SignedTx, what: RegExp): Promise<void> => {
    const error = await bounded.add(tx, { signatureValid: true }).then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string },
    )
    assert.ok(error, 'refused')
    assert.is(error?.code, -32000)
    assert.match(error?.message ?? '', /^txpool is full: /)
    assert.match(error?.message ?? '', what)
    assert.is(bounded.get(tx.hash), undefined, 'not pooled')
  }
  for (const nonce of [1, 2, 3]) await bounded.add(await ethTx(nonce, a), { signatureValid: true })
  await full(await ethTx(4, a), /3 transactions of 0x[0-9a-f]{40} already wait .*send the missing nonce 0 first/)
  for (const nonce of [1, 2]) await bounded.add(await ethTx(nonce, b), { signatureValid: true })
  await full(await ethTx(1, c), /5 transactions wait for an earlier nonce \(at most 5\)/)
  assert.is(bounded.readyCount(), 0)
  // a transaction whose turn came never waits, so a full gate does not refuse it; it releases its successors
  await bounded.add(await ethTx(0, a), { signatureValid: true })
  assert.is(bounded.readyCount(), 1, "a's nonce 0; its successors wait for it to be taken")
  assert.equal(nonces(bounded.take(10)), ['0', '1', '2', '3'], 'the run of consecutive nonces in one batch')
  // room again: c's transaction waits now
  await bounded.add(await ethTx(1, c), { signatureValid: true })
  assert.is(bounded.readyCount(), 0)
})

test('a take or a ready count looks only at the senders whose turn moved, not at every waiting transaction', async () => {
  const lookups = new Map<string, number>()
  const counted = await poolWith(
    createNonceGate((address) => {
      lookups.set(address, (lookups.get(address) ?? 0) + 1)
      return 0n
    }),
  )
  const senders = Array.from({ length: 200 }, (_, i) => new Wallet(`0x${(i + 1).toString(16).padStart(64, '0')}`))
  for (const sender of senders) await counted.add(await ethTx(1, sender), { signatureValid: true })
  assert.is(counted.readyCount(), 0, 'each waits for its nonce 0')
  lookups.clear()
  for (let i = 0; i < 20; i++) {
    assert.is(counted.readyCount(), 0)
    assert.equal(counted.take(10), [])
  }
  assert.is(lookups.size, 0, 'nothing moved: no sender looked at again')
  const first = senders[7]
  await counted.add(await ethTx(0, first), { signatureValid: true })
  lookups.clear()
  const batch = counted.take(10)
  assert.equal(nonces(batch), ['0', '1'])
  assert.equal([...lookups.keys()], [first.address.toLowerCase()], 'only the sender whose nonce 0 was taken')
  // given back (a view change): queued once each, in order, and taken again together
  counted.requeue(batch.map(({ tx }) => tx.hash))
  assert.equal(nonces(counted.take(10)), ['0', '1'])
  assert.equal(counted.take(10), [])
})

test.run()
