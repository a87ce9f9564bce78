/**
 * `npm run soak -- --minutes N`: one node under steady load for N minutes, checking that nothing is
 * lost or duplicated and that its memory stays flat (reliability.md L2/L4 on one node; not part
 * of `npm test`).
 *
 * 1. Starts a node on a fresh data directory (a child process, its log beside its data), funds
 *    the sending accounts in its genesis and deploys the bench's ERC-20 token (bench/token.ts).
 * 2. Measures the maximum: a closed loop (128 in flight) of the mix for `--calibrate-seconds`,
 *    committed transactions per second (or takes `--max`).
 * 3. Offers `--fraction` of it for `--minutes`, an open loop (transaction i leaves at i/rate s):
 *    plain transfers and ERC-20 transfer() calls (`--contract-share`), signed as the official SDK
 *    signs (bench/sdk-tx.ts). After -32006 the same signed transaction is sent again (200 ms later,
 *    up to 10 times); after a broken connection too (-32007 then means it was taken the first time).
 *    Alongside: reads at `--read-rate` per second (receipts, latest block, blocks by number,
 *    balances), WebSocket push (full blocks, the token's logs, system status) and polling
 *    subscriptions (block hashes, the token's logs) polled every 2 s.
 * 4. Every minute a line: offered, accepted, committed, submit→commit p50/p99, reads and their p99,
 *    the node's RSS split into anonymous and file-backed memory (/proc: LMDB's mapped file is in the
 *    second, a leak shows in the first), each thread's V8 heap in use (from GET /metrics,
 *    keel_thread_heap_used_bytes), and CPU. The summary gives the slope of anonymous memory after
 *    the warm-up (`--warm-up` minutes), a least-squares fit over the remaining minutes.
 * 5. Drains, then audits: every accepted hash committed exactly once (from the pushed blocks, an
 *    unbroken run of numbers), those not pushed looked up (a receipt: missing from the push; a
 *    discard record: invalid; neither: LOST); every block hash polled once; one Transfer log per
 *    committed call, pushed and polled; a sample of hashes read back from the node. Writes
 *    bench-results/soak-<time>.{json,md} and exits 1 when anything was lost or duplicated.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import WebSocket from 'ws'
import { type CommandSpec, parseOrExit } from '../src/command-line.ts'
import { startNodeProcess, writeNodeConfig } from '../src/devnet/node-process.ts'
import { stringifyJson } from '../src/wire/json.ts'
import { artifact, calldata } from '../test/helpers/chain.ts'
import { cpuSeconds, residentOf } from './node-usage.ts'
import { type RawConnection, rawConnection } from './raw-http.ts'
import { scratchDir } from './scratch.ts'
import { derivedAccount, type SdkAccount, sdkTransaction } from './sdk-tx.ts'
import { TOKEN_SOURCE } from './token.ts'

export const soakCommand = {
  name: 'npm run soak --',
  synopsis: '[options]',
  summary:
    'A node under steady load (transfers and contract calls, subscriptions, reads); reports lost and duplicated transactions and RSS every minute.',
  options: {
    minutes: { type: 'string', value: 'n', default: '10', description: 'length of the steady load' },
    fraction: { type: 'string', value: 'f', default: '0.5', description: 'share of the measured maximum to offer' },
    max: { type: 'string', value: 'tx/s', description: 'the maximum, instead of measuring it' },
    'calibrate-seconds': { type: 'string', value: 's', default: '30', description: 'length of the measurement of the maximum' },
    'contract-share': {
      type: 'string',
      value: 'f',
      default: '0.3',
      description: 'share of ERC-20 transfer() calls among the transactions',
    },
    accounts: { type: 'string', value: 'n', default: '500', description: 'sending accounts' },
    concurrency: { type: 'string', value: 'n', default: '64', description: 'submissions in flight at most during the soak' },
    'read-rate': { type: 'string', value: 'n', default: '50', description: 'read requests per second' },
    'warm-up': {
      type: 'string',
      value: 'min',
      default: '5',
      description: 'minutes left out of the anonymous-memory slope (caches and pools fill up in them)',
    },
    out: { type: 'string', value: 'dir', default: 'bench-results', description: 'where the results go' },
  },
} satisfies CommandSpec

const { values } = parseOrExit(soakCommand, process.argv.slice(2))
const number = (name: keyof typeof values): number => {
  const value = Number(values[name])
  if (!Number.isFinite(value) || value < 0) {
    console.error(`--${name}: not a number: ${values[name]}`)
    process.exit(2)
  }
  return value
}
const MINUTES = number('minutes')
const FRACTION = number('fraction')
const CONTRACT_SHARE = number('contract-share')
const ACCOUNTS = Math.max(2, Math.round(number('accounts')))
const CONCURRENCY = Math.max(1, Math.round(number('concurrency')))
const READ_RATE = number('read-rate')
const WARM_UP_MINUTES = number('warm-up')
const SEED = `keel-soak-${Date.now()}`
const repoRoot = join(import.meta.dirname, '..')
const accounts: SdkAccount[] = Array.from({ length: ACCOUNTS }, (_, i) => derivedAccount(SEED, i))

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const fmt = (n: number): string => Math.round(n).toLocaleString('en')
/** MiB per minute: the least-squares slope of `values` against their index (0 for fewer than two) */
function slopePerMinute(values: number[]): number {
  const n = values.length
  if (n < 2) return 0
  const meanX = (n - 1) / 2
  const meanY = values.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  for (const [x, y] of values.entries()) {
    num += (x - meanX) * (y - meanY)
    den += (x - meanX) ** 2
  }
  return num / den
}

