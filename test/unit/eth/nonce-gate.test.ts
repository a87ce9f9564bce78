/**
 * The pool's gate for Ethereum nonces (src/chain/eth-nonce-gate.ts) in a real pool: a nonce gap waits
 * out of the batches until the transaction before it is taken, a given-back batch counts again
 * from the chain, and Hyperchain-dialect transactions pass straight through. Real store, pool log
 * and transaction decoding.
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
import { createTxPool, type TxPool } from '../../../src/chain/pool.ts'
import { createVerifyPool, type VerifyPool } from '../../../src/crypto/verify-pool.ts'
import type { SignedTx } from '../../../src/domain.ts'
import { decodeEthereumTx, ethereumSignedTx } from '../../../src/eth/transaction.ts'
import { createLogger } from '../../../src/log.ts'
import { openStore, type Store } from '../../../src/store/index.ts'
import { wallet } from '../../helpers/wallet.ts'

const eth = new Wallet(`0x${'5e'.repeat(32)}`)
const hyper = wallet()
let store: Store
let verifyPool: VerifyPool
let pool: TxPool
/** the committed nonce the gate reads, moved by the test as blocks would */
let committed = 0n

const ethTx = async (nonce: number): Promise<SignedTx> => {
  const raw = await eth.signTransaction({
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

test.before(async () => {
  store = await openStore(join(mkdtempSync(join(tmpdir(), 'keel-gate-')), 'ledger'))
  await store.initGenesis([])
  verifyPool = await createVerifyPool({ workers: 0 })
  pool = createTxPool({
    store,
    verifier: signatureVerifier(verifyPool),
    capacity: 100,
    verifyBatch: 16,
    log: createLogger({ level: 'silent' }),
    gate: createNonceGate(() => committed),
  })
  await pool.restore()
})
test.after(async () => {
  await verifyPool.close()
  await store.close()
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

test.run()
