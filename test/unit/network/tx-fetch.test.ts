/** Fetching a batch's missing transactions from peers: real pools and stores, a direct-call transport. */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../../src/chain/admission.ts'
import { signatureVerifier } from '../../../src/chain/index.ts'
import { createTxPool } from '../../../src/chain/pool.ts'
import { createVerifyPool } from '../../../src/crypto/verify-pool.ts'
import type { Hex, SignedTx } from '../../../src/domain.ts'
import { createLogger } from '../../../src/log.ts'
import { fetchMissingTxs, serveTxFetches } from '../../../src/network/tx-fetch.ts'
import { encodeTxs } from '../../../src/network/tx-relay.ts'
import { openStore } from '../../../src/store/index.ts'
import { wallet } from '../../helpers/wallet.ts'

const log = createLogger({ level: 'silent' })
const nowNs = () => BigInt(Date.now()) * 1_000_000n
const alice = wallet()
const txs: SignedTx[] = Array.from({ length: 5 }, () => admitTransaction('transfer', alice.transfer(wallet().address, 1), { nowNs }))

type Serve = (from: { hostname: string; vp: boolean }, payload: Uint8Array) => Promise<Uint8Array>

function server(held: SignedTx[]): Serve {
  let serve: Serve | undefined
  const byHash = new Map(held.map((tx) => [tx.hash, tx]))
  serveTxFetches(
    {
      onRequest: (_channel, handler) => {
        serve = handler
      },
      request: () => Promise.reject(new Error('unused')),
    },
    { pooled: (hash) => byHash.get(hash), committed: () => undefined },
  )
  return serve!
}

test('missing transactions come from the peers that hold them; a peer cannot slip in others', async () => {
  const store = await openStore(join(mkdtempSync(join(tmpdir(), 'keel-fetch-')), 'ledger'))
  const verifyPool = await createVerifyPool({ workers: 0 })
  const pool = createTxPool({ store, verifier: signatureVerifier(verifyPool), capacity: 1, verifyBatch: 8, log })
  const peers: Record<string, Serve> = {
    // the primary holds the first three; node3 the rest; node4 answers with something never asked
    node1: server(txs.slice(0, 3)),
    node3: server(txs.slice(3)),
    node4: async () => encodeTxs([admitTransaction('transfer', alice.transfer(wallet().address, 9), { nowNs })]),
  }
  const network = {
    onRequest: () => undefined,
    request: async (peer: string, _channel: number, payload: Uint8Array) => {
      if (peers[peer] === undefined) throw new Error(`${peer} is not linked`)
      return peers[peer]({ hostname: 'node2', vp: true }, payload)
    },
  }
  const hashes = txs.map((tx) => tx.hash)
  const missing = await fetchMissingTxs({ network, pool, peers: ['node4', 'node1', 'gone', 'node3'], hashes, nowNs, log })
  assert.equal(missing, [])
  assert.equal(
    hashes.map((hash) => pool.get(hash)?.tx.hash),
    hashes,
    'all pooled, past a full pool (they belong to an agreed batch)',
  )
  assert.is(pool.size(), 5, 'nothing unasked pooled')
  const none = await fetchMissingTxs({ network, pool, peers: ['node1'], hashes: [`0x${'11'.repeat(32)}` as Hex], nowNs, log })
  assert.equal(none, [`0x${'11'.repeat(32)}`])
  await peers.node1({ hostname: 'nvp1', vp: false }, Buffer.from('[]')).then(
    () => assert.unreachable('an NVP fetches no batch transactions'),
    (error: Error) => assert.match(error.message, /only VPs/),
  )
  await peers.node1({ hostname: 'node2', vp: true }, Buffer.from('["0x12"]')).then(
    () => assert.unreachable('malformed hashes are refused'),
    (error: Error) => assert.match(error.message, /JSON array of at most 1000/),
  )
  await new Promise((resolve) => setTimeout(resolve, 50))
  await verifyPool.close()
  await store.close()
})

test.run()
