/**
 * `npm run bench`: starts a node on a fresh data directory (or uses `--url`), runs the workloads
 * through a load generator in its own process (bench/loadgen.ts), and prints per workload accepted
 * and committed tx/s, p50/p99 submit→commit latency, p50/p99 submit→answer (the node answers once
 * the transaction is durable), the node's CPU per committed transaction (all threads, /proc), the
 * cores it kept busy, each thread's event-loop lag p99 and busy share (bench/loop-monitor.cjs,
 * preloaded into the node) and peak RSS; a live progress line while it runs; a JSON file and a
 * markdown table at the end (bench-results/).
 *
 *   npm run bench [-- --workloads transfers,eth,erc20,reads,logs,jvm,runaway] [--transfers 30000] [--eth 10000] [--erc20 10000] [--jvm 10000]
 *                 [--concurrency 128] [--rate <tx/s>] [--warmup 2000] [--read-seconds 10] [--read-concurrency 64] [--log-blocks 10000] [--cpu-prof] [--threads <n>] [--cores <n>] [--batch-timeout-ms <ms>] [--batch-size <n>]
 *                 [--node-repo <checkout>] [--label <name>] [--ledger]
 *
 * `--ledger` (issue 27) profiles every thread of the node (--cpu-prof) and prints, per transaction
 * workload, the node's CPU per committed transaction by stage of the pipeline (bench/ledger.ts),
 * each stage beside its floor: the same code on the same kind of transaction measured alone in a
 * process of its own, in the same run (bench/floors.ts).
 *
 * `--node-repo` runs the node of another checkout (its src/main.ts, its node_modules) under this
 * bench, so an older commit is measured side by side with this one on the same machine.
 *
 * `runaway` (not in the default list): reads while 20 contract calls loop until their gas runs out,
 * on a node of its own (bench/runaway.ts); its row gives the reads' p50 / p99.
 *
 * `eth` (not in the default list; issue 28) is the plain transfer sent in the Ethereum dialect: raw
 * EIP-1559 transactions through eth_sendRawTransaction, its CPU per committed transaction beside the
 * plain transfers' row.
 *
 * `jvm` (not in the default list) is the ERC-20 transfer written as a Java contract (vmType JVM); its row,
 * like the ERC-20 row, gives the node's CPU per committed transaction, the Java executor's share apart.
 *
 * `--rate` offers the transaction workloads at a fixed pace (latency at a given load) instead of as
 * fast as the node accepts them (throughput, and latency at saturation).
 *
 * `--warmup` (issue 27): each transaction workload first sends that many more of its transactions,
 * at the same pace, and waits for them to commit before its clock starts. A node just started runs
 * its code unoptimised and loads modules on first use: its first second's transactions waited
 * 200–300 ms for their block where later ones waited 20–50 (half load, two threads), which alone
 * made the run's p99. The figures are the node's steady state; `--warmup 0` measures from cold.
 *   npm run bench -- --url http://host:8081 --key 0x<funded private key> [--pid <node pid>[,<pid>…]]
 *   npm run bench -- --url http://vp1:8081,http://vp2:8081,… --key …   (a network: submissions go round the list)
 *
 * With `--url` the same workloads run against that node: the 1,000 accounts are funded from `--key`
 * first, the node's CPU and RSS are read only when `--pid` names its process on this machine (a list:
 * the CPU of all of them summed, the RSS of the largest), and
 * the log workload queries whatever blocks its transactions landed in. The loop lag of such nodes is
 * read when they were started with the monitor preloaded and `--loop-stats` names its directory:
 *   KEEL_LOOP_STATS_DIR=/tmp/loops NODE_OPTIONS="--require $PWD/bench/loop-monitor.cjs" npm run network -- up …
 *   npm run bench -- --url … --pid … --loop-stats /tmp/loops
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { MAX_LOG_RANGE } from '../src/api/sub.ts'
import { type CommandSpec, parseOrExit } from '../src/command-line.ts'
import { type NodeProcess, startNodeProcess, writeNodeConfig } from '../src/devnet/node-process.ts'
import { executorPidOf } from '../test/helpers/jvm.ts'
import { buildLedger, type Floors, formatLedger, profileSamples } from './ledger.ts'
import type { Job, Progress, ReadResult, SetupResult, TxResult } from './loadgen.ts'
import {
  countPerOp,
  cpuSeconds,
  formatLoads,
  rssBytes,
  type ThreadLoad,
  taskCpuSeconds,
  taskWakeUps,
  threadLoads,
  unmonitoredSplit,
} from './node-usage.ts'
import { READ_METHODS } from './read-methods.ts'
import { RUNAWAY_CALLS, runawayWorkload } from './runaway.ts'
import { scratchDir } from './scratch.ts'
import { derivedAccount } from './sdk-tx.ts'

export const benchCommand = {
  name: 'keel bench',
  synopsis: '[options]',
  summary:
    'Starts a node on a fresh data directory (or uses --url) and a load generator in its own process; prints a table and writes bench-results/.',
  options: {
    url: { type: 'string', value: 'url[,url…]', description: 'measure running nodes instead (submissions go round them); needs --key' },
    key: { type: 'string', value: 'hex', description: 'with --url: a funded private key' },
    pid: { type: 'string', value: 'pid[,pid…]', description: "with --url: the nodes' processes, for their CPU and memory" },
    workloads: { type: 'string', value: 'list', default: 'transfers,erc20,reads,logs', description: 'which workloads, comma-separated' },
    transfers: { type: 'string', value: 'n', default: '30000', description: 'plain transfers to send' },
    erc20: { type: 'string', value: 'n', default: '10000', description: 'ERC-20 transfer() calls to send' },
    jvm: { type: 'string', value: 'n', default: '10000', description: 'Java token transfer() calls to send (workload jvm)' },
    eth: {
      type: 'string',
      value: 'n',
      default: '10000',
      description: 'raw EIP-1559 transfers through eth_sendRawTransaction (workload eth)',
    },
    accounts: { type: 'string', value: 'n', default: '1000', description: 'sending accounts' },
    concurrency: { type: 'string', value: 'n', default: '128', description: 'submissions in flight' },
    rate: { type: 'string', value: 'tx/s', description: 'offered load (an open loop) instead of as fast as accepted' },
    warmup: {
      type: 'string',
      value: 'n',
      default: '2000',
      description:
        'transactions of each transaction workload sent first, at the same pace, and committed before the clock starts (0: the clock starts on a cold node)',
    },
    'read-seconds': { type: 'string', value: 's', default: '10', description: 'length of each read workload' },
    'read-concurrency': { type: 'string', value: 'n', default: '64', description: 'connections of the read workloads' },
    'log-blocks': { type: 'string', value: 'n', default: '10000', description: 'blocks of the sub_getLogs chain' },
    threads: { type: 'string', description: "the local node's jsonrpc.threads (request threads; its config's default when not given)" },
    cores: {
      type: 'string',
      value: 'n',
      description:
        "the local node's node.cores (its thread layout: 1 runs everything on the chain thread; its config's default when not given)",
    },
    'batch-timeout-ms': {
      type: 'string',
      value: 'ms',
      description:
        "the local node's chain.batchTimeoutMs (how long the oldest ready transaction waits for a fuller block; its config's default when not given)",
    },
    'batch-size': {
      type: 'string',
      value: 'n',
      description: "the local node's chain.batchSize (most transactions in a block; its config's default when not given)",
    },
    'cpu-prof': { type: 'boolean', default: false, description: "write the node's CPU profiles to bench-results/profiles/" },
    ledger: {
      type: 'boolean',
      default: false,
      description:
        "the node's CPU per transaction by stage, beside each stage's floor (profiles the node: its figures are a separate run's)",
    },
    'node-flags': {
      type: 'string',
      value: 'flags',
      description: "extra Node.js flags for the local node, space-separated (e.g. '--trace-gc')",
    },
    'node-repo': {
      type: 'string',
      value: 'checkout',
      description: "run another checkout's node (its src/main.ts, its node_modules) under this bench, side by side",
    },
    'loop-stats': {
      type: 'string',
      value: 'dir',
      description: 'with --url: where nodes started with bench/loop-monitor.cjs write their event-loop lines',
    },
    label: { type: 'string', value: 'name', description: 'a name for this run in the results' },
    out: { type: 'string', value: 'dir', default: 'bench-results', description: 'where the results go' },
  },
} satisfies CommandSpec

const { values } = parseOrExit(benchCommand, process.argv.slice(2))
const workloads = values.workloads.split(',')
const ACCOUNTS = Number(values.accounts)
const CONCURRENCY = Number(values.concurrency)
const SEED = `keel-bench-${Date.now()}`
const repoRoot = join(import.meta.dirname, '..')
const loopMonitor = join(import.meta.dirname, 'loop-monitor.cjs')
const profiling = values['cpu-prof'] || values.ledger
const profileDir = join(resolve(repoRoot, values.out), 'profiles')
/** where the nodes' threads write their loop figures (bench/loop-monitor.cjs) */
const loopStatsDir = values['loop-stats'] ?? (values.url === undefined ? scratchDir('keel-bench-loops-') : undefined)
if (values.url === undefined && loopStatsDir !== undefined) process.env.KEEL_LOOP_STATS_DIR = loopStatsDir

