/**
 * The cost ledger (`npm run bench -- --ledger`): the node's CPU per committed transaction split by
 * stage of the pipeline, not only by thread.
 *
 * How a stage's share is found: the node runs with V8's sampling profiler in every thread
 * (`--cpu-prof`, one profile per thread). Each sample inside the workload's window is given to the
 * stage of the innermost frame of its stack that a rule below names (a Keccak inside the block
 * hash belongs to the commit, the same Keccak inside admission to decoding: generic helpers name no
 * stage and their caller decides). A thread's CPU over the window, from /proc (bench/loop-monitor.cjs),
 * is then split in the proportion of its samples. Samples are counted, not weighted by the time
 * between them: V8's sampler runs on wall-clock time, and a thread descheduled for 5 ms would
 * otherwise charge those 5 ms to whatever it was doing when the core came back.
 *
 * What no profile covers: the threads without a JavaScript event loop (libuv's pool: the pool
 * log's writev + fdatasync and LMDB's write transactions; V8's GC and compiler helpers). Their CPU
 * is the process's /proc total less the threads the monitor reads, and is its own row.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ThreadLoad } from './node-usage.ts'

export type StageId =
  | 'http'
  | 'envelope'
  | 'params'
  | 'decode'
  | 'signature'
  | 'admission'
  | 'poolLog'
  | 'hop'
  | 'relay'
  | 'ordering'
  | 'execution'
  | 'stateRoot'
  | 'commitEncoding'
  | 'lmdbWrite'
  | 'notification'
  | 'reply'
  | 'gc'
  | 'native'
  | 'unclassified'

/** The stages in the order a transaction meets them, with what the ledger prints. */
export const STAGES: readonly { id: StageId; label: string }[] = [
  { id: 'http', label: 'HTTP (sockets, parser, request body)' },
  { id: 'envelope', label: 'envelope parse (JSON)' },
  { id: 'params', label: 'params check and dispatch' },
  { id: 'decode', label: 'decode + hashes (+ record encode/decode)' },
  { id: 'signature', label: 'signature (sign string, recovery)' },
  { id: 'admission', label: 'admission checks (duplicates, governance, pool)' },
  { id: 'poolLog', label: 'pool log (append; its fsync is under other threads)' },
  { id: 'hop', label: 'thread hops (postMessage, frames, message events)' },
  { id: 'relay', label: 'relay (network)' },
  { id: 'ordering', label: 'ordering (pool take, solo or RBFT)' },
  { id: 'execution', label: 'execution' },
  { id: 'stateRoot', label: 'state root (diff + hashing)' },
  { id: 'commitEncoding', label: 'commit encoding (roots, bloom, records)' },
  { id: 'lmdbWrite', label: 'LMDB write (instructions on the chain thread)' },
  { id: 'notification', label: 'receipt/notification (block events, WebSocket push)' },
  { id: 'reply', label: 'reply (serialise, write)' },
  { id: 'gc', label: 'garbage collection (on the thread)' },
  { id: 'native', label: 'native, outside JavaScript ((program))' },
  { id: 'unclassified', label: 'unclassified' },
]

interface Rule {
  stage: StageId
  /** a fragment of the frame's script URL ('' for natives such as postMessage) */
  url: string
  /** when given, the function name must match */
  name?: RegExp
}

/**
 * Rules, tried on each frame from the innermost outwards; the first frame any rule matches names the
 * sample's stage. Order inside the list matters only for one frame matched by two rules.
 * Files not listed (hash helpers, msgpack, the record codec, lmdb's reads, sign strings, JSON stringify) name no
 * stage: their caller's does.
 */
