/**
 * The operator's routes (src/metrics/): GET /health, /ready and /metrics on a node, then a real
 * Prometheus (Debian's binary, installed by scripts/setup-test-env.sh) scraping one node and a
 * 4-VP network with the configuration `npm run network` writes, its HTTP API asked whether
 * committed transactions and the height moved.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { freePorts, PROMETHEUS_FILE, prometheusConfig, readNetwork } from '../src/devnet/network.ts'
import type { KeelNode } from '../src/node.ts'
import { commit, fails, SUBMIT, sleep, submit } from './helpers/chain.ts'
import { startTestNode } from './helpers/node.ts'
import { processNetwork } from './helpers/process-network.ts'
import { wallet } from './helpers/wallet.ts'

const alice = wallet()
const to = `0x${'33'.repeat(20)}`
const root = join(import.meta.dirname, '..')
const scratch = mkdtempSync(join(tmpdir(), 'keel-metrics-'))
const net = processNetwork('metrics')
let node: KeelNode | undefined
let prometheus: ChildProcess | undefined

test.after(async () => {
  prometheus?.kill('SIGKILL')
  await node?.stop()
  await net.killAll()
  rmSync(scratch, { recursive: true, force: true })
})

const get = async (url: string): Promise<{ status: number; type: string; text: string }> => {
  const response = await fetch(url)
  return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() }
}

/**
 * The sum of the series of `name` that carry every label of `labels` (whichever thread wrote
 * them: the chain thread, or the request thread that answered), undefined when there is none.
 */
