/**
 * Preloaded into a node under test, in every thread: `node --require bench/loop-monitor.cjs …`
 * (a CommonJS file, because `--require` preloads run in worker threads too and `--import` ones do
 * not on Node 20). With KEEL_LOOP_STATS_DIR set, each thread appends one line a second to
 * `<dir>/<pid>-<threadId>.jsonl`: its event-loop delay distribution over that second (percentile →
 * ns, from perf_hooks.monitorEventLoopDelay), its event-loop utilisation, its own CPU ticks and the
 * messages it posted to other threads.
 * bench/run.ts merges the lines of a workload's window into a lag p99, a busy share and CPU per
 * operation per thread. Without the variable
 * it does nothing, so the same flag can sit in NODE_OPTIONS of a whole local network.
 */
const dir = process.env.KEEL_LOOP_STATS_DIR
if (dir !== undefined && dir !== '') {
  const { appendFileSync } = require('node:fs')
  const { join } = require('node:path')
  const { monitorEventLoopDelay, performance } = require('node:perf_hooks')
  const { isMainThread, threadId, workerData } = require('node:worker_threads')
  // Node's own threads (the module loader's hooks under tsx) carry no name: they are listed as `node`
  const name = isMainThread ? 'main' : `${workerData?.threadName ?? 'node'} ${threadId}`
  const file = join(dir, `${process.pid}-${threadId}.jsonl`)
  const { readdirSync, readlinkSync, writeFileSync } = require('node:fs')
  // this thread's kernel id, so the bench can tell the threads without an event loop from these
  let tid
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
  } catch {}
  // the threads that exist before any JavaScript runs are V8's platform threads (GC and compiler
  // helpers); libuv's pool and lmdb-js's threads start later, on first use
  if (isMainThread) {
    try {
      const startup = readdirSync('/proc/self/task')
        .map(Number)
        .filter((id) => id !== tid)
      writeFileSync(join(dir, `${process.pid}-startup-threads.json`), JSON.stringify(startup))
    } catch {}
  }
  // 5 ms: fine enough to see a 10 ms stall, cheap enough (one timer) not to cost the thread anything measurable
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  let utilisation = performance.eventLoopUtilization()
  // this thread's own CPU (utime + stime of /proc/thread-self/stat, in clock ticks): the busy share
  // counts time a thread waited for a core too, so only this says which thread spends the CPU
  const { readFileSync } = require('node:fs')
  const threadTicks = () => {
    try {
      const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')
      return Number(fields[11]) + Number(fields[12])
    } catch {
      return undefined
    }
  }
  let ticks = threadTicks()
  // messages this thread posts to another (a worker's parentPort, a Worker, a MessageChannel's
  // port: Worker#postMessage posts through a MessagePort too), so the bench can say how many hops a
  // transaction costs and how large their batches are
  const { MessagePort } = require('node:worker_threads')
  const post = MessagePort.prototype.postMessage
  let messages = 0
  MessagePort.prototype.postMessage = function countedPostMessage(...args) {
    messages++
    return Reflect.apply(post, this, args)
  }
  setInterval(() => {
    const now = performance.eventLoopUtilization()
    const busy = performance.eventLoopUtilization(now, utilisation).utilization
    utilisation = now
    const nowTicks = threadTicks()
    const cpuTicks = nowTicks === undefined || ticks === undefined ? undefined : nowTicks - ticks
    ticks = nowTicks
    const line = { t: Date.now(), name, tid, count: delay.count, percentiles: [...delay.percentiles.entries()], busy, cpuTicks, messages }
    delay.reset()
    messages = 0
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`)
    } catch {}
  }, 1000).unref()
}