const RULES: readonly Rule[] = [
  { stage: 'gc', url: '', name: /^\(garbage collector\)$/ },
  { stage: 'native', url: '', name: /^\(program\)$/ },
  { stage: 'hop', url: '', name: /^postMessage$/ },
  // request threads
  { stage: 'reply', url: 'rpc/http.', name: /^(send|reply|writeReply)/ },
  { stage: 'envelope', url: 'wire/json.', name: /^parse/ },
  // only the parse: JSON.stringify's pass (markedJson) names no stage, so a reply's goes to the
  // reply (its caller, below) and a block push's to the notification, as the other generic helpers
  { stage: 'envelope', url: 'src/json.', name: /^parse/ },
  { stage: 'http', url: 'rpc/http.' },
  { stage: 'http', url: '_http_' },
  { stage: 'params', url: 'rpc/params.' },
  // the body's answer turned into JSON text, after its handler returned (dispatch.ts handleBody*)
  { stage: 'reply', url: 'rpc/dispatch.', name: /^handleBody/ },
  { stage: 'params', url: 'rpc/dispatch.' },
  { stage: 'params', url: 'generated/' },
  { stage: 'params', url: 'rpc/tcert-check.' },
  { stage: 'notification', url: 'rpc/ws.' },
  { stage: 'notification', url: 'front/events.' },
  { stage: 'notification', url: 'events/' },
  { stage: 'notification', url: 'api/answers.' },
  { stage: 'notification', url: 'api/sub.' },
  // a verify worker's admission job
  { stage: 'signature', url: 'crypto/signature.' },
  { stage: 'signature', url: 'crypto/secp256k1.' },
  { stage: 'signature', url: 'crypto/sm2.' },
  { stage: 'commitEncoding', url: 'crypto/tx-hash.', name: /^(listRoot|blockHash|encodeConsensus)/ },
  { stage: 'commitEncoding', url: 'crypto/log-bloom.' },
  { stage: 'decode', url: 'chain/admission.' },
  { stage: 'decode', url: 'crypto/tx-hash.' },
  { stage: 'decode', url: 'wire/tx-codec.' },
  { stage: 'decode', url: 'front/admission-job.' },
  { stage: 'decode', url: 'eth/transaction.' },
  { stage: 'hop', url: 'wire/frames.' },
  { stage: 'hop', url: 'crypto/verify-pool.' },
  { stage: 'hop', url: 'crypto/verify-worker.' },
  { stage: 'hop', url: 'front/submitter.' },
  { stage: 'hop', url: 'front/messages.' },
  { stage: 'hop', url: 'front/thread.' },
  { stage: 'hop', url: 'per_context/messageport' },
  // the chain thread
  { stage: 'admission', url: 'front/threads.', name: /^admit$/ },
  { stage: 'hop', url: 'front/threads.' },
  { stage: 'poolLog', url: 'store/pool-log.' },
  { stage: 'ordering', url: 'chain/pool.', name: /^(take|ready|readyCount|settle|requeue|next)/ },
  { stage: 'admission', url: 'chain/pool.' },
  { stage: 'admission', url: 'chain/index.', name: /^(admit|submit|refuse)/ },
  { stage: 'admission', url: 'chain/eth-nonce-gate.' },
  { stage: 'admission', url: 'chain/rate-limit.' },
  { stage: 'admission', url: 'governance/permission.' },
  { stage: 'ordering', url: 'chain/solo.' },
  { stage: 'ordering', url: 'consensus/' },
  { stage: 'relay', url: 'p2p/' },
  { stage: 'relay', url: 'network/' },
  { stage: 'stateRoot', url: 'store/world.' },
  { stage: 'stateRoot', url: 'store/state-hash' },
  { stage: 'stateRoot', url: 'store/index.', name: /^stateRoot/ },
  { stage: 'execution', url: 'exec/' },
  { stage: 'execution', url: '@ethereumjs/' },
  { stage: 'execution', url: 'governance/' },
  { stage: 'lmdbWrite', url: 'lmdb/write.' },
  { stage: 'commitEncoding', url: 'store/db.' },
  { stage: 'commitEncoding', url: 'store/repos/' },
  { stage: 'commitEncoding', url: 'store/codec.' },
  { stage: 'commitEncoding', url: 'store/state-codec.' },
  { stage: 'commitEncoding', url: 'store/index.', name: /^commit/ },
  { stage: 'commitEncoding', url: 'chain/producer.' },
  { stage: 'notification', url: 'chain/index.' },
]

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}

interface Profile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** samples of one thread over the window, by stage, and the unclassified frames seen most */
export interface ThreadSamples {
  threadId: number
  samples: number
  byStage: Map<StageId, number>
  /** of byStage, the samples taken late (LATE_AFTER_US) */
  lateByStage: Map<StageId, number>
  unclassified: Map<string, number>
}