const sample = (text: string, name: string, labels: Record<string, string> = {}): number | undefined => {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`)
  const values = text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => wanted.every((pair) => line.slice(0, line.lastIndexOf(' ')).includes(pair)))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)))
  return values.length === 0 ? undefined : values.reduce((sum, value) => sum + value, 0)
}

test('a node: /health alive, /ready ready, /metrics counts what it did in the Prometheus text format', async () => {
  node = await startTestNode(
    {
      node: { dataDir: join(scratch, 'solo') },
      // two request threads: a scrape on either collects both threads' series and the chain thread's
      jsonrpc: { threads: 2 },
      chain: { batchTimeoutMs: 5 },
      genesis: { accounts: [{ address: alice.address, balance: '1000000' }] },
    },
    // the layout of three or more cores (a verify worker and the state hasher beside them), whichever this machine has
    { verifyWorkers: 1 },
  )
  const health = await get(`${node.url}/health`)
  assert.is(health.status, 200)
  assert.is(JSON.parse(health.text).status, 'alive')
  const ready = await get(`${node.url}/ready`)
  assert.is(ready.status, 200, ready.text)
  assert.equal(JSON.parse(ready.text), { status: 'ready', state: 'normal', height: 0 })

  for (let value = 1; value <= 3; value++) await commit(node.url, SUBMIT.transfer, alice.transfer(to, value))
  const replay = alice.transfer(to, 3)
  await submit(node.url, SUBMIT.transfer, replay)
  await fails(node.url, SUBMIT.transfer, [replay], -32007)
  await fails(node.url, 'tx_getTransactionByHashh', [], -32601)

  const metrics = await get(`${node.url}/metrics`)
  assert.is(metrics.status, 200)
  assert.match(metrics.type, /^text\/plain; version=0\.0\.4/)
  const text = metrics.text
  assert.is(sample(text, 'keel_tx_admitted_total'), 4)
  assert.is(sample(text, 'keel_tx_rejected_total', { code: '-32007' }), 1)
  assert.ok((sample(text, 'keel_tx_committed_total') ?? 0) >= 3)
  assert.ok((sample(text, 'keel_block_height') ?? 0) >= 3)
  assert.is(sample(text, 'keel_rpc_requests_total', { method: 'tx_sendTransaction', code: '0' }), 4)
  assert.is(sample(text, 'keel_rpc_requests_total', { method: 'tx_sendTransaction', code: '-32007' }), 1)
  // a name no method has is counted under one label, so a client cannot grow the label set
  assert.is(sample(text, 'keel_rpc_requests_total', { method: 'unknown', code: '-32601' }), 1)
  assert.is(sample(text, 'keel_consensus_state', { state: 'normal' }), 1)
  assert.ok((sample(text, 'keel_ledger_size_bytes') ?? 0) > 0)
  // the chain thread's series and the request threads' arrive in one text, each thread labelled
  assert.ok(/^keel_thread_event_loop_lag_p99_seconds\{thread="chain"\}/m.test(text), 'the chain thread')
  for (const thread of ['rpc-1', 'rpc-2'])
    assert.ok(new RegExp(`^keel_thread_event_loop_lag_p99_seconds\\{thread="${thread}"\\}`, 'm').test(text), thread)
  // every thread's heap: the chain thread's and its request threads' read by themselves, the workers' from their slots
  for (const thread of ['chain', 'rpc-1', 'rpc-2', 'verify', 'state-hash']) {
    const used = sample(text, 'keel_thread_heap_used_bytes', { thread }) ?? 0
    const total = sample(text, 'keel_thread_heap_total_bytes', { thread }) ?? 0
    assert.ok(used > 1_000_000 && total >= used, `the heap of ${thread}: ${used} used of ${total}`)
    assert.ok(sample(text, 'keel_thread_external_memory_bytes', { thread }) !== undefined, `external memory of ${thread}`)
  }

  // every series the Grafana dashboard draws is one the node writes
  const dashboard = readFileSync(join(root, 'ops', 'grafana-dashboard.json'), 'utf8')
  const drawn = new Set([...dashboard.matchAll(/\bkeel_[a-z0-9_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, '')))
  const written = new Set([...text.matchAll(/^# TYPE (keel_[a-z0-9_]+) /gm)].map(([, name]) => name))
  for (const name of drawn) assert.ok(written.has(name), `the dashboard draws ${name}, which /metrics does not write`)
})

test('Prometheus scrapes a node and a 4-VP network: committed transactions and the height move', async () => {
  const plan = await net.up({ vps: 4 })
  assert.ok(readFileSync(join(net.dir, PROMETHEUS_FILE), 'utf8').includes(`127.0.0.1:${plan.nodes[3].jsonrpcPort}`))
  const solo = new URL(node!.url).host
  const config = `${prometheusConfig(readNetwork(net.dir), 1)}  - job_name: solo\n    static_configs:\n      - targets: ['${solo}']\n`
  writeFileSync(join(scratch, 'prometheus.yml'), config)
  const [port] = await freePorts(1)
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(scratch, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(scratch, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let log = ''
  prometheus.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000)
  })
  const api = `http://127.0.0.1:${port}`
  const query = async (expr: string): Promise<number | undefined> => {
    const reply = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`).catch(() => undefined)
    if (reply === undefined || !reply.ok) return undefined
    const body = (await reply.json()) as { data: { result: { value: [number, string] }[] } }
    const [first] = body.data.result
    return first === undefined ? undefined : Number(first.value[1])
  }
  const until = async (what: string, expr: string, holds: (value: number) => boolean): Promise<number> => {
    let value: number | undefined
    for (let i = 0; i < 120; i++) {
      value = await query(expr)
      if (value !== undefined && holds(value)) return value
      await sleep(500)
    }
    assert.unreachable(`${what}: ${expr} is ${value} after 60 s; prometheus said:\n${log}`)
    return 0
  }
  await until('every target up', 'sum(up)', (up) => up === 5)
  const heightBefore = await until('the network height', 'min(keel_block_height{job="keel"})', () => true)
  const committedBefore = await until('committed on the network', 'sum(keel_tx_committed_total{job="keel"})', () => true)
  const soloBefore = await until('committed on the node', 'sum(keel_tx_committed_total{job="solo"})', () => true)

  const hashes = await net.send(
    20,
    plan.nodes.map((n) => n.hostname),
  )
  assert.is(hashes.length, 20)
  await commit(node!.url, SUBMIT.transfer, alice.transfer(to, 99))

  // every VP commits every transaction: the sum over the four grows by 4 per transfer
  await until('committed on the network', 'sum(keel_tx_committed_total{job="keel"})', (v) => v >= committedBefore + 80)
  await until('the network height', 'min(keel_block_height{job="keel"})', (v) => v > heightBefore)
  await until('committed on the node', 'sum(keel_tx_committed_total{job="solo"})', (v) => v > soloBefore)
  await until('the VPs see their peers', 'min(keel_peers_connected{job="keel"})', (v) => v === 3)
  await until('the VPs are normal', 'sum(keel_consensus_state{job="keel",state="normal"})', (v) => v === 4)
})

test.run()
