/**
 * The network's transaction services over real peer links (TLS on loopback, 4 VPs and an NVP in
 * one process): relay among VPs, fetching a batch's missing transactions, and an NVP forwarding
 * its client's transaction to a VP that admits and commits it. Stores, pools, signatures and
 * node1's chain are real.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { admitTransaction } from '../../src/chain/admission.ts'
import { createChain, signatureVerifier } from '../../src/chain/index.ts'
import { createTxPool, type TxPool } from '../../src/chain/pool.ts'
import { createVerifyPool, type VerifyPool } from '../../src/crypto/verify-pool.ts'
import type { Hex, TxSubmitter } from '../../src/domain.ts'
import { createExecutor } from '../../src/exec/executor.ts'
import { createLogger } from '../../src/log.ts'
import { forwardingSubmitter, serveForwardedTxs } from '../../src/network/forward.ts'
import { fetchMissingTxs, serveTxFetches } from '../../src/network/tx-fetch.ts'
import { createTxRelay } from '../../src/network/tx-relay.ts'
import { openStore, type Store } from '../../src/store/index.ts'
import { createStateHasher } from '../../src/store/state-hasher.ts'
import { type LinkedPeers, linkedPeers } from '../helpers/peers.ts'
import { wallet } from '../helpers/wallet.ts'

const log = createLogger({ level: 'silent' })
const nowNs = () => BigInt(Date.now()) * 1_000_000n
const alice = wallet()
const signed = () => admitTransaction('transfer', alice.transfer(wallet().address, 1), { nowNs })

let peers: LinkedPeers
let verifyPool: VerifyPool
const stores: Store[] = []
const pools = new Map<string, TxPool>()
let stopChain: () => Promise<void> = async () => {}

async function poolOf(hostname: string): Promise<TxPool> {
  const store = await openStore(join(mkdtempSync(join(tmpdir(), `keel-services-${hostname}-`)), 'ledger'))
  await store.initGenesis([{ address: alice.address as Hex, balance: 10n ** 9n }])
  stores.push(store)
  return createTxPool({ store, verifier: signatureVerifier(verifyPool), capacity: 1000, verifyBatch: 64, log })
}

const until = async (condition: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

test.before(async () => {
  verifyPool = await createVerifyPool({ workers: 0 })
  peers = await linkedPeers(4, 1)
  for (const hostname of ['node2', 'node3', 'node4']) pools.set(hostname, await poolOf(hostname))
})

test.after(async () => {
  await stopChain()
  await peers.stop()
  await verifyPool.close()
  for (const store of stores) await store.close()
})

test('a transaction relayed by one VP reaches every other VP pool, and no NVP', async () => {
  const relays = ['node2', 'node3', 'node4'].map((hostname) =>
    createTxRelay({ network: peers.nets.get(hostname)!, pool: pools.get(hostname)!, nowNs, log }),
  )
  const nvpGot: string[] = []
  peers.nets.get('nvp1')!.on(2, (from) => nvpGot.push(from.hostname))
  const tx = signed()
  await pools.get('node2')!.add(tx)
  relays[0].relay(tx)
  await until(() => ['node3', 'node4'].every((h) => pools.get(h)!.get(tx.hash) !== undefined), 'the relay')
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.equal(nvpGot, [], 'relays go to VPs only')
})

test('a VP fetches the transactions of a batch it lacks from the one that holds them', async () => {
  const held = [signed(), signed()]
  for (const tx of held) await pools.get('node3')!.add(tx)
  for (const hostname of ['node3', 'node4']) {
    const pool = pools.get(hostname)!
    serveTxFetches(peers.nets.get(hostname)!, { pooled: (hash) => pool.get(hash)?.tx, committed: () => undefined })
  }
  const missing = await fetchMissingTxs({
    network: peers.nets.get('node2')!,
    pool: pools.get('node2')!,
    peers: ['node4', 'node3'],
    hashes: held.map((tx) => tx.hash),
    nowNs,
    log,
  })
  assert.equal(missing, [])
  for (const tx of held) assert.ok(pools.get('node2')!.get(tx.hash), `${tx.hash} pooled on node2`)
})

test("an NVP's client transaction is forwarded to a VP, which admits and commits it; its errors come back", async () => {
  const store = await openStore(join(mkdtempSync(join(tmpdir(), 'keel-services-node1-')), 'ledger'))
  await store.initGenesis([{ address: alice.address as Hex, balance: 10n ** 9n }])
  stores.push(store)
  const stateHasher = await createStateHasher({ worker: false })
  const chain = createChain({
    store,
    executor: createExecutor(),
    verifyPool,
    stateHasher,
    batchSize: 10,
    batchTimeoutMs: 5,
    poolCapacity: 100,
    nowNs,
    log,
  })
  await chain.start()
  stopChain = async () => {
    await chain.stop()
    await stateHasher.close()
  }
  serveForwardedTxs({ network: peers.nets.get('node1')!, submitter: chain.submitter, nowNs, log })
  const local: TxSubmitter = {
    submit: () => Promise.reject(new Error('not here')),
    admit: () => Promise.reject(new Error('not here')),
    signHash: () => '0x',
  }
  const nvp = forwardingSubmitter({
    network: peers.nets.get('nvp1')!,
    pickVp: () => 'node1',
    local,
    committed: (hash) => store.getReceipt(hash as `0x${string}`) !== undefined,
    nowNs,
    log,
  })
  const params = alice.transfer(wallet().address, 3)
  const hash = await nvp.submit('transfer', params)
  await until(() => store.getReceipt(hash) !== undefined, 'the commit on node1')
  await nvp.submit('transfer', params).then(
    () => assert.unreachable('a duplicate is refused by the VP'),
    (error: { code: number }) => assert.is(error.code, -32007),
  )
  nvp.stop()
})

test.run()
