/**
 * What a workload cost the node processes under test, read from outside them: CPU seconds of every
 * thread (/proc/<pid>/stat: utime + stime of the whole process), peak RSS, and, when the nodes run
 * with bench/loop-monitor.cjs preloaded, each thread's event-loop lag p99 and busy share over the
 * workload's window (the monitor's per-second lines, merged).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const CLOCK_TICKS = 100
/** the loop monitor's timer period: a delay sample of exactly this is no lag */
const MONITOR_RESOLUTION_NS = 5_000_000

/** CPU seconds of all the processes together (every thread) */
export function cpuSeconds(pids: readonly number[]): number {
  let sum = 0
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    sum += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS // utime + stime, fields 14 and 15
  }
  return sum
}

/**
 * A figure of each thread of the processes, by `pid/tid`, read from its file under
 * /proc/<pid>/task/<tid>/ (threads that end between the listing and the read are left out).
 */
function perTask(pids: readonly number[], file: 'stat' | 'status', figure: (text: string) => number): Map<string, number> {
  const tasks = new Map<string, number>()
  for (const pid of pids) {
    let tids: string[]
    try {
      tids = readdirSync(`/proc/${pid}/task`)
    } catch {
      continue
    }
    for (const tid of tids) {
      try {
        tasks.set(`${pid}/${tid}`, figure(readFileSync(`/proc/${pid}/task/${tid}/${file}`, 'utf8')))
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  return tasks
}

/** CPU seconds of each thread of the processes, by `pid/tid` (/proc/<pid>/task/<tid>/stat) */
export function taskCpuSeconds(pids: readonly number[]): Map<string, number> {
  return perTask(pids, 'stat', (stat) => {
    const fields = stat.split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  })
}

/**
 * How many times each thread of the processes went to sleep and was woken (the kernel's
 * voluntary_ctxt_switches: a thread that blocks in epoll, a futex or a read, then runs again), by
 * `pid/tid`. Per committed transaction this counts the wake-ups a design pays per transaction
 * rather than per burst, which the CPU profiles cannot show (a thread is charged nothing while
 * asleep, but each wake-up costs the kernel's switch and cold caches).
 */
export function taskWakeUps(pids: readonly number[]): Map<string, number> {
  return perTask(pids, 'status', (status) => Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0))
}

/**
 * The threads without an event loop, split: V8's platform threads (the ones that existed before
 * any JavaScript ran: concurrent GC and the optimising compiler, for every isolate of the process)
 * and the threads started later (libuv's pool: the pool log's writev + fdatasync, file reads;
 * lmdb-js's write transactions). CPU seconds over the window between the two snapshots; threads
 * that ended inside the window are in neither.
 */
export function unmonitoredSplit(
  dir: string | undefined,
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  monitored: readonly ThreadLoad[],
): { platform: number; later: number } | undefined {
  if (dir === undefined) return undefined
  const monitoredTids = new Set(monitored.map((load) => load.tid))
  const startup = new Map<string, Set<number>>()
  const startupOf = (pid: string): Set<number> | undefined => {
    if (!startup.has(pid)) {
      try {
        startup.set(pid, new Set(JSON.parse(readFileSync(join(dir, `${pid}-startup-threads.json`), 'utf8')) as number[]))
      } catch {
        return undefined
      }
    }
    return startup.get(pid)
  }
  let platform = 0
  let later = 0
  for (const [key, seconds] of after) {
    const [pid, tid] = key.split('/')
    if (monitoredTids.has(Number(tid))) continue
    const started = startupOf(pid)
    if (started === undefined) return undefined
    const used = seconds - (before.get(key) ?? 0)
    if (started.has(Number(tid))) platform += used
    else later += used
  }
  return { platform, later }
}

/** resident memory of the largest of the processes */
export function rssBytes(pids: readonly number[]): number {
  return Math.max(0, ...pids.map((pid) => residentOf(pid).rss))
}

/**
 * resident memory of one process, whole and split: anonymous (heaps, buffers: where a leak shows)
 * and file-backed (the program, and LMDB's data file mapped in, which grows with the chain)
 */
export function residentOf(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
  return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile') }
}

/** one thread over a window: lag p99 (ms) and the share of the window its event loop was busy */
export interface ThreadLoad {
  thread: string
  /** the thread's id in its process (worker_threads' threadId; 0 is the main thread), from the monitor's file name */
  threadId?: number
  /** the thread's kernel id, when the monitor could read it */
  tid?: number
  lagP99Ms: number
  busy: number
  /** the thread's own CPU seconds over the window (/proc/thread-self/stat), when the monitor could read it */
  cpuSeconds?: number
  /** times it slept and was woken over the window (taskWakeUps), when read */
  wakeUps?: number
  /** messages it posted to other threads over the window (the monitor's count), when read */
  messages?: number
}

interface MonitorLine {
  t: number
  name: string
  tid?: number
  count: number
  percentiles: [number, number][]
  busy: number
  /** clock ticks of this thread's CPU over the second */
  cpuTicks?: number
  /** messages posted to other threads over the second */
  messages?: number
}

/**
 * Per thread of `pids`, the lines the loop monitor wrote in [fromMs, toMs] merged: each second's
 * distribution weighted by its sample count; lag = delay − the monitor's timer period.
 */
export function threadLoads(dir: string | undefined, pids: readonly number[], fromMs: number, toMs: number): ThreadLoad[] {
  if (dir === undefined) return []
  let files: string[]
  try {
    files = readdirSync(dir)
  } catch {
    return []
  }
  const loads: ThreadLoad[] = []
  for (const [index, pid] of pids.entries()) {
    for (const file of files.filter((f) => f.startsWith(`${pid}-`) && f.endsWith('.jsonl')).sort()) {
      const lines = readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as MonitorLine)
        // a line covers the second before its time
        .filter((line) => line.t - 1000 >= fromMs - 500 && line.t <= toMs + 500)
      if (lines.length === 0) continue
      const prefix = pids.length > 1 ? `node ${index + 1} ` : ''
      loads.push({
        thread: `${prefix}${lines[0].name}`,
        threadId: Number(file.slice(`${pid}-`.length, -'.jsonl'.length)),
        ...(lines[0].tid === undefined ? {} : { tid: lines[0].tid }),
        lagP99Ms: Math.round(Math.max(0, mergedPercentile(lines, 99) - MONITOR_RESOLUTION_NS) / 1e4) / 100,
        busy: Math.round((lines.reduce((sum, line) => sum + line.busy, 0) / lines.length) * 100) / 100,
        ...(lines.every((line) => line.cpuTicks !== undefined)
          ? { cpuSeconds: lines.reduce((sum, line) => sum + (line.cpuTicks ?? 0), 0) / CLOCK_TICKS }
          : {}),
        ...(lines.every((line) => line.messages !== undefined)
          ? { messages: lines.reduce((sum, line) => sum + (line.messages ?? 0), 0) }
          : {}),
      })
    }
  }
  return loads
}

/** the p-th percentile of several histograms given as percentile → value steps, weighted by their counts */
function mergedPercentile(lines: readonly MonitorLine[], p: number): number {
  const total = lines.reduce((sum, line) => sum + line.count, 0)
  if (total === 0) return 0
  const candidates = [...new Set(lines.flatMap((line) => line.percentiles.map(([, value]) => value)))].sort((a, b) => a - b)
  // share of a line's samples at or below `value`: the highest percentile whose value is ≤ it
  const below = (line: MonitorLine, value: number): number => {
    let share = 0
    for (const [percentile, at] of line.percentiles) if (at <= value) share = percentile / 100
    return share
  }
  for (const value of candidates) {
    const covered = lines.reduce((sum, line) => sum + line.count * below(line, value), 0)
    if (covered >= (total * p) / 100) return value
  }
  return candidates[candidates.length - 1]
}

/** "; 0.07 wake-ups": a count per operation, or nothing when either is unknown */
export const countPerOp = (count: number | undefined, ops: number | undefined, what: string): string =>
  ops === undefined || ops === 0 || count === undefined ? '' : `; ${(count / ops).toFixed(2)} ${what}`

/**
 * "main 12.3 ms (0.95 busy) · verify 1 0.2 ms (0.40)"; with the workload's operation count, each
 * thread's own CPU, wake-ups and messages sent to other threads per operation too ("main 12.3 ms
 * (0.95; 310 µs; 0.07 wake-ups; 0.03 sent)"). Threads idle over the window (a loader thread) are
 * left out then.
 */
export function formatLoads(loads: readonly ThreadLoad[], ops?: number): string {
  const perOp = (load: ThreadLoad): number | undefined =>
    ops === undefined || ops === 0 || load.cpuSeconds === undefined ? undefined : Math.round((load.cpuSeconds * 1e6) / ops)
  return loads
    .filter((load) => perOp(load) !== 0)
    .map((load) => {
      const us = perOp(load)
      const counts = `${countPerOp(load.wakeUps, ops, 'wake-ups')}${countPerOp(load.messages, ops, 'sent')}`
      return `${load.thread} ${load.lagP99Ms} ms (${load.busy.toFixed(2)}${us === undefined ? '' : `; ${us} µs`}${counts})`
    })
    .join(' · ')
}