/**
 * A sample taken this long after the one before it was taken late: the sampler asked while the
 * thread was off its core (runnable but preempted, or stopped in the kernel), and the stack it
 * records is where the thread stopped, not a random point of its running time. Stages that wake
 * another thread (postMessage's write to the receiver's event fd) collect such samples, so their
 * share of a thread's samples overstates their share of its CPU by up to their late samples.
 */
export const LATE_AFTER_US = 1500

function ruleFor(frame: ProfileNode['callFrame']): StageId | undefined {
  for (const rule of RULES) {
    if (rule.url === '' ? frame.url !== '' : !frame.url.includes(rule.url)) continue
    if (rule.name !== undefined && !rule.name.test(frame.functionName)) continue
    return rule.stage
  }
  return undefined
}

/** The stage of every node of a profile's call tree (innermost named frame of its stack). */
function stagesOf(profile: Profile): Map<number, StageId | undefined> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const stage = new Map<number, StageId | undefined>()
  const resolve = (id: number): StageId | undefined => {
    if (stage.has(id)) return stage.get(id)
    const node = byId.get(id) as ProfileNode
    const own = ruleFor(node.callFrame)
    const up = parent.get(id)
    const found = own ?? (up === undefined ? undefined : resolve(up))
    stage.set(id, found)
    return found
  }
  for (const node of profile.nodes) resolve(node.id)
  return stage
}

const frameName = (node: ProfileNode): string =>
  `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').slice(-2).join('/')}`

/**
 * The samples of each profile of process `pid` in `profileDir` whose time falls in
 * [fromUs, toUs] (CLOCK_MONOTONIC µs, the clock V8 stamps samples with and process.hrtime reads).
 */
export function profileSamples(profileDir: string, pid: number, fromUs: number, toUs: number): ThreadSamples[] {
  const out: ThreadSamples[] = []
  for (const file of readdirSync(profileDir)) {
    // CPU.<date>.<time>.<pid>.<threadId>.<seq>.cpuprofile
    const parts = file.split('.')
    if (!file.endsWith('.cpuprofile') || Number(parts[3]) !== pid) continue
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile
    const stages = stagesOf(profile)
    const byId = new Map(profile.nodes.map((node) => [node.id, node]))
    const thread: ThreadSamples = {
      threadId: Number(parts[4]),
      samples: 0,
      byStage: new Map(),
      lateByStage: new Map(),
      unclassified: new Map(),
    }
    let at = profile.startTime
    for (const [i, id] of profile.samples.entries()) {
      at += profile.timeDeltas[i] ?? 0
      if (at < fromUs || at > toUs) continue
      const node = byId.get(id) as ProfileNode
      if (node.callFrame.functionName === '(idle)' || node.callFrame.functionName === '(root)') continue
      thread.samples++
      const stage = stages.get(id) ?? 'unclassified'
      thread.byStage.set(stage, (thread.byStage.get(stage) ?? 0) + 1)
      if ((profile.timeDeltas[i] ?? 0) > LATE_AFTER_US) thread.lateByStage.set(stage, (thread.lateByStage.get(stage) ?? 0) + 1)
      if (stage === 'unclassified') thread.unclassified.set(frameName(node), (thread.unclassified.get(frameName(node)) ?? 0) + 1)
    }
    if (thread.samples > 0) out.push(thread)
  }
  return out
}

export interface LedgerRow {
  stage: StageId
  label: string
  /** µs of node CPU per committed transaction, by thread name */
  byThread: Map<string, number>
  total: number
}

export interface Ledger {
  rows: LedgerRow[]
  /** µs per transaction of the threads without an event loop (process total less the monitored threads) */
  otherThreads: number
  /** the same split: V8's platform threads and the threads started later (libuv's pool, lmdb-js), µs per transaction */
  otherSplit?: { platform: number; later: number }
  /** µs per transaction: the process's /proc total */
  processTotal: number
  /** µs per transaction: the monitored threads' own /proc CPU, summed */
  threadsTotal: number
  /** the unclassified frames seen most, with their share of all samples */
  unclassified: [string, number][]
  /** samples counted in the window, all threads */
  samples: number
  /** per stage, its samples and how many of them were taken late (LATE_AFTER_US), all threads */
  lateness: Map<StageId, { samples: number; late: number }>
  /**
   * µs per transaction the samples alone account for (count × the sampling interval): an estimate of
   * the monitored threads' CPU independent of /proc, so the two can be compared
   */
  sampledUs: number
  /** messages the threads posted to each other per transaction, by thread, when the monitor counted them */
  messages?: Map<string, number>
}