// ---- the node under test ----

interface Target {
  url: string
  /** nodes that take submissions, in turn (url first) */
  submitUrls: string[]
  wsUrl: string
  /** the node processes on this machine whose CPU and memory are read (a network's: all of them) */
  pids: number[]
  funderKey?: string
  stop(): Promise<void>
}

async function startLocalNode(name: string, chain: { batchSize?: number } = {}): Promise<Target> {
  const dir = scratchDir(`keel-bench-${name}-`)
  const configFile = join(dir, 'keel.toml')
  const genesis = Array.from({ length: ACCOUNTS }, (_, i) => ({ address: derivedAccount(SEED, i).address, balance: 10n ** 15n }))
  writeNodeConfig(configFile, {
    dataDir: join(dir, 'data'),
    genesis,
    ...chain,
    ...(values.threads === undefined ? {} : { threads: Number(values.threads) }),
    ...(values.cores === undefined ? {} : { cores: Number(values.cores) }),
    ...(values['batch-timeout-ms'] === undefined || chain.batchSize !== undefined
      ? {}
      : { batchTimeoutMs: Number(values['batch-timeout-ms']) }),
    ...(values['batch-size'] === undefined || chain.batchSize !== undefined ? {} : { batchSize: Number(values['batch-size']) }),
  })
  const node = await launchNode(configFile)
  return {
    url: node.url,
    submitUrls: [node.url],
    wsUrl: node.url.replace(/^http/, 'ws'),
    pids: [node.pid],
    stop: async () => void (await node.kill('SIGINT')),
  }
}

