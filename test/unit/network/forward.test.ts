/**
 * NVP → VP forwarding over the two real halves: an NVP-side submitter and a VP's chain (real
 * store, executor, verifier) serving the forward requests; the transport is a direct call into
 * the serving handler.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createChain } from '../../../src/chain/index.ts'
import { createVerifyPool } from '../../../src/crypto/verify-pool.ts'
import type { TxSubmitter } from '../../../src/domain.ts'
import { createExecutor } from '../../../src/exec/executor.ts'
import { createLogger } from '../../../src/log.ts'
import { type ForwardNetwork, forwardingSubmitter, serveForwardedTxs } from '../../../src/network/forward.ts'
import { decodeTxs } from '../../../src/network/tx-relay.ts'
import { openStore } from '../../../src/store/index.ts'
import { createStateHasher } from '../../../src/store/state-hasher.ts'
import { wallet } from '../../helpers/wallet.ts'

const log = createLogger({ level: 'silent' })
const nowNs = () => BigInt(Date.now()) * 1_000_000n
const alice = wallet()

type Handler = (from: { hostname: string; vp: boolean }, payload: Uint8Array) => Promise<Uint8Array>

async function vpChain() {
  const store = await openStore(join(mkdtempSync(join(tmpdir(), 'keel-forward-')), 'ledger'))
  await store.initGenesis([{ address: alice.address as `0x${string}`, balance: 1000n }])
  const verifyPool = await createVerifyPool({ workers: 0 })
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
  let handler: Handler | undefined
  serveForwardedTxs({
    network: {
      onRequest: (_channel, h) => {
        handler = h
      },
      request: () => Promise.reject(new Error('a VP asks nothing here')),
    },
    submitter: chain.submitter,
    nowNs,
    log,
  })
  return {
    store,
    handler: handler!,
    close: async () => {
      await chain.stop()
      await verifyPool.close()
      await stateHasher.close()
      await store.close()
    },
  }
}

const unused: TxSubmitter = {
  submit: () => Promise.reject(new Error('only simulations run locally')),
  admit: () => Promise.reject(new Error('only simulations run locally')),
  signHash: () => '0x',
}

/** an NVP's submitter; simulations are never asked for, and nothing commits unless `committed` says so */
const nvpSubmitter = (
  options: Pick<Parameters<typeof forwardingSubmitter>[0], 'network' | 'pickVp'> & Partial<Parameters<typeof forwardingSubmitter>[0]>,
) => forwardingSubmitter({ local: unused, committed: () => false, nowNs, log, ...options })

const networkTo = (handler: Handler): ForwardNetwork => ({
  onRequest: () => assert.unreachable(),
  request: (_vp, _channel, payload) => handler({ hostname: 'nvp1', vp: false }, payload),
})

async function rejection(run: () => Promise<unknown>): Promise<{ code?: number; message: string }> {
  try {
    await run()
  } catch (error) {
    return error as { code?: number; message: string }
  }
  throw new Error('expected a rejection')
}

test('a forwarded transaction is admitted and committed by the VP; its errors reach the NVP client as they are', async () => {
  const vp = await vpChain()
  const nvp = nvpSubmitter({
    network: networkTo(vp.handler),
    pickVp: () => 'vp1',
    committed: (hash) => vp.store.getReceipt(hash as `0x${string}`) !== undefined,
  })
  const bob = wallet().address
  const params = alice.transfer(bob, 7)
  const hash = await nvp.submit('transfer', params)
  for (let i = 0; i < 200 && vp.store.getReceipt(hash) === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.ok(vp.store.getReceipt(hash), 'committed on the VP')
  assert.is(vp.store.state.getAccount(bob as `0x${string}`)?.balance, 7n)
  const duplicate = await rejection(() => nvp.submit('transfer', params))
  assert.is(duplicate.code, -32007)
  nvp.stop()
  await vp.close()
})

test('no VP, or a VP that does not answer: -32006 (retry later), never a hash', async () => {
  const none = nvpSubmitter({
    network: networkTo(() => Promise.reject(new Error('no VP is picked, none is asked'))),
    pickVp: () => undefined,
  })
  assert.is((await rejection(() => none.submit('transfer', alice.transfer(wallet().address, 1)))).code, -32006)
  const dead = nvpSubmitter({
    network: { onRequest: () => undefined, request: () => Promise.reject(new Error('peer vp1 disconnected')) },
    pickVp: () => 'vp1',
  })
  const error = await rejection(() => dead.submit('transfer', alice.transfer(wallet().address, 1)))
  assert.is(error.code, -32006)
  assert.match(error.message, /vp1 did not take the transaction \(peer vp1 disconnected\)/)
  const malformed = await rejection(() => dead.submit('transfer', { ...alice.transfer(wallet().address, 1), timestamp: 1 }))
  assert.is(malformed.code, -32602, 'refused on the NVP, no round trip')
  none.stop()
  dead.stop()
})

test('a VP that answers the hash and drops the transaction: the NVP forwards it again to another VP, which commits it', async () => {
  const honest = await vpChain()
  const asked: string[] = []
  const network: ForwardNetwork = {
    onRequest: () => assert.unreachable(),
    request: async (vp, _channel, payload) => {
      asked.push(vp)
      if (vp === 'honest') return honest.handler({ hostname: 'nvp1', vp: false }, payload)
      // the Byzantine VP: the right hash, and nothing done with it
      return Buffer.from(JSON.stringify({ hash: decodeTxs(payload, { nowNs })[0].hash }))
    },
  }
  const nvp = nvpSubmitter({
    network,
    // the Byzantine VP first, as long as it may be picked
    pickVp: (except) => ['byzantine', 'honest'].find((vp) => vp !== except),
    committed: (hash) => honest.store.getReceipt(hash as `0x${string}`) !== undefined,
    reforwardAfterMs: 100,
  })
  const hash = await nvp.submit('transfer', alice.transfer(wallet().address, 5))
  assert.equal(asked, ['byzantine'])
  assert.is(nvp.watched(), 1, 'watched until it has an outcome')
  for (let i = 0; i < 300 && honest.store.getReceipt(hash) === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.ok(honest.store.getReceipt(hash), 'committed by the honest VP after the second forward')
  assert.is(asked[1], 'honest')
  for (let i = 0; i < 100 && nvp.watched() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.is(nvp.watched(), 0, 'no longer watched once committed')
  const forwards = asked.length
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.is(asked.length, forwards, 'nothing forwarded after the outcome')
  nvp.stop()
  await honest.close()
})

test("a VP answering a hash other than the transaction's own: -32006, never that hash", async () => {
  const nvp = nvpSubmitter({
    network: { onRequest: () => undefined, request: async () => Buffer.from(JSON.stringify({ hash: `0x${'ab'.repeat(32)}` })) },
    pickVp: () => 'liar',
  })
  const error = await rejection(() => nvp.submit('transfer', alice.transfer(wallet().address, 1)))
  assert.is(error.code, -32006)
  assert.match(error.message, /wrong hash/)
  assert.is(nvp.watched(), 0)
  nvp.stop()
})

test.run()