/** each thread's V8 heap in use, MiB, as GET /metrics reports it (keel_thread_heap_used_bytes); empty when the scrape fails */
async function threadHeapsMiB(url: string): Promise<Record<string, number>> {
  const heaps: Record<string, number> = {}
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()
    for (const match of text.matchAll(/^keel_thread_heap_used_bytes\{thread="([^"]*)"\} (\S+)$/gm))
      heaps[match[1]] = Math.round(Number(match[2]) / 2 ** 20)
  } catch {}
  return heaps
}
const heapsText = (heaps: Record<string, number>): string =>
  Object.entries(heaps)
    .map(([thread, mib]) => `${thread} ${mib}`)
    .join(', ')

const loadAverage = (): string =>
  os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')

/** one minute of the soak */
interface MinuteRow {
  minute: number
  offered: number
  accepted: number
  committed: number
  p50Ms: number
  p99Ms: number
  reads: number
  readP99Ms: number
  rssMiB: number
  anonMiB: number
  fileMiB: number
  cpuPercent: number
  height: number
  load: string
  /** V8 heap in use by thread */
  heapsMiB: Record<string, number>
}

interface Reply {
  code: number
  message: string
  result?: unknown
}

let nextId = 1
const post = async (connection: RawConnection, method: string, params: string): Promise<Reply> =>
  JSON.parse(
    await connection.post(`{"jsonrpc":"2.0","namespace":"global","id":${nextId++},"method":"${method}","params":${params}}`),
  ) as Reply

/** one connection for set-up, polling and the audit, opened again when the node closed it */
function controlChannel(url: string): (method: string, params: unknown[]) => Promise<Reply> {
  let connection: RawConnection | undefined
  let queue: Promise<unknown> = Promise.resolve()
  return (method, params) => {
    const call = queue.then(async () => {
      if (connection === undefined || connection.closed) connection = await rawConnection(url)
      return post(connection, method, stringifyJson(params))
    })
    queue = call.catch(() => undefined)
    return call
  }
}

// ---- what the node tells: pushed blocks, logs, status ----

interface Observed {
  /** commit time (performance.now()) of each hash pushed in a block */
  committed: Map<string, number>
  duplicates: string[]
  blockNumbers: number[]
  blockHashes: string[]
  logs: Set<string>
  duplicateLogs: number
  statuses: Map<string, number>
  closed: string | undefined
}