/** The node of a config file (this checkout's, or --node-repo's), with the loop monitor and --cpu-prof. */
async function launchNode(configFile: string): Promise<NodeProcess> {
  if (profiling) mkdirSync(profileDir, { recursive: true })
  // the node's log is kept beside its config: after a run that went wrong it is the first thing to read
  const logFile = join(dirname(configFile), 'node.log')
  const node: NodeProcess = await startNodeProcess({
    configFile,
    logLevel: 'info',
    logFile,
    nodeArgs: [
      '--require',
      loopMonitor,
      ...(profiling ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      ...(values['node-flags']?.split(' ').filter((flag) => flag !== '') ?? []),
    ],
    ...(values['node-repo'] === undefined ? {} : { repoRoot: values['node-repo'] }),
  })
  console.log(`node log: ${logFile}`)
  return node
}

function remoteTarget(): Target {
  // several nodes of one network: submissions go round the list, the first also serves set-up, commits and reads
  const urls = (values.url as string).split(',').filter((url) => url !== '')
  const url = urls[0]
  if (values.key === undefined) throw new Error('--url needs --key <private key of a funded account> to fund the benchmark accounts')
  return {
    url,
    submitUrls: urls,
    wsUrl: url.replace(/^http/, 'ws'),
    pids: values.pid === undefined ? [] : values.pid.split(',').map(Number),
    funderKey: values.key,
    stop: async () => {},
  }
}

// ---- what a workload cost the node (bench/node-usage.ts) ----

interface Usage {
  /** CPU of every node thread over the workload, in % of one core */
  cpuPercent: number | null
  /** CPU seconds of the node over the workload (all threads, all processes given) */
  cpuSeconds: number | null
  /** CPU seconds per wall second: how many cores the node kept busy */
  coresBusy: number | null
  peakRssMiB: number | null
  threads: ThreadLoad[]
  /** load average of the machine at the end (it is shared) */
  loadAverage: string
  /** the window measured, CLOCK_MONOTONIC µs (the clock of the profiles' samples) */
  windowUs: [number, number]
  /** CPU seconds of the threads without an event loop, V8's platform threads apart from those started later */
  unmonitored?: { platform: number; later: number }
  /** times the threads without an event loop slept and were woken (node-usage.ts taskWakeUps) */
  otherWakeUps?: number
}

const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)

