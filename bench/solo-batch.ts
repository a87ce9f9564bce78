/**
 * Measures solo ordering's batch settings: submit→receipt latency at low load, and committed
 * transfers/s under a burst, for several (batchSize, batchTimeoutMs) pairs. The node runs as its own
 * process on a fresh data directory; transactions are signed before the clock starts.
 *
 *   npx tsx bench/solo-batch.ts [--txs 5000] [--concurrency 64]
 */
import { join } from 'node:path'
import { type CommandSpec, parseOrExit } from '../src/command-line.ts'
import { startNodeProcess, writeNodeConfig } from '../src/devnet/node-process.ts'
import { parseJson, stringifyJson } from '../src/wire/json.ts'
import { wallet } from '../test/helpers/wallet.ts'
import { scratchDir } from './scratch.ts'

const batchCommand = {
  name: 'npm run bench:batch --',
  synopsis: '[options]',
  summary:
    "Solo ordering's batch settings: submit→receipt latency at low load and committed transfers/s under a burst, for several (batchSize, batchTimeoutMs) pairs, each on a fresh node process.",
  options: {
    txs: { type: 'string', value: 'n', default: '5000', description: 'transfers of each burst' },
    concurrency: { type: 'string', value: 'n', default: '64', description: 'submissions in flight at most' },
  },
} satisfies CommandSpec

const { values } = parseOrExit(batchCommand, process.argv.slice(2))
const TXS = Number(values.txs)
const CONCURRENCY = Number(values.concurrency)
const SETTINGS: [number, number][] = [
  [100, 10],
  [500, 10],
  [500, 50],
  [2000, 10],
]

async function rpc(url: string, method: string, params: unknown[]): Promise<{ code: number; message: string; result?: unknown }> {
  const response = await fetch(url, { method: 'POST', body: stringifyJson({ jsonrpc: '2.0', id: 1, method, params }) })
  return parseJson(await response.text(), { maxDepth: 64 }) as never
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]

async function measure(batchSize: number, batchTimeoutMs: number): Promise<string> {
  const senders = Array.from({ length: 500 }, () => wallet())
  const dir = scratchDir('keel-bench-')
  const configFile = join(dir, 'keel.toml')
  writeNodeConfig(configFile, {
    dataDir: join(dir, 'data'),
    batchSize,
    batchTimeoutMs,
    genesis: senders.map((s) => ({ address: s.address, balance: 1_000_000_000n })),
  })
  const node = await startNodeProcess({ configFile })
  try {
    await new Promise((resolve) => setTimeout(resolve, 500)) // let the verify workers load
    // latency: one transaction at a time
    const latencies: number[] = []
    for (let i = 0; i < 50; i++) {
      const tx = senders[i].transfer(senders[i + 1].address, 1)
      const started = performance.now()
      const sent = await rpc(node.url, 'tx_sendTransaction', [tx])
      for (;;) {
        const receipt = await rpc(node.url, 'tx_getTransactionReceipt', [sent.result])
        if (receipt.code !== -32001) break
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
      latencies.push(performance.now() - started)
    }
    latencies.sort((a, b) => a - b)
    // throughput: a burst of pre-signed transfers
    const signed = Array.from({ length: TXS }, (_, i) => senders[i % senders.length].transfer(senders[(i + 7) % senders.length].address, 1))
    const hashes: string[] = []
    const started = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < signed.length) {
          const reply = await rpc(node.url, 'tx_sendTransaction', [signed[next++]])
          if (reply.code === 0) hashes.push(reply.result as string)
        }
      }),
    )
    const accepted = performance.now()
    let missing = hashes
    while (missing.length > 0) {
      const still: string[] = []
      for (let i = 0; i < missing.length; i += 100) {
        const chunk = missing.slice(i, i + 100)
        const found = (await rpc(node.url, 'tx_getBatchReceipt', [{ hashes: chunk }])).result as { txHash: string }[]
        const done = new Set(found.map((r) => r.txHash))
        still.push(...chunk.filter((h) => !done.has(h)))
      }
      missing = still
      if (missing.length > 0) await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const committed = performance.now()
    return `| ${batchSize} | ${batchTimeoutMs} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${((hashes.length / (accepted - started)) * 1000).toFixed(0)} | ${((hashes.length / (committed - started)) * 1000).toFixed(0)} |`
  } finally {
    await node.kill('SIGTERM')
  }
}

console.log(`${TXS} transfers, ${CONCURRENCY} in flight; latency over 50 sequential transfers`)
console.log('| batchSize | batchTimeoutMs | latency p50 ms | latency p99 ms | accepted tx/s | committed tx/s |')
console.log('|---:|---:|---:|---:|---:|---:|')
for (const [size, timeout] of SETTINGS) console.log(await measure(size, timeout))