async function watch(wsUrl: string, token: string): Promise<{ observed: Observed; close(): void }> {
  const observed: Observed = {
    committed: new Map(),
    duplicates: [],
    blockNumbers: [],
    blockHashes: [],
    logs: new Set(),
    duplicateLogs: 0,
    statuses: new Map(),
    closed: undefined,
  }
  const socket = new WebSocket(wsUrl, { maxPayload: 256 * 1024 * 1024 })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  const kinds = new Map<string, 'block' | 'logs' | 'status'>()
  const pending = new Map<number, (id: string) => void>()
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as {
      id?: number
      code?: number
      result?: string
      params?: { subscription: string; result: Record<string, unknown> }
    }
    if (message.id !== undefined) {
      if (message.code !== 0) throw new Error(`sub_subscribe refused: ${data.toString()}`)
      pending.get(message.id)?.(message.result as string)
      return
    }
    const pushed = message.params
    if (pushed === undefined) return
    const kind = kinds.get(pushed.subscription)
    const now = performance.now()
    if (kind === 'block') {
      const block = pushed.result as { number: string; hash: string; transactions?: { hash: string }[] }
      observed.blockNumbers.push(Number(block.number))
      observed.blockHashes.push(block.hash)
      for (const tx of block.transactions ?? []) {
        if (observed.committed.has(tx.hash)) observed.duplicates.push(tx.hash)
        else observed.committed.set(tx.hash, now)
      }
    } else if (kind === 'logs') {
      const log = pushed.result as { txHash: string; index: number }
      const key = `${log.txHash}/${log.index}`
      if (observed.logs.has(key)) observed.duplicateLogs++
      observed.logs.add(key)
    } else if (kind === 'status') {
      const status = pushed.result as { module: string; subType: string }
      const key = `${status.module}/${status.subType}`
      observed.statuses.set(key, (observed.statuses.get(key) ?? 0) + 1)
    }
  })
  let closing = false
  socket.on('close', (code, reason) => {
    if (!closing) observed.closed = `the node closed the WebSocket (${code} ${reason.toString()})`
  })
  const subscribe = (kind: 'block' | 'logs' | 'status', params: unknown[]): Promise<void> =>
    new Promise((resolve) => {
      const id = nextId++
      pending.set(id, (subscription) => {
        kinds.set(subscription, kind)
        resolve()
      })
      socket.send(stringifyJson({ jsonrpc: '2.0', namespace: 'global', id, method: 'sub_subscribe', params }))
    })
  await subscribe('block', ['block', true])
  await subscribe('logs', ['logs', { addresses: [token] }])
  await subscribe('status', ['systemStatus', {}])
  return {
    observed,
    close: () => {
      closing = true
      socket.close()
    },
  }
}

/** polling subscriptions, read every 2 s: block hashes and the token's logs */
async function poll(rpc: ReturnType<typeof controlChannel>, token: string) {
  const blocks = (await rpc('sub_newBlockSubscription', [false])).result as string
  const logs = (await rpc('sub_newEventSubscription', [{ addresses: [token] }])).result as string
  const hashes: string[] = []
  const logKeys: string[] = []
  let errors = 0
  const once = async (): Promise<void> => {
    const gotBlocks = await rpc('sub_getSubscriptionChanges', [blocks])
    const gotLogs = await rpc('sub_getSubscriptionChanges', [logs])
    if (gotBlocks.code !== 0 || gotLogs.code !== 0) errors++
    hashes.push(...((gotBlocks.result as string[] | undefined) ?? []))
    for (const log of (gotLogs.result as { txHash: string; index: number }[] | undefined) ?? []) logKeys.push(`${log.txHash}/${log.index}`)
  }
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      await sleep(2000)
      await once().catch(() => errors++)
    }
  })()
  return {
    hashes,
    logKeys,
    errors: () => errors,
    async stop() {
      stopped = true
      await loop
      await once()
    },
  }
}

// ---- submissions ----

interface Sent {
  kind: 'transfer' | 'call'
  sentAt: number
}

interface Load {
  accepted: Map<string, Sent>
  offered: number
  refused: number
  rejected: number
  firstRejection?: string
  retries: number
}

function signedAt(i: number, token: string): { method: string; body: string; kind: Sent['kind'] } {
  const from = accounts[i % accounts.length]
  const to = accounts[(i * 7 + 1) % accounts.length].address
  // the share of calls spread evenly: i is a call when its scaled index crosses an integer
  const call = Math.floor((i + 1) * CONTRACT_SHARE) > Math.floor(i * CONTRACT_SHARE)
  if (call) {
    const payload = calldata('transfer(address,uint256)', to as `0x${string}`, 1n)
    return {
      method: 'contract_invokeContract',
      body: stringifyJson([sdkTransaction(from, { kind: 'invoke', to: token, payload })]),
      kind: 'call',
    }
  }
  return { method: 'tx_sendTransaction', body: stringifyJson([sdkTransaction(from, { kind: 'transfer', to, value: 1 })]), kind: 'transfer' }
}