/** Samples the node from the workload's clock start (`begin`, when the load generator says so) to `stop`. */
function sampleUsage(pids: number[]): { begin(): void; stop(): Usage; line(): string } {
  let startedCpu = 0
  let startedTasks = new Map<string, number>()
  let startedWakeUps = new Map<string, number>()
  let started = performance.now()
  let startedAt = Date.now()
  let startedUs = monotonicUs()
  let peak = pids.length === 0 ? 0 : rssBytes(pids)
  let lastCpu = 0
  let lastAt = started
  let recentCpu = 0
  const begin = (): void => {
    if (pids.length === 0) return
    startedCpu = cpuSeconds(pids)
    startedTasks = taskCpuSeconds(pids)
    startedWakeUps = taskWakeUps(pids)
    started = performance.now()
    startedAt = Date.now()
    startedUs = monotonicUs()
    lastCpu = startedCpu
    lastAt = started
  }
  begin()
  const timer = setInterval(() => {
    if (pids.length === 0) return
    try {
      peak = Math.max(peak, rssBytes(pids))
      const cpu = cpuSeconds(pids)
      const at = performance.now()
      recentCpu = ((cpu - lastCpu) / ((at - lastAt) / 1000)) * 100
      lastCpu = cpu
      lastAt = at
    } catch {}
  }, 200)
  return {
    begin,
    stop() {
      clearInterval(timer)
      const loadAverage = os
        .loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')
      const windowUs: [number, number] = [startedUs, monotonicUs()]
      if (pids.length === 0)
        return { cpuPercent: null, cpuSeconds: null, coresBusy: null, peakRssMiB: null, threads: [], loadAverage, windowUs }
      const used = cpuSeconds(pids) - startedCpu
      const tasks = taskCpuSeconds(pids)
      const wall = (performance.now() - started) / 1000
      const wakeUps = taskWakeUps(pids)
      const woken = (key: string): number => (wakeUps.get(key) ?? 0) - (startedWakeUps.get(key) ?? 0)
      const threads = threadLoads(loopStatsDir, pids, startedAt, Date.now()).map((load) => {
        const key = [...wakeUps.keys()].find((task) => load.tid !== undefined && task.endsWith(`/${load.tid}`))
        return key === undefined ? load : { ...load, wakeUps: woken(key) }
      })
      const monitoredTids = new Set(threads.map((load) => `${load.tid}`))
      const otherWakeUps = [...wakeUps.keys()]
        .filter((key) => !monitoredTids.has(key.split('/')[1]))
        .reduce((sum, key) => sum + woken(key), 0)
      const unmonitored = unmonitoredSplit(loopStatsDir, startedTasks, tasks, threads)
      return {
        cpuPercent: Math.round((used / wall) * 100),
        cpuSeconds: used,
        coresBusy: Math.round((used / wall) * 100) / 100,
        peakRssMiB: Math.round(peak / 2 ** 20),
        threads,
        loadAverage,
        windowUs,
        ...(unmonitored === undefined ? {} : { unmonitored }),
        otherWakeUps,
      }
    },
    line: () => (pids.length === 0 ? '' : ` · node CPU ${Math.round(recentCpu)}% RSS ${Math.round(rssBytes(pids) / 2 ** 20)} MiB`),
  }
}

// ---- the load generator ----

