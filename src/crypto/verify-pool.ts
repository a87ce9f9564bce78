/**
 * Signature verification off the request path (ARCHITECTURE.md decision 3): a pool of worker
 * threads takes batches of `{id, tx, signature}` and answers per-item validity. Recovery scales
 * almost linearly with threads (x1.98 on 2 cores, perf-baseline.md), and the event loop stays free
 * for RPC and consensus.
 *
 * When no worker can start (a platform without worker_threads support for the loader, a missing
 * file), the pool verifies in this thread instead, yielding to the event loop between chunks, so
 * callers never need a second code path.
 */
import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import { startWorker } from '../workers/start.ts'
import type { TxFields } from './sign-string.ts'
import { verifyTransactionSignature } from './signature.ts'

export interface VerifyItem<Id = string | number> {
  id: Id
  tx: TxFields
  /** hex, `0x` optional */
  signature: string
}

export interface VerifyResult<Id = string | number> {
  id: Id
  valid: boolean
}

export interface VerifyPoolOptions {
  /** number of worker threads; default one per core; 0 verifies in this thread */
  workers?: number
  /** tx version the node advertises (sign-string.ts candidate 4) */
  nodeVersion?: string
  /** items per message to a worker; smaller chunks balance better, larger ones cost fewer messages */
  chunkSize?: number
  /** how long to wait for a worker to load before giving up on it */
  startTimeoutMs?: number
  /** worker script; default verify-worker next to this file (tests point it elsewhere to force the fallback) */
  workerFile?: URL
}

export interface VerifyPool {
  /** verifies a batch; results are in input order */
  verify<Id>(items: readonly VerifyItem<Id>[]): Promise<VerifyResult<Id>[]>
  /** 'workers' while at least one worker runs, else 'in-thread' */
  readonly mode: 'workers' | 'in-thread'
  /** live worker threads */
  readonly workerCount: number
  /** secp256k1 backend reported by the workers (or this thread) */
  readonly backend: string
  close(): Promise<void>
}

interface Job {
  items: { tx: TxFields; signature: string }[]
  resolve(valid: Uint8Array): void
}

interface PoolWorker {
  worker: Worker
  pending: Map<number, Job>
  /** items sent and not yet answered, to pick the least loaded worker */
  load: number
}

const DEFAULT_CHUNK = 128
const IN_THREAD_CHUNK = 64

/** Starts the pool; resolves once the workers are ready (or the pool fell back to this thread). */
export async function createVerifyPool(options: VerifyPoolOptions = {}): Promise<VerifyPool> {
  const wanted = Math.max(0, Math.floor(options.workers ?? Math.max(1, availableParallelism())))
  const chunkSize = Math.max(1, options.chunkSize ?? DEFAULT_CHUNK)
  const nodeVersion = options.nodeVersion
  const workerFile = options.workerFile ?? new URL('./verify-worker.ts', import.meta.url)
  const timeoutMs = options.startTimeoutMs ?? 15_000
  const started = await Promise.all(Array.from({ length: wanted }, () => startVerifyWorker(workerFile, nodeVersion, timeoutMs)))
  const workers: PoolWorker[] = started.filter((w) => w !== undefined).map((s) => ({ worker: s.worker, pending: new Map(), load: 0 }))
  const backend = started.find((w) => w !== undefined)?.backend ?? (await import('./secp256k1.ts')).secp256k1BackendName()
  let nextJobId = 1
  let closed = false

  const verifyInThread = async (items: readonly { tx: TxFields; signature: string }[]): Promise<Uint8Array> => {
    const valid = new Uint8Array(items.length)
    for (let i = 0; i < items.length; i++) {
      valid[i] = verifyTransactionSignature(items[i].tx, items[i].signature, { nodeVersion }) ? 1 : 0
      // let I/O and timers run between chunks of a large batch
      if ((i + 1) % IN_THREAD_CHUNK === 0 && i + 1 < items.length) await new Promise((resolve) => setImmediate(resolve))
    }
    return valid
  }

  const retire = (dead: PoolWorker): void => {
    const index = workers.indexOf(dead)
    if (index >= 0) workers.splice(index, 1)
    // A worker that crashed leaves its jobs to this thread, so no caller waits forever.
    for (const job of dead.pending.values()) void verifyInThread(job.items).then(job.resolve)
    dead.pending.clear()
  }

  for (const entry of workers) {
    entry.worker.on('message', (message: { jobId: number; valid: Uint8Array }) => {
      const job = entry.pending.get(message.jobId)
      if (!job) return
      entry.pending.delete(message.jobId)
      entry.load -= job.items.length
      job.resolve(message.valid)
    })
    entry.worker.on('error', () => retire(entry))
    entry.worker.on('exit', () => retire(entry))
  }

  const runChunk = (items: { tx: TxFields; signature: string }[]): Promise<Uint8Array> => {
    if (workers.length === 0) return verifyInThread(items)
    let target = workers[0]
    for (const candidate of workers) if (candidate.load < target.load) target = candidate
    const jobId = nextJobId++
    return new Promise((resolve) => {
      target.pending.set(jobId, { items, resolve })
      target.load += items.length
      try {
        target.worker.postMessage({ jobId, items })
      } catch {
        // a value structured clone cannot carry: verify that chunk here instead
        target.pending.delete(jobId)
        target.load -= items.length
        void verifyInThread(items).then(resolve)
      }
    })
  }

  return {
    get mode() {
      return workers.length > 0 ? 'workers' : 'in-thread'
    },
    get workerCount() {
      return workers.length
    },
    backend,
    async verify<Id>(items: readonly VerifyItem<Id>[]): Promise<VerifyResult<Id>[]> {
      if (closed) throw new Error('verify pool is closed')
      const plain = items.map((item) => ({ tx: item.tx, signature: item.signature }))
      // Spread a batch over every worker even when it is smaller than workers × chunkSize.
      const size = workers.length > 1 ? Math.min(chunkSize, Math.ceil(plain.length / workers.length)) : chunkSize
      const chunks: Promise<Uint8Array>[] = []
      for (let start = 0; start < plain.length; start += size) chunks.push(runChunk(plain.slice(start, start + size)))
      const answers = await Promise.all(chunks)
      const results: VerifyResult<Id>[] = new Array(items.length)
      let index = 0
      for (const valid of answers) for (const flag of valid) results[index] = { id: items[index++].id, valid: flag === 1 }
      return results
    },
    async close() {
      closed = true
      const running = workers.splice(0)
      await Promise.all(
        running.map(async (entry) => {
          entry.worker.removeAllListeners('exit')
          for (const job of entry.pending.values()) void verifyInThread(job.items).then(job.resolve)
          await entry.worker.terminate()
        }),
      )
    },
  }
}

/** Starts one verify worker; undefined when it cannot start. */
async function startVerifyWorker(
  source: URL,
  nodeVersion: string | undefined,
  timeoutMs: number,
): Promise<{ worker: Worker; backend: string } | undefined> {
  const started = await startWorker<{ ready: true; backend?: string }>(source, { nodeVersion }, timeoutMs, 'verify')
  return started === undefined ? undefined : { worker: started.worker, backend: started.ready.backend ?? 'unknown' }
}