/**
 * Submits until `until` (performance.now()): at `rate` per second on a fixed schedule when given
 * (an open loop, at most `concurrency` in flight), else as fast as accepted.
 */
async function submit(
  url: string,
  token: string,
  load: Load,
  options: { until: number; rate?: number; concurrency: number },
): Promise<void> {
  const started = performance.now()
  let next = load.offered
  const first = next
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      let connection = await rawConnection(url)
      for (;;) {
        const index = next++
        if (options.rate !== undefined) {
          const due = started + ((index - first) * 1000) / options.rate
          if (due >= options.until) return connection.close()
          const wait = due - performance.now()
          if (wait > 0) await sleep(wait)
        } else if (performance.now() >= options.until) return connection.close()
        load.offered++
        const { method, body, kind } = signedAt(index, token)
        const sentAt = performance.now()
        for (let attempt = 0; ; attempt++) {
          let reply: Reply
          try {
            if (connection.closed) connection = await rawConnection(url)
            reply = await post(connection, method, body)
          } catch {
            // the connection broke: the same signed transaction again (-32007 if it was taken)
            load.retries++
            await sleep(200)
            continue
          }
          if (reply.code === 0) load.accepted.set(reply.result as string, { kind, sentAt })
          else if (reply.code === -32007 && attempt > 0) {
            const hash = /0x[0-9a-f]{64}/.exec(reply.message)?.[0]
            if (hash !== undefined && !load.accepted.has(hash)) load.accepted.set(hash, { kind, sentAt })
          } else if (reply.code === -32006 && attempt < 10) {
            load.retries++
            await sleep(200)
            continue
          } else if (reply.code === -32006) load.refused++
          else {
            load.rejected++
            load.firstRejection ??= `${reply.code} ${reply.message}`
          }
          break
        }
      }
    }),
  )
}

/** reads at `rate` per second until `until`: the request latencies (ms) and errors */
async function reads(
  url: string,
  load: Load,
  rate: number,
  until: number,
  stats: { latencies: number[]; errors: number; requests: number },
) {
  if (rate <= 0) return
  const started = performance.now()
  let next = 0
  const hashes = (): string[] => [...load.accepted.keys()].slice(-1000)
  let sample = hashes()
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      let connection = await rawConnection(url)
      for (;;) {
        const index = next++
        const due = started + (index * 1000) / rate
        if (due >= until) return connection.close()
        const wait = due - performance.now()
        if (wait > 0) await sleep(wait)
        if (index % 500 === 0) sample = hashes()
        const kind = index % 5
        const [method, params] =
          kind < 2 && sample.length > 0
            ? ['tx_getTransactionReceipt', `["${sample[index % sample.length]}"]`]
            : kind === 2
              ? ['block_latestBlock', '[]']
              : kind === 3
                ? ['block_getBlockByNumber', `["latest",false]`]
                : ['account_getBalance', `["${accounts[index % accounts.length].address}"]`]
        const sentAt = performance.now()
        try {
          if (connection.closed) connection = await rawConnection(url)
          const reply = await post(connection, method, params)
          // a receipt not written yet is not an error
          if (reply.code !== 0 && reply.code !== -32001) stats.errors++
        } catch {
          stats.errors++
        }
        stats.requests++
        stats.latencies.push(performance.now() - sentAt)
      }
    }),
  )
}

// ---- the run ----