function startLoadgen(): ChildProcess {
  return fork(join(import.meta.dirname, 'loadgen.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
}

function runJob<T>(loadgen: ChildProcess, job: Job, usage?: { begin(): void; line(): string }): Promise<T> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    let lastLogged = 0
    let lastWord = { at: performance.now(), what: 'nothing yet' }
    // a run that stops moving says what it waits for instead of hanging silently
    const watchdog = setInterval(() => {
      const silent = (performance.now() - lastWord.at) / 1000
      if (silent >= 60)
        process.stderr.write(`\n[${job.kind}] no word from the load generator for ${Math.round(silent)} s; last: ${lastWord.what}\n`)
    }, 60_000)
    const onMessage = (message: { type: string; progress?: Progress; result?: T; message?: string }): void => {
      lastWord = {
        at: performance.now(),
        what:
          message.progress === undefined ? message.type : `${message.progress.label} ${message.progress.done}/${message.progress.total}`,
      }
      if (message.type === 'clock') {
        usage?.begin()
        return
      }
      if (message.type === 'progress' && message.progress !== undefined) {
        const { label, done, total } = message.progress
        const seconds = (performance.now() - started) / 1000
        const rate = done / seconds
        const of = total > 0 ? `/${total.toLocaleString('en')}` : ''
        const line = `[${label}] ${done.toLocaleString('en')}${of} · ${Math.round(rate).toLocaleString('en')}/s · ${seconds.toFixed(1)} s${usage?.line() ?? ''}`
        // a terminal gets one line rewritten in place; a log file a line every 5 s
        if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`)
        else if (performance.now() - lastLogged > 5000) {
          lastLogged = performance.now()
          process.stderr.write(`${line}\n`)
        }
        return
      }
      loadgen.off('message', onMessage)
      loadgen.off('exit', onExit)
      clearInterval(watchdog)
      if (process.stderr.isTTY) process.stderr.write('\r\x1b[K')
      if (message.type === 'result') resolve(message.result as T)
      else reject(new Error(`load generator: ${message.message}`))
    }
    const onExit = (code: number | null, signal: string | null): void => {
      loadgen.off('message', onMessage)
      clearInterval(watchdog)
      reject(new Error(`the load generator exited (${signal ?? `code ${code}`}) during ${job.kind}`))
    }
    loadgen.on('message', onMessage)
    loadgen.once('exit', onExit)
    loadgen.send(job)
  })
}

// ---- the run ----

interface Row extends Usage {
  workload: string
  detail: string
  rate: string
  latency: string
  /** submit → answer (durable), transaction workloads only */
  answer: string
  /** node CPU per committed transaction or per request, µs */
  cpuPerOpUs: number | null
  /** committed transactions or requests: the per-thread CPU is divided by it */
  ops: number
  /** a transaction workload of the local node: its ledger can be read from the profiles */
  ledgerOf?: { workload: keyof typeof WORKLOAD_NAMES; pid: number }
}

const perOp = (usage: Usage, ops: number): number | null =>
  usage.cpuSeconds === null || ops === 0 ? null : Math.round((usage.cpuSeconds * 1e6) / ops)

const fmt = (n: number): string => Math.round(n).toLocaleString('en')
const rows: Row[] = []
const results: Record<string, unknown> = {}

const WORKLOAD_NAMES = {
  transfers: 'plain transfers',
  erc20: 'ERC-20 transfer()',
  jvm: 'Java token transfer() (vmType JVM)',
  // issue 28
  eth: 'raw EIP-1559 transfers (eth_sendRawTransaction)',
}

async function measureTx(loadgen: ChildProcess, target: Target, name: keyof typeof WORKLOAD_NAMES, job: Job): Promise<TxResult> {
  // the node's CPU includes its Java executor's; the executor's share is reported apart
  const executors = target.pids.map(executorPidOf).filter((pid) => pid !== undefined)
  const usage = sampleUsage([...target.pids, ...executors])
  const executorUsage = sampleUsage(executors)
  const result = await runJob<TxResult>(loadgen, job, usage)
  const used = usage.stop()
  const executorUsed = executorUsage.stop()
  // the CPU column counts the executor in; the detail says its share
  const executorShare = perOp(executorUsed, result.committed)
  const cpuPerTx = name !== 'jvm' || executorShare === null ? '' : `; ${fmt(executorShare)} µs CPU per transaction in the Java executor`
  // the hashes feed the read workload; the result file keeps the figures
  results[name] = {
    ...result,
    hashes: undefined,
    ...used,
    cpuPerTxUs: perOp(used, result.committed),
    executorCpuSeconds: executorUsed.cpuSeconds,
  }
  rows.push({
    workload: WORKLOAD_NAMES[name],
    detail: `${job.kind !== 'setup' && 'rate' in job && job.rate !== undefined ? `offered at ${fmt(job.rate)}/s; ` : ''}${fmt(result.accepted)} accepted, ${fmt(result.committed)} committed, ${result.invalid} invalid, ${result.rejected} rejected; blocks ${result.firstBlock}–${result.lastBlock}; load generator CPU ${result.loadgenCpuPercent}%${cpuPerTx}`,
    rate: `${fmt(result.acceptedPerSecond)} accepted/s · **${fmt(result.committedPerSecond)} committed/s**`,
    latency: `${result.latencyP50Ms} / ${result.latencyP99Ms} ms`,
    answer: `${result.answerP50Ms} / ${result.answerP99Ms} ms`,
    cpuPerOpUs: perOp(used, result.committed),
    ops: result.committed,
    ...used,
    ...(values.url === undefined ? { ledgerOf: { workload: name, pid: target.pids[0] } } : {}),
  })
  if (result.firstRejection !== undefined) console.error(`${name}: first rejection: ${result.firstRejection}`)
  return result
}

async function measureReads(
  loadgen: ChildProcess,
  target: Target,
  name: string,
  job: Job,
  detail: (r: ReadResult) => string,
): Promise<void> {
  const usage = sampleUsage(target.pids)
  const result = await runJob<ReadResult>(loadgen, job, usage)
  const used = usage.stop()
  results[name] = { ...result, ...used, cpuPerRequestUs: perOp(used, result.requests) }
  rows.push({
    workload: name,
    detail: detail(result),
    rate: `**${fmt(result.requestsPerSecond)} requests/s**`,
    latency: `${result.latencyP50Ms} / ${result.latencyP99Ms} ms`,
    answer: '',
    cpuPerOpUs: perOp(used, result.requests),
    ops: result.requests,
    ...used,
  })
  if (result.firstError !== undefined) console.error(`${name}: ${result.errors} errors, first: ${result.firstError}`)
}

async function main(): Promise<void> {
  const loadgen = startLoadgen()
  const target = values.url === undefined ? await startLocalNode('main') : remoteTarget()
  console.error(
    `node ${target.url}${target.pids.length === 0 ? '' : ` (pid ${target.pids.join(', ')})`}; ${ACCOUNTS} accounts; concurrency ${CONCURRENCY}`,
  )
  const common = workloadOn(target)
  let hashes: string[] = []
  /** the blocks the first transaction workload filled, for the full-block reads */
  let filled: { first: number; last: number; txs: number } | undefined
  try {
    const setup = await setUp(loadgen, target, workloads.includes('erc20'), workloads.includes('jvm'))
    if (workloads.includes('transfers')) {
      const result = await measureTx(loadgen, target, 'transfers', { kind: 'transfers', ...common, count: Number(values.transfers) })
      hashes = result.hashes
      filled = { first: result.firstBlock, last: result.lastBlock, txs: result.committed }
    }
    // issue 28: the same transfers in the Ethereum dialect, its CPU per transaction beside the row above
    if (workloads.includes('eth')) {
      const result = await measureTx(loadgen, target, 'eth', { kind: 'eth', ...common, count: Number(values.eth) })
      if (hashes.length === 0) {
        hashes = result.hashes
        filled = { first: result.firstBlock, last: result.lastBlock, txs: result.committed }
      }
    }
    for (const [kind, token] of [
      ['erc20', setup.token],
      ['jvm', setup.jvmToken],
    ] as const) {
      if (!workloads.includes(kind)) continue
      const result = await measureTx(loadgen, target, kind, { kind, ...common, count: Number(values[kind]), token: token as string })
      if (hashes.length === 0) {
        hashes = result.hashes
        filled = { first: result.firstBlock, last: result.lastBlock, txs: result.committed }
      }
    }
    if (workloads.includes('reads')) {
      if (hashes.length === 0)
        throw new Error('the reads workload looks up the transactions of the transfers or erc20 workload: run one of them too')
      const reads = {
        kind: 'reads',
        url: target.url,
        seconds: Number(values['read-seconds']),
        concurrency: Number(values['read-concurrency']),
        hashes,
      } as const
      await measureReads(
        loadgen,
        target,
        'reads (mix)',
        reads,
        (r) => `${fmt(r.requests)} requests, the four below in equal shares, ${r.errors} errors`,
      )
      for (const only of READ_METHODS) {
        await measureReads(loadgen, target, `reads: ${only}`, { ...reads, seconds: reads.seconds / 2, only }, (r) =>
          only === 'block_latestBlock' && r.latestBlock !== undefined
            ? `${fmt(r.requests)} requests, ${r.errors} errors; the latest block, ${fmt(r.latestBlock.number)}, holds ${fmt(r.latestBlock.txs)} transactions (${fmt(Math.round(r.latestBlock.bytes / 1024))} KiB of JSON): each request's cost follows its size`
            : `${fmt(r.requests)} requests, ${r.errors} errors`,
        )
      }
      if (filled !== undefined) {
        const { first, last, txs } = filled
        // whole blocks with their transactions (isPlain false): the answer a block explorer asks for
        await measureReads(
          loadgen,
          target,
          'reads: block_getBlockByNumber, full',
          { ...reads, seconds: reads.seconds / 2, only: 'block_getBlockByNumber', fullBlocks: { first, last } },
          (r) =>
            `${fmt(r.requests)} requests, blocks ${first}–${last} with their transactions (${fmt(txs / (last - first + 1))} on average), ${r.errors} errors`,
        )
      }
    }
  } finally {
    await target.stop()
  }
  if (workloads.includes('logs')) await logsWorkload(loadgen)
  if (workloads.includes('runaway')) await measureRunaway()
  loadgen.kill()
  report()
}