/** V8's default sampling interval under --cpu-prof */
export const PROFILE_INTERVAL_US = 1000

/**
 * Splits each monitored thread's CPU (`threads`, from /proc over the window) by its samples'
 * stages; `processCpuSeconds` is the whole process's CPU over the window; `ops` the transactions.
 */
export function buildLedger(
  samples: readonly ThreadSamples[],
  threads: readonly ThreadLoad[],
  processCpuSeconds: number,
  ops: number,
  unmonitored?: { platform: number; later: number },
  samplingIntervalUs = PROFILE_INTERVAL_US,
): Ledger {
  const rows: LedgerRow[] = STAGES.map(({ id, label }) => ({ stage: id, label, byThread: new Map(), total: 0 }))
  const row = new Map(rows.map((r) => [r.stage, r]))
  let threadsTotal = 0
  const unclassified = new Map<string, number>()
  let allSamples = 0
  const lateness = new Map<StageId, { samples: number; late: number }>()
  for (const load of threads) {
    if (load.cpuSeconds === undefined || load.threadId === undefined) continue
    const us = (load.cpuSeconds * 1e6) / ops
    threadsTotal += us
    const sampled = samples.find((thread) => thread.threadId === load.threadId)
    if (sampled === undefined || sampled.samples === 0) {
      // a thread with CPU but no samples in the window (a module-loader thread): unclassified, named
      unclassified.set(`${load.thread} (no profile)`, (unclassified.get(`${load.thread} (no profile)`) ?? 0) + 1)
      const target = row.get('unclassified') as LedgerRow
      target.byThread.set(load.thread, (target.byThread.get(load.thread) ?? 0) + us)
      target.total += us
      continue
    }
    allSamples += sampled.samples
    for (const [stage, count] of sampled.byStage) {
      const seen = lateness.get(stage) ?? { samples: 0, late: 0 }
      lateness.set(stage, { samples: seen.samples + count, late: seen.late + (sampled.lateByStage.get(stage) ?? 0) })
      const target = row.get(stage) as LedgerRow
      const share = (us * count) / sampled.samples
      target.byThread.set(load.thread, (target.byThread.get(load.thread) ?? 0) + share)
      target.total += share
    }
    for (const [frame, count] of sampled.unclassified) unclassified.set(`${load.thread}: ${frame}`, count)
  }
  const processTotal = (processCpuSeconds * 1e6) / ops
  const counted = threads.filter((load) => load.messages !== undefined && load.cpuSeconds !== undefined)
  return {
    ...(counted.length === 0 ? {} : { messages: new Map(counted.map((load) => [load.thread, (load.messages as number) / ops])) }),
    rows,
    otherThreads: processTotal - threadsTotal,
    ...(unmonitored === undefined
      ? {}
      : { otherSplit: { platform: (unmonitored.platform * 1e6) / ops, later: (unmonitored.later * 1e6) / ops } }),
    processTotal,
    threadsTotal,
    unclassified: [...unclassified].sort((a, b) => b[1] - a[1]).slice(0, 8),
    samples: allSamples,
    lateness,
    sampledUs: (allSamples * samplingIntervalUs) / ops,
  }
}

/** What each stage's floor (bench/floors.ts) was measured on, by stage. */
export type Floors = Partial<Record<StageId | 'otherThreads', { us: number; what: string }>>

