/**
 * Request threads (src/front/, ARCHITECTURE.md decision 11): reads are answered by a thread of their
 * own while the chain thread executes, so twenty runaway contract calls in flight no longer stall
 * them (issue 14: a read's p99 was 6.4 s there; the bound here only proves "not stalled"); and two
 * request threads serve one port. The node runs in a process of its own, as in production: a client
 * on the node's chain thread would measure its own stalls.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'

import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type NodeProcess, startNodeProcess, writeNodeConfig } from '../src/devnet/node-process.ts'
import type { KeelNode } from '../src/node.ts'
import { artifact, calldata, deploy, ok, receiptOf, SUBMIT, submit } from './helpers/chain.ts'
import { envelope, post, startTestNode } from './helpers/node.ts'
import { type Wallet, wallet } from './helpers/wallet.ts'

const SPINNER = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract Spinner {
    uint256 public value = 7;
    function spin() external pure { while (true) {} }
}`

const SPINS = 20
/**
 * generous: "the reads were not stalled behind execution" (they were, 6.4 s p99), not a performance
 * figure — the target is 50 ms, met on a quiet machine; on a machine at load average 12–32 this p99
 * measured 105–137 ms. The figure is printed for the record.
 */
const READ_P99_BOUND_MS = 1000

let node: KeelNode | undefined
let spinning: NodeProcess | undefined
const owner: Wallet = wallet()
const workDir = mkdtempSync(join(tmpdir(), 'keel-front-'))

test.after(async () => {
  await node?.stop()
  if (spinning !== undefined && !spinning.hasExited()) await spinning.kill('SIGKILL')
  rmSync(workDir, { recursive: true, force: true })
})

test(`reads stay answered (p99 < ${READ_P99_BOUND_MS} ms) while ${SPINS} runaway contract calls execute`, async () => {
  // each call burns its whole budget: 1 M gas of a loop is ~0.1 s of EVM on a quiet machine, 20 of them some seconds
  const configFile = join(workDir, 'keel.toml')
  writeNodeConfig(configFile, {
    dataDir: join(workDir, 'data'),
    genesis: [{ address: owner.address, balance: 1_000_000_000n }],
    txGasLimit: 1_000_000,
    batchSize: 1,
    batchTimeoutMs: 1,
  })
  spinning = await startNodeProcess({ configFile })
  const url = spinning.url
  const { address } = await deploy(url, owner, artifact(SPINNER, 'Spinner').bin)
  const spins = await Promise.all(
    Array.from({ length: SPINS }, () => submit(url, SUBMIT.invoke, owner.invoke(address, calldata('spin()')))),
  )
  const outcomes = Promise.all(spins.map((hash) => receiptOf(url, hash, 120_000)))
  let executing = true
  void outcomes.finally(() => {
    executing = false
  })
  const latencies: number[] = []
  const reads = [
    envelope('block_latestBlock', []),
    envelope('account_getBalance', [owner.address]),
    envelope('tx_getTransactionReceipt', [spins[0]]),
    envelope('contract_getCode', [address]),
  ]
  await Promise.all(
    reads.map(async (body) => {
      while (executing) {
        const started = performance.now()
        const reply = await post(url, body)
        latencies.push(performance.now() - started)
        assert.is(reply.status, 200)
      }
    }),
  )
  for (const reply of await outcomes) assert.is(reply.code, -32005, 'each loop ran out of its budget')
  latencies.sort((a, b) => a - b)
  const p99 = latencies[Math.floor(latencies.length * 0.99)]
  assert.ok(latencies.length >= 100, `only ${latencies.length} reads while the loops ran`)
  const load = loadavg()[0].toFixed(1)
  console.log(`  read p99 ${p99.toFixed(1)} ms over ${latencies.length} reads while ${SPINS} runaway calls executed (load average ${load})`)
  assert.ok(p99 < READ_P99_BOUND_MS, `read p99 ${p99.toFixed(1)} ms over ${latencies.length} reads while the loops ran`)
  await spinning.kill('SIGTERM')
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