async function main(): Promise<void> {
  const dir = scratchDir('keel-soak-')
  const configFile = join(dir, 'keel.toml')
  writeNodeConfig(configFile, {
    dataDir: join(dir, 'data'),
    genesis: accounts.map((account) => ({ address: account.address, balance: 10n ** 15n })),
  })
  const node = await startNodeProcess({ configFile, logFile: join(dir, 'node.log') })
  const loadAtStart = loadAverage()
  console.error(`node ${node.url} (pid ${node.pid}); log ${join(dir, 'node.log')}; load average ${loadAtStart}`)
  const rpc = controlChannel(node.url)
  /** the node's resident memory in MiB: all, anonymous (heaps), file-backed (program, LMDB's mapped data file) */
  const resident = (): { rss: number; anon: number; file: number } => {
    const bytes = residentOf(node.pid)
    return { rss: Math.round(bytes.rss / 2 ** 20), anon: Math.round(bytes.anon / 2 ** 20), file: Math.round(bytes.file / 2 ** 20) }
  }
  try {
    // the token, and a share of it for every account
    const waitFor = async (hash: string): Promise<Reply> => {
      for (;;) {
        const reply = await rpc('tx_getTransactionReceipt', [hash])
        if (reply.code !== -32001) return reply
        await sleep(20)
      }
    }
    const deployed = await waitFor(
      (
        await rpc('contract_deployContract', [
          sdkTransaction(accounts[0], { kind: 'deploy', payload: artifact(TOKEN_SOURCE, 'BenchToken').bin }),
        ])
      ).result as string,
    )
    const token = (deployed.result as { contractAddress: string }).contractAddress
    const shares: string[] = []
    for (const account of accounts.slice(1)) {
      const payload = calldata('transfer(address,uint256)', account.address as `0x${string}`, 10n ** 24n)
      shares.push(
        (await rpc('contract_invokeContract', [sdkTransaction(accounts[0], { kind: 'invoke', to: token, payload })])).result as string,
      )
    }
    for (const hash of shares) if ((await waitFor(hash)).code !== 0) throw new Error(`token share ${hash} failed`)
    const setUpHeight = Number((await rpc('block_getChainHeight', [])).result)

    const { observed, close } = await watch(node.url.replace(/^http/, 'ws'), token)
    const polled = await poll(rpc, token)
    const load: Load = { accepted: new Map(), offered: 0, refused: 0, rejected: 0, retries: 0 }

    let max = values.max === undefined ? undefined : number('max')
    if (max === undefined) {
      const seconds = number('calibrate-seconds')
      console.error(`measuring the maximum: as fast as accepted, 128 in flight, ${seconds} s`)
      const start = performance.now()
      const before = observed.committed.size
      await submit(node.url, token, load, { until: start + seconds * 1000, concurrency: 128 })
      max = (observed.committed.size - before) / ((performance.now() - start) / 1000)
      console.error(`maximum: ${fmt(max)} committed tx/s (${fmt(observed.committed.size - before)} in ${seconds} s)`)
      // let the backlog drain before the steady load
      const drainUntil = performance.now() + 30_000
      while (performance.now() < drainUntil && [...load.accepted.keys()].some((hash) => !observed.committed.has(hash))) await sleep(200)
    }
    const rate = Math.max(1, max * FRACTION)
    console.error(
      `soak: ${fmt(rate)} tx/s (${FRACTION} of ${fmt(max)}) for ${MINUTES} min, ${CONTRACT_SHARE * 100}% contract calls, ${READ_RATE} reads/s`,
    )

    const readStats = { latencies: [] as number[], errors: 0, requests: 0 }
    const minutes: MinuteRow[] = []
    const soakStart = performance.now()
    const until = soakStart + MINUTES * 60_000
    let lastCpu = cpuSeconds([node.pid])
    let lastAt = performance.now()
    let counted = { offered: load.offered, accepted: load.accepted.size, committed: observed.committed.size, reads: 0 }
    const report = async (): Promise<void> => {
      const heapsMiB = await threadHeapsMiB(node.url)
      const now = performance.now()
      const cpu = cpuSeconds([node.pid])
      const latencies: number[] = []
      for (const [hash, sent] of load.accepted) {
        const at = observed.committed.get(hash)
        if (at !== undefined && at > lastAt && at <= now) latencies.push(at - sent.sentAt)
      }
      latencies.sort((a, b) => a - b)
      const readLatencies = readStats.latencies.splice(0).sort((a, b) => a - b)
      const memory = resident()
      const row: MinuteRow = {
        minute: minutes.length + 1,
        offered: load.offered - counted.offered,
        accepted: load.accepted.size - counted.accepted,
        committed: observed.committed.size - counted.committed,
        p50Ms: Math.round(percentile(latencies, 50)),
        p99Ms: Math.round(percentile(latencies, 99)),
        reads: readStats.requests - counted.reads,
        readP99Ms: Math.round(percentile(readLatencies, 99)),
        rssMiB: memory.rss,
        anonMiB: memory.anon,
        fileMiB: memory.file,
        cpuPercent: Math.round(((cpu - lastCpu) / ((now - lastAt) / 1000)) * 100),
        height: Math.max(0, ...observed.blockNumbers.slice(-1)),
        load: loadAverage(),
        heapsMiB,
      }
      minutes.push(row)
      counted = { offered: load.offered, accepted: load.accepted.size, committed: observed.committed.size, reads: readStats.requests }
      lastCpu = cpu
      lastAt = now
      console.error(
        `minute ${row.minute}: offered ${fmt(row.offered)}, accepted ${fmt(row.accepted)}, committed ${fmt(row.committed)}; p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms; ${fmt(row.reads)} reads (p99 ${row.readP99Ms} ms); node RSS ${row.rssMiB} MiB (anonymous ${row.anonMiB}, file ${row.fileMiB}), CPU ${row.cpuPercent}%; heaps in use (MiB) ${heapsText(heapsMiB)}; load ${row.load}`,
      )
    }
    const memoryAtStart = resident()
    // a report in progress when the load ends: the closing one must not count its minute again
    let reporting: Promise<void> = Promise.resolve()
    const ticker = setInterval(() => {
      reporting = report()
    }, 60_000)
    await Promise.all([
      submit(node.url, token, load, { until, rate, concurrency: CONCURRENCY }),
      reads(node.url, load, READ_RATE, until, readStats),
    ])
    clearInterval(ticker)
    await reporting
    if (performance.now() - lastAt > 5000) await report()

    // drain: every accepted hash pushed, or nothing new for 20 s
    let seen = -1
    let quietSince = performance.now()
    const unseen = (): string[] => [...load.accepted.keys()].filter((hash) => !observed.committed.has(hash))
    while (unseen().length > 0 && performance.now() - quietSince < 20_000) {
      if (observed.committed.size !== seen) {
        seen = observed.committed.size
        quietSince = performance.now()
      }
      await sleep(200)
    }
    await sleep(2500)
    await polled.stop()
    close()

    // ---- the audit ----
    let lost = 0
    let invalid = 0
    let missingFromPush = 0
    const lostHashes: string[] = []
    for (const hash of unseen()) {
      const reply = await rpc('tx_getTransactionReceipt', [hash])
      if (reply.code === 0) missingFromPush++
      else if (reply.code === -32001) {
        lost++
        lostHashes.push(hash)
      } else invalid++
    }
    const numbers = observed.blockNumbers
    const gaps = numbers.filter((n, i) => i > 0 && n !== numbers[i - 1] + 1).length + (numbers[0] === setUpHeight + 1 ? 0 : 1)
    const polledCount = new Map<string, number>()
    for (const hash of polled.hashes) polledCount.set(hash, (polledCount.get(hash) ?? 0) + 1)
    const pollMismatch = observed.blockHashes.filter((hash) => polledCount.get(hash) !== 1).length
    const calls = [...load.accepted.entries()].filter(([hash, sent]) => sent.kind === 'call' && observed.committed.has(hash)).length
    const polledLogs = new Set(polled.logKeys)
    // a sample read back from the node: each pushed hash is where the push said
    let readBackErrors = 0
    const sample = [...observed.committed.keys()].filter((_, i, all) => i % Math.max(1, Math.floor(all.length / 500)) === 0)
    for (const hash of sample) if ((await rpc('tx_getTransactionByHash', [hash])).code !== 0) readBackErrors++

    const summary = {
      offered: load.offered,
      accepted: load.accepted.size,
      committed: observed.committed.size,
      lost,
      duplicated: observed.duplicates.length,
      invalid,
      missingFromPush,
      refusedAfterRetries: load.refused,
      rejected: load.rejected,
      firstRejection: load.firstRejection,
      retries: load.retries,
      blocks: numbers.length,
      blockGaps: gaps,
      polledBlocksNotOnce: pollMismatch,
      pollErrors: polled.errors(),
      contractCalls: calls,
      logsPushed: observed.logs.size,
      logsPolled: polledLogs.size,
      duplicateLogs: observed.duplicateLogs + (polled.logKeys.length - polledLogs.size),
      readRequests: readStats.requests,
      readErrors: readStats.errors,
      readBack: `${sample.length - readBackErrors}/${sample.length}`,
      statuses: Object.fromEntries(observed.statuses),
      webSocket: observed.closed ?? 'open to the end',
      rssAtStartMiB: memoryAtStart.rss,
      anonAtStartMiB: memoryAtStart.anon,
      rssAtEndMiB: resident().rss,
      anonAtEndMiB: resident().anon,
      anonSlopeAfterWarmUpMiBPerMinute: Number(slopePerMinute(minutes.slice(WARM_UP_MINUTES).map((m) => m.anonMiB)).toFixed(2)),
      warmUpMinutes: WARM_UP_MINUTES,
      maxPerSecond: Math.round(max),
      ratePerSecond: Math.round(rate),
      loadAverage: { start: loadAtStart, end: loadAverage() },
    }
    const failed =
      lost > 0 ||
      summary.duplicated > 0 ||
      gaps > 0 ||
      pollMismatch > 0 ||
      summary.duplicateLogs > 0 ||
      observed.logs.size !== calls ||
      polledLogs.size !== calls
    writeResults(minutes, summary, failed)
    if (lostHashes.length > 0) console.error(`lost: ${lostHashes.slice(0, 10).join(', ')}${lostHashes.length > 10 ? ', …' : ''}`)
    if (failed) process.exitCode = 1
  } finally {
    await node.kill('SIGTERM')
  }
}

