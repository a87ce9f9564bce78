/**
 * A node whose ordering stopped says so (issue 17): a block that cannot be committed (the
 * `store.commitBlock` failpoint, as a broken disk would) stops ordering; node_getConsensusStatus
 * then reports `stopped` with the reason instead of `normal`, a consensus `stopped` system-status
 * event is raised, and new transactions are refused with -32006 instead of answered with hashes the
 * node will not order. The transaction whose hash was answered before is not lost: after a restart
 * it commits.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../src/node.ts'
import { call, commit, ok, receiptOf, SUBMIT, sleep, submit } from './helpers/chain.ts'
import { startTestNode } from './helpers/node.ts'
import { wallet } from './helpers/wallet.ts'

const alice = wallet()
const to = `0x${'22'.repeat(20)}`
const dataDir = mkdtempSync(join(tmpdir(), 'keel-stopped-'))
const config = { node: { dataDir }, chain: { batchTimeoutMs: 5 }, genesis: { accounts: [{ address: alice.address, balance: '1000000' }] } }
let node: KeelNode | undefined

test.after(async () => {
  delete process.env.KEEL_FAILPOINTS
  await node?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

interface Status {
  role: string
  state: string
  view: number
  height: number
  reason?: string
}

test('a block that cannot be committed: status stopped with the reason, a system-status event, submissions refused; after a restart the accepted transaction commits', async () => {
  node = await startTestNode(config)
  const url = node.url
  const watcher = await ok<string>(url, 'sub_newSystemStatusSubscription', [{ modules: ['consensus'] }])
  await commit(url, SUBMIT.transfer, alice.transfer(to, 1))
  assert.equal((await ok<Status>(url, 'node_getConsensusStatus')).state, 'normal')
  assert.is((await fetch(`${url}/ready`)).status, 200)

  process.env.KEEL_FAILPOINTS = 'store.commitBlock=throw'
  const accepted = await submit(url, SUBMIT.transfer, alice.transfer(to, 2))
  let status = await ok<Status>(url, 'node_getConsensusStatus')
  for (let i = 0; i < 200 && status.state !== 'stopped'; i++) {
    await sleep(20)
    status = await ok<Status>(url, 'node_getConsensusStatus')
  }
  delete process.env.KEEL_FAILPOINTS
  assert.is(status.state, 'stopped')
  assert.is(status.height, 1)
  assert.match(status.reason ?? '', /^block 2 could not be committed \(failpoint store\.commitBlock/)
  // GET /ready tells a load balancer the same: 503 with the reason (it was 200 before)
  const ready = await fetch(`${url}/ready`)
  assert.is(ready.status, 503)
  const readyBody = (await ready.json()) as { status: string; state: string; reason: string }
  assert.is(readyBody.status, 'not ready')
  assert.is(readyBody.state, 'stopped')
  assert.match(readyBody.reason, /^block 2 could not be committed/)

  const [event] = await ok<{ module: string; status: boolean; subType: string; errorCode: number; message: string }[]>(
    url,
    'sub_getSubscriptionChanges',
    [watcher],
  )
  assert.equal([event.module, event.status, event.subType, event.errorCode], ['consensus', false, 'stopped', -32006])
  assert.match(event.message, /^ordering stopped: block 2 could not be committed/)

  const refused = await call(url, SUBMIT.transfer, [alice.transfer(to, 3)])
  assert.is(refused.code, -32006)
  assert.match(refused.message, /this node stopped ordering transactions \(block 2 could not be committed .*\); it needs a restart/)
  // reads are still served; the accepted transaction waits in the pool
  assert.is((await call(url, 'tx_getTransactionReceipt', [accepted])).code, -32001)
  // simulation needs no ordering
  assert.is((await call(url, SUBMIT.transfer, [alice.transfer(to, 4, { simulate: true })])).code, 0)

  await node.stop()
  node = await startTestNode(config)
  assert.is((await receiptOf(node.url, accepted)).code, 0, 'the hash answered before the fault commits after the restart')
  assert.equal((await ok<Status>(node.url, 'node_getConsensusStatus')).state, 'normal')
  assert.is((await call(node.url, SUBMIT.transfer, [alice.transfer(to, 5)])).code, 0)
})

test.run()
