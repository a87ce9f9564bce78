/**
 * Signature verification off the threads that decide and answer (ARCHITECTURE.md decision 3): a
 * pool of worker threads takes batches and answers per-item validity. Recovery scales almost
 * linearly with threads (x1.98 on 2 cores, perf-baseline.md).
 *
 * A batch is `{tx, signature}` items (the params object as signed); a job of a layer above (a
 * request thread's admissions, front/admission-job.ts) travels as bytes, all of a chunk in one
 * transferred buffer (wire/frames.ts). Another thread reaches the same workers through message ports
 * (`connect` here, `createVerifyClient` there), so one pool serves the chain thread and every
 * request thread.
 *
 * When no worker can start (a platform without worker_threads support for the loader, a missing
 * file), the pool verifies in the calling thread instead, yielding to the event loop between
 * chunks, so callers never need a second code path. A worker that dies later is restarted with a
 * back-off (workers/supervise.ts); its jobs in flight are verified in this thread meanwhile, and
 * the other threads get a port to the replacement (`onWorker`).
 */
import { availableParallelism } from 'node:os'
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads'
import type { Logger } from '../log.ts'
import { turnBudget } from '../turns.ts'
import { packFrames, unpackFrames } from '../wire/frames.ts'
import { startWorker } from '../workers/start.ts'
import { type SupervisedWorker, superviseWorker } from '../workers/supervise.ts'
import type { TxFields } from './sign-string.ts'
import { checkTransactionSignature, SignatureVerdict, type SignatureVerdictCode, signatureVerdict } from './signature.ts'

export interface VerifyItem<Id = string | number> {
  id: Id
  tx: TxFields
  /** hex, `0x` optional */
  signature: string
}

export interface VerifyResult<Id = string | number> {
  id: Id
  /** the signature recovers `from` over a sign string that covers every field the transaction carries */
  valid: boolean
  /** the signature recovers `from`, but over a sign string that leaves out a field the transaction carries: the -32602 message refusing it */
  uncovered?: string
}

/** a job's chunk: its name, the requests' bytes, the data every request of the batch shares */
export interface JobChunk {
  job: string
  requests: Uint8Array[]
  data: unknown
}

export type JobHandler = (items: readonly Uint8Array[], data: unknown, context: { nodeVersion: string | undefined }) => Uint8Array[]
/**
 * Work of a layer above this one that should run beside the signature checks (the request
 * threads' admission: front/admission-job.ts): items in, one answer per item out, all bytes.
 * `workerFile` is the workers' entry, which imports the same table and passes it to
 * serveVerifyWorker (verify-worker.ts), as front/admission-worker.ts does; `handlers` is the table
 * for this thread, when no worker runs or one died.
 */
export interface JobModule {
  workerFile: URL
  handlers: Readonly<Record<string, JobHandler>>
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
  /** worker entry; default `jobs.workerFile`, else signature-worker.ts next to this file (tests point it elsewhere to force the fallback) */
  workerFile?: URL
  /** jobs the workers also run (runJob) */
  jobs?: JobModule
  /** where a worker's death and restart are logged */
  log?: Logger
}

export interface VerifyPool {
  /** verifies a batch; results are in input order */
  verify<Id>(items: readonly VerifyItem<Id>[]): Promise<VerifyResult<Id>[]>
  /** runs job `name` (VerifyPoolOptions.jobs) over `items` on the workers: one answer per item, in input order */
  runJob(name: string, items: readonly Uint8Array[], data: unknown): Promise<Uint8Array[]>
  /** 'workers' while at least one worker runs, else 'in-thread' */
  readonly mode: 'workers' | 'in-thread'
  /** live worker threads */
  readonly workerCount: number
  /** secp256k1 backend reported by the workers (or this thread) */
  readonly backend: string
  /** one port per worker for a client in another thread (createVerifyClient there); transfer them with the message that carries them */
  connect(): MessagePort[]
  /** called with a port to each worker started later (a dead one's replacement), for a client in another thread; returns what unsubscribes */
  onWorker(listener: (port: MessagePort) => void): () => void
  close(): Promise<void>
}

/** one chunk: what a worker message carries, and how this thread would do it instead */
interface Chunk {
  message: { items: { tx: TxFields; signature: string }[] } | JobChunk
  count: number
}

