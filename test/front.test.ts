/**
 * Request threads (src/front/, ARCHITECTURE.md decision 11): reads are answered by a thread of their
 * own while the chain thread executes, so twenty runaway contract calls in flight no longer stall
 * them (issue 14: a read's p99 was 6.4 s there; the bound here only proves "not stalled"); and two
 * request threads serve one port. The node runs in a process of its own, as in production: a client
 * on the node's chain thread would measure its own stalls.
 */
import { loadavg } from 'node:os'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { RUNAWAY_CALLS, runawayWorkload } from '../bench/runaway.ts'
import { startNodeProcess } from '../src/devnet/node-process.ts'
import type { KeelNode } from '../src/node.ts'
import { ok } from './helpers/chain.ts'
import { envelope, post, startTestNode } from './helpers/node.ts'

/**
 * generous: "the reads were not stalled behind execution" (they were: 6.4 s p99), not a performance
 * figure. The target, 50 ms, is a bench figure (`npm run bench -- --workloads runaway`); at load
 * average 12–40 this p99 measured 105–290 ms. The figure is printed for the record.
 */
const READ_P99_BOUND_MS = 1000

let node: KeelNode | undefined

test.after(async () => {
  await node?.stop()
})

test(`reads stay answered (p99 < ${READ_P99_BOUND_MS} ms) while ${RUNAWAY_CALLS} runaway contract calls execute`, async () => {
  // the bench's runaway workload (bench/runaway.ts): each call burns its whole budget of 1 M gas,
  // ~0.1 s of EVM on a quiet machine, 20 of them some seconds, while four reads go back to back
  const result = await runawayWorkload(
    (configFile) => startNodeProcess({ configFile }),
    () => {},
  )
  assert.is(result.outOfGas, RUNAWAY_CALLS, 'each loop ran out of its budget')
  assert.is(result.failedReads, 0)
  assert.ok(result.reads >= 100, `only ${result.reads} reads while the loops ran`)
  console.log(
    `  read p99 ${result.latencyP99Ms} ms over ${result.reads} reads while ${RUNAWAY_CALLS} runaway calls executed (load average ${loadavg()[0].toFixed(1)})`,
  )
  assert.ok(result.latencyP99Ms < READ_P99_BOUND_MS, `read p99 ${result.latencyP99Ms} ms over ${result.reads} reads while the loops ran`)
})

test('two request threads serve one port; methods of the chain thread are forwarded', async () => {
  node = await startTestNode({ jsonrpc: { threads: 2 } })
  const url = node.url
  const replies = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      post(url, envelope(i % 2 === 0 ? 'block_getChainHeight' : 'node_getNodeHash', []), { headers: { connection: 'close' } }),
    ),
  )
  for (const reply of replies) assert.is(reply.status, 200)
  assert.is(((await ok<unknown[]>(url, 'node_getNodes')) as unknown[]).length, 1)
  const id = await ok<string>(url, 'sub_newBlockSubscription', [false])
  assert.equal(await ok(url, 'sub_getSubscriptionChanges', [id]), [])
  const unknown = (await post(url, envelope('sub_getSubscriptionChanges', [`0x${'00'.repeat(16)}`]))).body as { code: number }
  assert.is(unknown.code, -32012, 'an error of the chain thread comes back as it is')
})

test.run()