/** What every transaction workload on `target` shares. */
const workloadOn = (target: Target) => ({
  url: target.url,
  submitUrls: target.submitUrls,
  wsUrl: target.wsUrl,
  seed: SEED,
  accounts: ACCOUNTS,
  concurrency: CONCURRENCY,
  ...(values.rate === undefined ? {} : { rate: Number(values.rate) }),
  warmup: Number(values.warmup),
})

/** Funds the accounts when the node's genesis does not, and deploys the token when asked. */
function setUp(loadgen: ChildProcess, target: Target, token: boolean, jvmToken = false): Promise<SetupResult> {
  return runJob<SetupResult>(loadgen, {
    kind: 'setup',
    url: target.url,
    seed: SEED,
    accounts: ACCOUNTS,
    funderKey: target.funderKey,
    token,
    jvmToken,
  })
}

/** Reads while runaway contract calls execute (bench/runaway.ts), on a node of its own. */
async function measureRunaway(): Promise<void> {
  if (values.url !== undefined) throw new Error('the runaway workload starts a node of its own: not with --url')
  let usage: ReturnType<typeof sampleUsage> | undefined
  let used: Usage | undefined
  const result = await runawayWorkload(
    launchNode,
    (pid) => {
      usage = sampleUsage([pid])
    },
    () => {
      used = usage?.stop()
    },
  )
  if (used === undefined) throw new Error('the runaway workload ended before it began')
  results.runaway = { ...result, ...used }
  rows.push({
    workload: `reads while ${RUNAWAY_CALLS} runaway calls execute`,
    detail: `${fmt(result.reads)} reads in ${result.seconds} s (block_latestBlock, account_getBalance, a receipt, contract_getCode; 4 in flight); ${result.outOfGas} of ${RUNAWAY_CALLS} calls ran out of gas`,
    rate: `${fmt(result.readsPerSecond)} requests/s`,
    latency: `**${result.latencyP50Ms} / ${result.latencyP99Ms} ms**`,
    answer: '',
    cpuPerOpUs: null,
    ops: result.reads,
    ...used,
  })
}

