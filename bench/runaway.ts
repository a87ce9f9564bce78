/**
 * The runaway workload (issue 14): twenty contract calls that loop until their gas runs out are in
 * flight while four reads (block_latestBlock, account_getBalance, a receipt, contract_getCode) are
 * sent back to back, and the reads' latency is what the row reports. On a node whose one thread
 * executes and answers, a read waits behind the loops; with request threads it should not.
 * The node is its own (1 M gas per call, one transaction per block), started like the bench's.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type NodeProcess, writeNodeConfig } from '../src/devnet/node-process.ts'
import { artifact, calldata, deploy, receiptOf, SUBMIT, submit } from '../test/helpers/chain.ts'
import { envelope, post } from '../test/helpers/node.ts'
import { wallet } from '../test/helpers/wallet.ts'

const SPINNER = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract Spinner {
    function spin() external pure { while (true) {} }
}`

export const RUNAWAY_CALLS = 20

export interface RunawayResult {
  reads: number
  readsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  /** how long the loops ran (the reads ran as long) */
  seconds: number
  /** how many calls ended out of gas, as they must */
  outOfGas: number
  /** reads answered with another HTTP status than 200 */
  failedReads: number
}

/**
 * Starts the node (`start` gets its config file), runs the workload, stops the node. `begin` marks
 * the clock start, `end` its end. The node's directory is removed after a run that went well (else its log stays).
 */
export async function runawayWorkload(
  start: (configFile: string) => Promise<NodeProcess>,
  begin: (pid: number) => void,
  /** called when the loops have ended, while the node still runs */
  end: () => void = () => {},
): Promise<RunawayResult & { pid: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-runaway-'))
  const owner = wallet()
  const configFile = join(dir, 'keel.toml')
  writeNodeConfig(configFile, {
    dataDir: join(dir, 'data'),
    genesis: [{ address: owner.address, balance: 1_000_000_000n }],
    txGasLimit: 1_000_000,
    batchSize: 1,
    batchTimeoutMs: 1,
  })
  const node = await start(configFile)
  let done = false
  try {
    const { address } = await deploy(node.url, owner, artifact(SPINNER, 'Spinner').bin)
    begin(node.pid)
    const started = performance.now()
    const spins = await Promise.all(
      Array.from({ length: RUNAWAY_CALLS }, () => submit(node.url, SUBMIT.invoke, owner.invoke(address, calldata('spin()')))),
    )
    let executing = true
    const outcomes = Promise.all(spins.map((hash) => receiptOf(node.url, hash, 300_000))).finally(() => {
      executing = false
    })
    const reads = [
      envelope('block_latestBlock', []),
      envelope('account_getBalance', [owner.address]),
      envelope('tx_getTransactionReceipt', [spins[0]]),
      envelope('contract_getCode', [address]),
    ]
    const latencies: number[] = []
    let failedReads = 0
    await Promise.all(
      reads.map(async (body) => {
        while (executing) {
          const sent = performance.now()
          const reply = await post(node.url, body)
          latencies.push(performance.now() - sent)
          if (reply.status !== 200) failedReads++
        }
      }),
    )
    const seconds = (performance.now() - started) / 1000
    end()
    const outOfGas = (await outcomes).filter((reply) => reply.code === -32005).length
    latencies.sort((a, b) => a - b)
    const at = (q: number): number => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] * 10) / 10
    done = true
    return {
      pid: node.pid,
      reads: latencies.length,
      readsPerSecond: Math.round(latencies.length / seconds),
      latencyP50Ms: at(0.5),
      latencyP99Ms: at(0.99),
      seconds: Math.round(seconds * 10) / 10,
      outOfGas,
      failedReads,
    }
  } finally {
    await node.kill('SIGINT')
    if (done) rmSync(dir, { recursive: true, force: true })
  }
}
