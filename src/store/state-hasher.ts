/**
 * Where a block's world-state lanes are hashed (~12 µs of SHAKE-256 per changed entry, ~9% of the
 * main thread under a transfer load): on one worker thread, so the event loop keeps serving
 * requests while the producer waits; in this thread when no worker is wanted or one cannot start,
 * and for the jobs of a worker that dies (so a block never waits on a lost worker) until its
 * replacement has started (workers/supervise.ts: logged, restarted after a back-off).
 */
import type { Worker } from 'node:worker_threads'
import type { Logger } from '../log.ts'
import { turnBudget } from '../turns.ts'
import { startWorker } from '../workers/start.ts'
import { type SupervisedWorker, superviseWorker } from '../workers/supervise.ts'
import { addEntry, changeLanes, emptyLanes, type LaneChange, packLaneChanges, removeEntry } from './state-hash.ts'

/**
 * changeLanes in this thread, in turns of about a millisecond (src/turns.ts): a node of one thread
 * hashes every block here (~25 µs per changed entry, a few milliseconds for a block of a few
 * hundred transfers), and the admissions waiting meanwhile are served between the pieces.
 */
export async function changeLanesInTurns(changes: readonly LaneChange[]): Promise<Uint16Array> {
  const lanes = emptyLanes()
  const turn = turnBudget()
  for (const change of changes) {
    if (change.old !== undefined) removeEntry(lanes, change.kind, change.key, change.old)
    if (change.next !== undefined) addEntry(lanes, change.kind, change.key, change.next)
    const pause = turn()
    if (pause !== undefined) await pause
  }
  return lanes
}

export interface StateHasher {
  /** state-hash.ts changeLanes, possibly on the worker */
  changeLanes(changes: readonly LaneChange[]): Promise<Uint16Array>
  readonly mode: 'worker' | 'in-thread'
  close(): Promise<void>
}

export interface StateHasherOptions {
  /** false: hash in this thread */
  worker: boolean
  startTimeoutMs?: number
  /** worker script; tests point it elsewhere to force the fallback */
  workerFile?: URL
  /** where the worker's death and restart are logged */
  log?: Logger
}

export async function createStateHasher(options: StateHasherOptions): Promise<StateHasher> {
  const start = (): Promise<Worker | undefined> =>
    startWorker<{ ready: true }>(
      options.workerFile ?? new URL('./state-hash-worker.ts', import.meta.url),
      undefined,
      options.startTimeoutMs ?? 10_000,
      'state-hash',
    ).then((started) => started?.worker)
  const first = options.worker ? await start() : undefined
  let worker: Worker | undefined
  let nextJob = 1
  const pending = new Map<number, { changes: readonly LaneChange[]; resolve(lanes: Uint16Array): void }>()

  const abandon = (): void => {
    worker = undefined
    for (const job of pending.values()) job.resolve(changeLanes(job.changes))
    pending.clear()
  }
  const adopt = (started: Worker): void => {
    worker = started
    started.on('message', (message: { jobId: number; lanes: Uint16Array }) => {
      const job = pending.get(message.jobId)
      if (job === undefined) return
      pending.delete(message.jobId)
      if (pending.size === 0) worker?.unref()
      job.resolve(message.lanes)
    })
    // an idle worker must not keep the process alive; one with a job in hand must
    started.unref()
  }
  let supervisor: SupervisedWorker | undefined
  if (first !== undefined) {
    adopt(first)
    supervisor = superviseWorker(first, { what: 'the state-hash worker', log: options.log, start, lost: abandon, adopt })
  }

  return {
    get mode() {
      return worker === undefined ? 'in-thread' : 'worker'
    },
    changeLanes(changes) {
      if (worker === undefined || changes.length === 0) return changeLanesInTurns(changes)
      const jobId = nextJob++
      const target = worker
      return new Promise((resolve) => {
        if (pending.size === 0) target.ref()
        pending.set(jobId, { changes, resolve })
        const packed = packLaneChanges(changes)
        target.postMessage({ jobId, packed }, [packed.buffer as ArrayBuffer])
      })
    },
    async close() {
      supervisor?.close()
      const closing = worker
      abandon()
      if (closing !== undefined) await closing.terminate()
    },
  }
}