/** sub_getLogs over a long chain: built on its own node with one transaction per block. */
async function logsWorkload(loadgen: ChildProcess): Promise<void> {
  const blocks = Number(values['log-blocks'])
  const target = values.url === undefined ? await startLocalNode('logs', { batchSize: 1 }) : remoteTarget()
  try {
    const common = workloadOn(target)
    const setup = await setUp(loadgen, target, true)
    const built = await runJob<TxResult>(
      loadgen,
      // built as fast as it goes: --rate is for the measured workloads
      { kind: 'erc20', ...common, rate: undefined, warmup: 0, count: blocks, token: setup.token as string },
      sampleUsage(target.pids),
    )
    console.error(`logs: built blocks ${built.firstBlock}–${built.lastBlock} (${fmt(built.committedPerSecond)} one-transaction blocks/s)`)
    results.logChain = { blocks: built.lastBlock - built.firstBlock + 1, blocksPerSecond: built.committedPerSecond }
    await measureReads(
      loadgen,
      target,
      'sub_getLogs',
      {
        kind: 'logs',
        url: target.url,
        seconds: Number(values['read-seconds']),
        concurrency: 4,
        token: setup.token as string,
        fromBlock: built.firstBlock,
        toBlock: built.lastBlock,
        maxRange: MAX_LOG_RANGE,
      },
      (r) =>
        `blocks ${built.firstBlock}–${built.lastBlock} (${fmt(built.lastBlock - built.firstBlock + 1)}) in windows of ${fmt(r.blocksPerQuery ?? 0)} blocks, one log each; ${fmt(r.logsPerSecond ?? 0)} logs/s; ${r.errors} errors`,
    )
  } finally {
    await target.stop()
  }
}

