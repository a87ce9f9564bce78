/**
 * Restarting a worker thread that dies unexpectedly (docs/reliability.md "Threads that die"): the
 * death is logged with its cause, and a new worker is started after a back-off that doubles with
 * each death in a row (a worker that ran for `stableMs` before it died starts the count again), so a
 * worker that dies at once on every start costs a start now and then, not a busy loop.
 */
import type { Worker } from 'node:worker_threads'
import type { Logger } from '../log.ts'

export interface SupervisedWorker {
  /** the worker was stopped on purpose from now on: its exit is not a death */
  close(): void
  /** restarts so far */
  readonly restarts: number
}

export interface SuperviseOptions {
  /** what the worker is, for the log: "a verify worker" */
  what: string
  log: Logger | undefined
  /** starts a replacement; undefined when it could not start (tried again after the next back-off) */
  start(): Promise<Worker | undefined>
  /** the worker died: its jobs must be taken back now (before the back-off) */
  lost(worker: Worker): void
  /** a replacement is ready: wire it up as the first one was */
  adopt(worker: Worker): void
  firstDelayMs?: number
  maxDelayMs?: number
  stableMs?: number
}

const FIRST_DELAY_MS = 500
const MAX_DELAY_MS = 30_000
const STABLE_MS = 60_000

/** Watches `first` (already adopted) and every replacement. */
export function superviseWorker(first: Worker, options: SuperviseOptions): SupervisedWorker {
  const firstDelay = options.firstDelayMs ?? FIRST_DELAY_MS
  const maxDelay = options.maxDelayMs ?? MAX_DELAY_MS
  const stableMs = options.stableMs ?? STABLE_MS
  let closed = false
  let inARow = 0
  let restarts = 0
  let timer: NodeJS.Timeout | undefined

  const nextDelay = (): number => Math.min(maxDelay, firstDelay * 2 ** Math.min(inARow++, 20))

  const retry = (): void => {
    const delay = nextDelay()
    timer = setTimeout(() => void restart(), delay)
    timer.unref()
  }

  const restart = async (): Promise<void> => {
    timer = undefined
    if (closed) return
    let worker: Worker | undefined
    try {
      worker = await options.start()
    } catch (error) {
      options.log?.error(`${options.what} could not be restarted`, error)
    }
    if (closed) {
      void worker?.terminate()
      return
    }
    if (worker === undefined) {
      options.log?.error(`${options.what} did not start again; trying once more after a back-off`)
      return retry()
    }
    restarts++
    options.adopt(worker)
    watch(worker)
    options.log?.warn(`${options.what} restarted (restart ${restarts})`)
  }

  const watch = (worker: Worker): void => {
    const since = performance.now()
    let cause: Error | undefined
    // an 'error' event with no listener would be thrown in this thread and take the node down
    worker.on('error', (error) => {
      cause = error
    })
    worker.once('exit', (code) => {
      if (closed) return
      options.lost(worker)
      if (performance.now() - since >= stableMs) inARow = 0
      const delay = Math.min(maxDelay, firstDelay * 2 ** Math.min(inARow, 20))
      options.log?.error(
        `${options.what} stopped unexpectedly (exit code ${code}${cause === undefined ? '' : `: ${cause.message}`}); restarting it in ${delay} ms`,
        cause,
      )
      retry()
    })
  }

  watch(first)
  return {
    close() {
      closed = true
      clearTimeout(timer)
    },
    get restarts() {
      return restarts
    },
  }
}