function writeResults(minutes: MinuteRow[], summary: Record<string, unknown>, failed: boolean): void {
  const date = new Date().toISOString()
  const cpu = os.cpus()
  const machine = `${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node.js ${process.version}`
  const command = `npm run soak -- ${process.argv.slice(2).join(' ')}`.trim()
  const s = summary as Record<string, number & string>
  const text = [
    `Soak ${date.slice(0, 16).replace('T', ' ')} UTC on ${machine}; \`${command}\`; load average ${(summary.loadAverage as { start: string }).start} at the start, ${(summary.loadAverage as { end: string }).end} at the end.`,
    '',
    `Offered ${fmt(s.ratePerSecond)} tx/s (of a measured ${fmt(s.maxPerSecond)}): ${fmt(s.offered)} offered, ${fmt(s.accepted)} accepted, ${fmt(s.committed)} committed, **${s.lost} lost, ${s.duplicated} duplicated**, ${s.invalid} invalid, ${s.missingFromPush} missing from the push, ${s.refusedAfterRetries} refused after 10 tries, ${s.rejected} rejected, ${s.retries} retries; ${fmt(s.blocks)} blocks, ${s.blockGaps} gaps; ${fmt(s.contractCalls)} contract calls, ${fmt(s.logsPushed)} logs pushed, ${fmt(s.logsPolled)} polled, ${s.duplicateLogs} duplicate logs; polled block hashes not seen exactly once: ${s.polledBlocksNotOnce}; ${fmt(s.readRequests)} reads, ${s.readErrors} errors; read back ${s.readBack}; status events ${JSON.stringify(summary.statuses)}; node RSS ${s.rssAtStartMiB} → ${s.rssAtEndMiB} MiB (anonymous ${s.anonAtStartMiB} → ${s.anonAtEndMiB} MiB; after the first ${s.warmUpMinutes} minutes anonymous memory moved ${s.anonSlopeAfterWarmUpMiBPerMinute} MiB/min, least squares).`,
    '',
    '| minute | offered | accepted | committed | p50 / p99 submit→commit | reads (p99) | node RSS (anonymous, file) | heaps in use, MiB | node CPU | load average |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...minutes.map(
      (m) =>
        `| ${m.minute} | ${fmt(m.offered)} | ${fmt(m.accepted)} | ${fmt(m.committed)} | ${m.p50Ms} / ${m.p99Ms} ms | ${fmt(m.reads)} (${m.readP99Ms} ms) | ${m.rssMiB} MiB (${m.anonMiB}, ${m.fileMiB}) | ${heapsText(m.heapsMiB)} | ${m.cpuPercent}% | ${m.load} |`,
    ),
  ].join('\n')
  const dir = resolve(repoRoot, values.out)
  mkdirSync(dir, { recursive: true })
  const stem = join(dir, `soak-${date.replace(/[:.]/g, '-')}`)
  writeFileSync(`${stem}.json`, `${JSON.stringify({ date, machine, command, failed, summary, minutes }, null, 2)}\n`)
  writeFileSync(`${stem}.md`, `${text}\n`)
  console.log(`\n${text}\n\n${failed ? 'FAILED' : 'passed'}; written: ${stem}.json, ${stem}.md`)
}

await main()