/** CPU per operation of the threads without an event loop of their own (libuv's pool: the pool log's fsync; V8's GC helpers) */
function otherThreads(r: Row): string {
  const measured = r.threads.map((load) => load.cpuSeconds)
  if (r.cpuSeconds === null || r.ops === 0 || measured.length === 0 || measured.some((cpu) => cpu === undefined)) return ''
  const rest = r.cpuSeconds - measured.reduce((sum: number, cpu) => sum + (cpu ?? 0), 0)
  const perOp = (seconds: number): number => Math.round((seconds * 1e6) / r.ops)
  const split =
    r.unmonitored === undefined ? '' : ` (V8 platform ${perOp(r.unmonitored.platform)}, started later ${perOp(r.unmonitored.later)})`
  return ` · other threads ${perOp(rest)} µs${split}${countPerOp(r.otherWakeUps, r.ops, 'wake-ups')}`
}

function report(): void {
  const date = new Date().toISOString()
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node.js ${process.version}`
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim()
  const label = values.label === undefined ? '' : ` (${values.label})`
  const table = [
    `Measured ${date.slice(0, 10)} on ${machine}${label}; \`${command}\`; the node and the load generator share the machine.`,
    '',
    '| workload | rate | p50 / p99 submit → commit (reads: → answer) | p50 / p99 submit → answer (durable) | node CPU per tx or request | cores busy | event-loop lag p99 per thread (busy share) | node peak RSS | load average | detail |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.workload} | ${r.rate} | ${r.latency} | ${r.answer} | ${r.cpuPerOpUs === null ? 'n/a' : `**${fmt(r.cpuPerOpUs)} µs**`} | ${r.coresBusy ?? 'n/a'} of ${os.cpus().length} | ${formatLoads(r.threads, r.ops) || 'n/a'}${otherThreads(r)} | ${r.peakRssMiB ?? 'n/a'} MiB | ${r.loadAverage} | ${r.detail} |`,
    ),
  ].join('\n')
  const dir = resolve(repoRoot, values.out)
  mkdirSync(dir, { recursive: true })
  const stem = join(dir, `bench-${date.replace(/[:.]/g, '-')}`)
  writeFileSync(
    `${stem}.json`,
    `${JSON.stringify({ date, machine, command, label: values.label, concurrency: CONCURRENCY, accounts: ACCOUNTS, results }, null, 2)}\n`,
  )
  const ledgers = values.ledger ? ledgerTables() : ''
  writeFileSync(`${stem}.md`, `${table}\n${ledgers}`)
  console.log(`\n${table}\n${ledgers}\nwritten: ${stem}.json, ${stem}.md`)
}

/** Issue 27: each transaction workload's CPU by stage, beside its stages' floors (bench/ledger.ts, bench/floors.ts). */
function ledgerTables(): string {
  const tables: string[] = []
  for (const r of rows) {
    if (r.ledgerOf === undefined || r.cpuSeconds === null || r.ops === 0) continue
    const samples = profileSamples(profileDir, r.ledgerOf.pid, r.windowUs[0], r.windowUs[1])
    const ledger = buildLedger(samples, r.threads, r.cpuSeconds, r.ops, r.unmonitored)
    const verifyHop = r.threads.some((thread) => thread.thread.startsWith('verify'))
    tables.push(formatLedger(r.workload, ledger, floorsOf(r.ledgerOf.workload, verifyHop)))
  }
  return tables.length === 0 ? '' : `\n${tables.join('\n\n')}\n`
}

/** The floors of a workload's stages, measured by bench/floors.ts in a process of its own (no load generator, no other node threads). */
function floorsOf(workload: string, verifyHop: boolean): Floors {
  try {
    const text = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, 'floors.ts'),
        '--workload',
        workload,
        '--json',
        ...(verifyHop ? ['--verify-hop'] : []),
        ...(values.rate === undefined ? [] : ['--rate', values.rate]),
      ],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    return JSON.parse(text) as Floors
  } catch (error) {
    console.error(`floors of ${workload}: ${(error as Error).message}`)
    return {}
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message)
  process.exit(1)
})