interface Job {
  chunk: Chunk
  resolve(valid: Uint8Array): void
}

interface Endpoint {
  post(message: unknown, transfer: ArrayBuffer[]): void
  pending: Map<number, Job>
  /** items sent and not yet answered, to pick the least loaded */
  load: number
}

const DEFAULT_CHUNK = 128

/** Starts the pool; resolves once the workers are ready (or the pool fell back to this thread). */
export async function createVerifyPool(options: VerifyPoolOptions = {}): Promise<VerifyPool> {
  const wanted = Math.max(0, Math.floor(options.workers ?? Math.max(1, availableParallelism())))
  const nodeVersion = options.nodeVersion
  const workerFile = options.workerFile ?? options.jobs?.workerFile ?? new URL('./signature-worker.ts', import.meta.url)
  const timeoutMs = options.startTimeoutMs ?? 15_000
  const started = await Promise.all(
    Array.from({ length: wanted }, () => startWorker<{ ready: true; backend?: string }>(workerFile, { nodeVersion }, timeoutMs, 'verify')),
  )
  const workers = started.filter((s) => s !== undefined).map((s) => s.worker)
  const backend = started.find((s) => s !== undefined)?.ready.backend ?? (await import('./secp256k1.ts')).secp256k1BackendName()
  const jobs = createJobs(nodeVersion, options.chunkSize, options.jobs?.handlers)
  const byWorker = new Map<Worker, Endpoint>()
  const listeners = new Set<(port: MessagePort) => void>()
  const portTo = (worker: Worker): MessagePort => {
    const channel = new MessageChannel()
    worker.postMessage({ port: channel.port1 }, [channel.port1])
    return channel.port2
  }
  const adopt = (worker: Worker): void => {
    const endpoint = jobs.add((message, transfer) => worker.postMessage(message, transfer))
    byWorker.set(worker, endpoint)
    worker.on('message', (message: { jobId: number; valid: Uint8Array }) => jobs.answer(endpoint, message))
  }
  const supervisors: SupervisedWorker[] = []
  for (const worker of workers) {
    adopt(worker)
    supervisors.push(
      superviseWorker(worker, {
        what: 'a verify worker',
        log: options.log,
        start: async () => (await startWorker<{ ready: true }>(workerFile, { nodeVersion }, timeoutMs, 'verify'))?.worker,
        lost(dead) {
          const endpoint = byWorker.get(dead)
          byWorker.delete(dead)
          if (endpoint !== undefined) jobs.retire(endpoint)
        },
        adopt(replacement) {
          adopt(replacement)
          for (const listener of listeners) listener(portTo(replacement))
        },
      }),
    )
  }
  return poolOf(jobs, {
    backend,
    connect: () => [...byWorker.keys()].map(portTo),
    onWorker(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async close() {
      for (const supervisor of supervisors) supervisor.close()
      jobs.close()
      await Promise.all([...byWorker.keys()].map((worker) => worker.terminate()))
    },
  })
}

/**
 * The pool as seen from another thread: the same workers through the ports `connect` made there
 * (none: it verifies in this thread).
 */
export function createVerifyClient(
  ports: readonly MessagePort[],
  options: { nodeVersion?: string; chunkSize?: number; backend: string; handlers?: JobModule['handlers'] },
): VerifyPool & { addPort(port: MessagePort): void } {
  const jobs = createJobs(options.nodeVersion, options.chunkSize, options.handlers)
  const open = new Set<MessagePort>()
  const addPort = (port: MessagePort): void => {
    const endpoint = jobs.add((message, transfer) => port.postMessage(message, transfer))
    open.add(port)
    port.on('message', (message: { jobId: number; valid: Uint8Array }) => jobs.answer(endpoint, message))
    // the worker at the other end died: its jobs are done here until the pool sends its replacement (addPort)
    port.on('close', () => {
      open.delete(port)
      jobs.retire(endpoint)
    })
  }
  for (const port of ports) addPort(port)
  // assigned onto the pool, not spread: its mode and workerCount are getters
  return Object.assign(
    poolOf(jobs, {
      backend: options.backend,
      connect: () => [],
      onWorker: () => () => {},
      async close() {
        jobs.close()
        for (const port of open) port.close()
      },
    }),
    { addPort },
  )
}

/** The VerifyPool of a pool's or a client's jobs (their live mode and worker count) and its own ends. */
function poolOf(jobs: ReturnType<typeof createJobs>, ends: Pick<VerifyPool, 'backend' | 'connect' | 'onWorker' | 'close'>): VerifyPool {
  const { pool } = jobs
  return {
    verify: pool.verify,
    runJob: pool.runJob,
    get mode() {
      return pool.mode
    },
    get workerCount() {
      return pool.workerCount
    },
    ...ends,
  }
}

/**
 * Chunks verified in this thread, first come first served, in turns of about a millisecond
 * (src/turns.ts). A node of one thread verifies every signature here: verifying each waiting
 * chunk a slice at a time (as before, 64 items per chunk per turn) made one turn as long as
 * 64 × the chunks waiting — tens of milliseconds after a burst — and the block being produced
 * beside it waited behind each of those turns, so blocks grew and latency with them.
 */
function inThreadVerifier(nodeVersion: string | undefined, handlers: JobModule['handlers']): (chunk: Chunk) => Promise<Uint8Array> {
  const waiting: { chunk: Chunk; valid: Uint8Array; done: number; settle(outcome: { valid: Uint8Array } | { error: unknown }): void }[] = []
  let draining = false
  const drain = async (): Promise<void> => {
    draining = true
    const turn = turnBudget()
    while (waiting.length > 0) {
      const head = waiting[0]
      try {
        head.valid[head.done] = verifyOne(head.chunk, head.done, nodeVersion)
        head.done++
        if (head.done === head.chunk.count) {
          waiting.shift()
          head.settle({ valid: head.valid })
        }
      } catch (error) {
        waiting.shift()
        head.settle({ error })
      }
      const pause = turn()
      if (pause !== undefined) await pause
    }
    draining = false
  }
  const inThread = (chunk: Chunk): Promise<Uint8Array> => {
    if ('job' in chunk.message) {
      const message = chunk.message
      return new Promise((resolve) => resolve(runJobChunk(handlers, message, nodeVersion)))
    }
    if (chunk.count === 0) return Promise.resolve(new Uint8Array(0))
    return new Promise((resolve, reject) => {
      const settle = (outcome: { valid: Uint8Array } | { error: unknown }): void =>
        'valid' in outcome ? resolve(outcome.valid) : reject(outcome.error)
      waiting.push({ chunk, valid: new Uint8Array(chunk.count), done: 0, settle })
      if (!draining) void drain()
    })
  }
  return inThread
}

/** What a pool and a client share: chunking, the least-loaded endpoint, this thread as the fallback. */
function createJobs(nodeVersion: string | undefined, chunkSize = DEFAULT_CHUNK, handlers: JobModule['handlers'] = {}) {
  const endpoints: Endpoint[] = []
  let nextJobId = 1
  let closed = false

  const inThread = inThreadVerifier(nodeVersion, handlers)

  const run = (chunk: Chunk): Promise<Uint8Array> => {
    if (endpoints.length === 0) return inThread(chunk)
    let target = endpoints[0]
    for (const candidate of endpoints) if (candidate.load < target.load) target = candidate
    const jobId = nextJobId++
    return new Promise((resolve) => {
      target.pending.set(jobId, { chunk, resolve })
      target.load += chunk.count
      try {
        if ('job' in chunk.message) {
          const packed = packFrames(chunk.message.requests)
          target.post({ jobId, job: chunk.message.job, data: chunk.message.data, packed, count: chunk.count }, [
            packed.buffer as ArrayBuffer,
          ])
        } else target.post({ jobId, ...chunk.message }, [])
      } catch {
        // a value structured clone cannot carry: verify that chunk here instead
        target.pending.delete(jobId)
        target.load -= chunk.count
        void inThread(chunk).then(resolve)
      }
    })
  }

  /** splits `count` items over every endpoint even when fewer than endpoints × chunkSize; each part's answer, in order */
  const parts = (count: number, slice: (start: number, end: number) => Chunk): Promise<Uint8Array[]> => {
    if (closed) return Promise.reject(new Error('verify pool is closed'))
    const size = endpoints.length > 1 ? Math.max(1, Math.min(chunkSize, Math.ceil(count / endpoints.length))) : chunkSize
    const answers: Promise<Uint8Array>[] = []
    for (let start = 0; start < count; start += size) answers.push(run(slice(start, Math.min(count, start + size))))
    return Promise.all(answers)
  }

  /** parts of verdicts, one byte per item, joined */
  const chunked = async (count: number, slice: (start: number, end: number) => Chunk): Promise<Uint8Array> => {
    const answers = await parts(count, slice)
    const valid = new Uint8Array(count)
    let at = 0
    for (const answer of answers) {
      valid.set(answer, at)
      at += answer.length
    }
    return valid
  }

  const pool = {
    get mode(): 'workers' | 'in-thread' {
      return endpoints.length > 0 ? 'workers' : 'in-thread'
    },
    get workerCount() {
      return endpoints.length
    },
    async verify<Id>(items: readonly VerifyItem<Id>[]): Promise<VerifyResult<Id>[]> {
      const plain = items.map((item) => ({ tx: item.tx, signature: item.signature }))
      const valid = await chunked(plain.length, (start, end) => ({ message: { items: plain.slice(start, end) }, count: end - start }))
      return items.map((item, i) => {
        if (valid[i] !== SignatureVerdict.uncovered) return { id: item.id, valid: valid[i] === SignatureVerdict.valid }
        // rare: the check is made again here for its message
        return { id: item.id, valid: false, uncovered: checkTransactionSignature(item.tx, item.signature, { nodeVersion }).uncovered }
      })
    },
    async runJob(job: string, items: readonly Uint8Array[], data: unknown): Promise<Uint8Array[]> {
      const answers = await parts(items.length, (start, end) => ({
        message: { job, requests: items.slice(start, end), data },
        count: end - start,
      }))
      const frames = answers.flatMap((answer) => unpackFrames(answer))
      // a worker whose handler threw answers nothing for its part
      if (frames.length !== items.length) throw new Error(`job ${job}: ${frames.length} answers for ${items.length} items`)
      return frames.map((frame) => frame ?? new Uint8Array(0))
    },
  }

  return {
    pool,
    add(post: Endpoint['post']): Endpoint {
      const endpoint: Endpoint = { post, pending: new Map(), load: 0 }
      endpoints.push(endpoint)
      return endpoint
    },
    answer(endpoint: Endpoint, message: { jobId: number; valid: Uint8Array }): void {
      const job = endpoint.pending.get(message.jobId)
      if (job === undefined) return
      endpoint.pending.delete(message.jobId)
      endpoint.load -= job.chunk.count
      job.resolve(message.valid)
    },
    /** a worker that crashed (or a port that closed) leaves its jobs to this thread, so no caller waits forever */
    retire(endpoint: Endpoint): void {
      const index = endpoints.indexOf(endpoint)
      if (index >= 0) endpoints.splice(index, 1)
      for (const job of endpoint.pending.values()) void inThread(job.chunk).then(job.resolve)
      endpoint.pending.clear()
    },
    close(): void {
      closed = true
      for (const endpoint of endpoints.splice(0)) {
        for (const job of endpoint.pending.values()) void inThread(job.chunk).then(job.resolve)
        endpoint.pending.clear()
      }
    },
  }
}

/** A job chunk's answers, one frame per item (wire/frames.ts), in this thread or a worker. */
export function runJobChunk(handlers: JobModule['handlers'], message: JobChunk, nodeVersion: string | undefined): Uint8Array {
  const handler = Object.hasOwn(handlers, message.job) ? handlers[message.job] : undefined
  if (handler === undefined) throw new Error(`the verify pool runs no job named ${JSON.stringify(message.job)}`)
  return packFrames(handler(message.requests, message.data, { nodeVersion }))
}

/** item `i` of a chunk of params objects with their signatures */
export function verifyOne(chunk: Chunk, i: number, nodeVersion: string | undefined): SignatureVerdictCode {
  if (!('items' in chunk.message)) throw new Error('verifyOne: a job chunk holds no transactions to verify')
  const item = chunk.message.items[i]
  return signatureVerdict(item.tx, item.signature, { nodeVersion })
}

export type { Chunk as VerifyChunk }
