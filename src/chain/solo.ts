/**
 * Solo ordering for a single VP: cut a block when `batchSize` verified transactions wait, or when
 * the oldest has waited `batchTimeoutMs`. One block at a time; the next starts when the last is
 * committed, so blocks never interleave.
 */
import type { Logger } from '../log.ts'
import type { ReadyTx, TxPool } from './pool.ts'

export interface SoloOptions {
  pool: TxPool
  produce(batch: ReadyTx[]): Promise<unknown>
  batchSize: number
  batchTimeoutMs: number
  log: Logger
  /** ordering stopped for good: a block could not be committed */
  onStopped(error: unknown): void
}

export interface Orderer {
  start(): void
  /** Stops cutting blocks; resolves once the block in progress (if any) is committed. */
  stop(): Promise<void>
}

export function createSoloOrderer(options: SoloOptions): Orderer {
  const { pool, log } = options
  let running = false
  let producing: Promise<void> | undefined
  let timer: NodeJS.Timeout | undefined

  const schedule = (): void => {
    if (!running || producing !== undefined) return
    const ready = pool.readyCount()
    if (ready === 0) return
    const oldest = pool.oldestArrival() ?? Date.now()
    const waited = Date.now() - oldest
    if (ready < options.batchSize && waited < options.batchTimeoutMs) {
      if (timer === undefined) {
        timer = setTimeout(() => {
          timer = undefined
          schedule()
        }, options.batchTimeoutMs - waited)
      }
      return
    }
    clearTimeout(timer)
    timer = undefined
    const batch = pool.take(options.batchSize)
    producing = options
      .produce(batch)
      .then(
        () => undefined,
        (error: unknown) => {
          // a block that cannot be committed leaves its transactions pending in the store; stop
          // rather than skip them, so no returned hash is lost
          log.error('block production failed; ordering stopped (restart the node to retry the pending transactions)', error)
          running = false
          options.onStopped(error)
        },
      )
      .finally(() => {
        producing = undefined
        setImmediate(schedule)
      })
  }

  pool.onReady(schedule)
  return {
    start() {
      running = true
      schedule()
    },
    async stop() {
      running = false
      clearTimeout(timer)
      await producing
    },
  }
}