/** The ledger as a markdown table, each stage beside its floor. */
export function formatLedger(title: string, ledger: Ledger, floors: Floors): string {
  const us = (n: number): string => (n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en'))
  const lines = [
    `**${title}** — µs of node CPU per committed transaction, by stage (${ledger.samples.toLocaleString('en')} profile samples)`,
    '',
    '| stage | µs per tx | by thread | floor (µs, measured alone in this run) | × floor |',
    '| --- | --- | --- | --- | --- |',
  ]
  let stagesSum = 0
  for (const row of ledger.rows) {
    const floor = floors[row.stage]
    if (row.total < 0.05 && floor === undefined) continue
    stagesSum += row.total
    const threads = [...row.byThread]
      .filter(([, value]) => value >= 0.5)
      .sort((a, b) => b[1] - a[1])
      .map(([thread, value]) => `${thread} ${us(value)}`)
      .join(', ')
    const ratio = floor === undefined || floor.us === 0 ? '' : `${(row.total / floor.us).toFixed(1)}×`
    lines.push(
      `| ${row.label} | ${us(row.total)} | ${threads} | ${floor === undefined ? '—' : `${us(floor.us)} (${floor.what})`} | ${ratio} |`,
    )
  }
  const other = floors.otherThreads
  lines.push(
    `| other threads: libuv pool (pool log writev + fdatasync, LMDB write transactions), V8 helpers (GC, compiler) | ${us(ledger.otherThreads)} | — | ${other === undefined ? '—' : `${us(other.us)} (${other.what})`} | ${other === undefined || other.us === 0 ? '' : `${(ledger.otherThreads / other.us).toFixed(1)}×`} |`,
  )
  if (ledger.otherSplit !== undefined) {
    const { platform, later } = ledger.otherSplit
    lines.push(
      `| — of which V8's platform threads (concurrent GC, optimising compiler; every isolate's) | ${us(platform)} | | | |`,
      `| — of which threads started later (libuv's pool: pool log writev + fdatasync; lmdb-js's writes) | ${us(later)} | | | |`,
      `| — of which threads that ended inside the window | ${us(ledger.otherThreads - platform - later)} | | | |`,
    )
  }
  stagesSum += ledger.otherThreads
  const floorSum = Object.values(floors).reduce((sum, floor) => sum + (floor?.us ?? 0), 0)
  lines.push(`| **sum of the stages** | **${us(stagesSum)}** | | **${us(floorSum)}** (sum of the floors measured) | |`)
  lines.push(
    `| /proc: the process | ${us(ledger.processTotal)} | threads with an event loop ${us(ledger.threadsTotal)} (${Math.round((100 * ledger.threadsTotal) / ledger.processTotal)}%), the rest above | | |`,
  )
  lines.push(
    `| profile samples × ${PROFILE_INTERVAL_US / 1000} ms (the check on the split) | ${us(ledger.sampledUs)} | ${Math.round((100 * ledger.sampledUs) / ledger.threadsTotal)}% of those threads' /proc CPU | | |`,
  )
  if (ledger.messages !== undefined) {
    const total = [...ledger.messages.values()].reduce((sum, count) => sum + count, 0)
    const byThread = [...ledger.messages]
      .filter(([, count]) => count >= 0.005)
      .map(([thread, count]) => `${thread} ${count.toFixed(2)}`)
      .join(', ')
    lines.push(
      '',
      `Messages between threads: ${total.toFixed(2)} per transaction${byThread === '' ? '' : ` (${byThread})`}${total > 0 ? `, one per ${(1 / total).toFixed(1)} transactions` : ''}. The thread hops' floor above sends the same records to a receiver that is already running; a message that finds its receiver asleep also pays its wake-up (bench/hop-cost.ts).`,
    )
  }
  const late = [...ledger.lateness.values()].reduce((sum, stage) => sum + stage.late, 0)
  if (ledger.samples > 0) {
    const byStage = [...ledger.lateness]
      .filter(([, stage]) => stage.samples >= 20)
      .sort((a, b) => b[1].late / b[1].samples - a[1].late / a[1].samples)
      .slice(0, 6)
      .map(
        ([id, stage]) =>
          `${STAGES.find((known) => known.id === id)?.label.split(' (')[0]} ${Math.round((100 * stage.late) / stage.samples)}%`,
      )
      .join(', ')
    lines.push(
      '',
      `Samples taken late (over ${LATE_AFTER_US / 1000} ms after the one before: the thread was off its core, and the sample names where it stopped): ${Math.round((100 * late) / ledger.samples)}% of all; most among ${byStage}. A stage far above the rest is overstated by the sampler (bench/ledger.ts LATE_AFTER_US).`,
    )
  }
  if (ledger.unclassified.length > 0) {
    lines.push('', `Unclassified samples seen most: ${ledger.unclassified.map(([frame, count]) => `${frame} (${count})`).join('; ')}.`)
  }
  return lines.join('\n')
}
