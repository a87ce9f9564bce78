/**
 * bench/loop-monitor.cjs, preloaded into a real process with a worker thread: each thread's lines
 * count the messages it posted to other threads, and bench/node-usage.ts threadLoads sums them over
 * a window with the thread's other figures.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { threadLoads } from '../../../bench/node-usage.ts'

const monitor = join(import.meta.dirname, '..', '..', '..', 'bench', 'loop-monitor.cjs')

// 40 round trips: the main thread posts 40, the worker answers each; then both stay up past the
// monitor's one-second line
const script = `
const { Worker } = require('node:worker_threads')
const worker = new Worker("const { parentPort } = require('node:worker_threads'); parentPort.on('message', (n) => parentPort.postMessage(n))", { eval: true, workerData: { threadName: 'echo' } })
let answered = 0
worker.on('message', () => { if (++answered === 40) setTimeout(() => worker.terminate(), 1600) })
worker.once('online', () => { for (let i = 0; i < 40; i++) worker.postMessage(i) })
`

test('each thread counts the messages it posted, and the window sums them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-loop-monitor-'))
  const from = Date.now()
  const run = spawnSync(process.execPath, ['--require', monitor, '-e', script], {
    env: { ...process.env, KEEL_LOOP_STATS_DIR: dir },
    encoding: 'utf8',
    timeout: 20_000,
  })
  assert.is(run.status, 0, run.stderr)
  const loads = threadLoads(dir, [run.pid as number], from, Date.now())
  const main = loads.find((load) => load.thread === 'main')
  const echo = loads.find((load) => load.thread.startsWith('echo'))
  assert.ok(main !== undefined && echo !== undefined, `threads seen: ${loads.map((load) => load.thread).join(', ')}`)
  // Node's own start-up messages to and from a worker go through the same ports (three and one on Node 20)
  assert.ok((main.messages ?? 0) >= 40 && (main.messages ?? 0) <= 45, `main posted ${main.messages}`)
  assert.ok((echo.messages ?? 0) >= 40 && (echo.messages ?? 0) <= 45, `the worker posted ${echo.messages}`)
})

test.run()
