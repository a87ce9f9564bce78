/**
 * Worker thread of verify-pool.ts: verifies batches of transaction signatures off the threads that
 * decide and answer. Messages in: `{ jobId, items: {tx, signature}[] }` or `{ jobId, packed, count }`
 * (binary transactions, wire/tx-codec.ts, as one buffer: wire/frames.ts); out: `{ jobId, valid: Uint8Array }` (a
 * SignatureVerdict code per item: 1 valid) on the port the job came from; `{ port }` adds a port another thread sends jobs on.
 * `{ jobId, job, data, packed, count }` runs a named job of the module workerData.jobModule names
 * (verify-pool.ts JobModule) and answers its per-item bytes packed the same way. Posts
 * `{ ready: true, backend }` once the crypto modules (and that module) have loaded.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads'
import { unpackFrames } from '../wire/frames.ts'
import type { TxFields } from './sign-string.ts'
import { secp256k1BackendName } from './signature.ts'
import { type JobModule, runJobChunk, type VerifyChunk, verifyOne } from './verify-pool.ts'

type JobMessage = { jobId: number } & (
  | { items: { tx: TxFields; signature: string }[] }
  | { packed: Uint8Array; count: number; job?: undefined }
  | { packed: Uint8Array; count: number; job: string; data: unknown }
)

const port = parentPort
if (!port) throw new Error('verify-worker.ts must run as a worker thread')
const { nodeVersion, jobModule } = (workerData ?? {}) as { nodeVersion?: string; jobModule?: string }
// the jobs of a layer above this one (verify-pool.ts JobModule), loaded before this worker says it is ready
const handlers = jobModule === undefined ? {} : ((await import(jobModule)) as { jobs: JobModule['handlers'] }).jobs

const serve = (on: MessagePort): void => {
  on.on('message', (message: JobMessage | { port: MessagePort }) => {
    if ('port' in message) return serve(message.port)
    if ('job' in message && message.job !== undefined) {
      let answers: Uint8Array
      try {
        answers = runJobChunk(handlers, { job: message.job, txs: framesOf(message.packed, message.count), data: message.data }, nodeVersion)
      } catch {
        answers = new Uint8Array(0)
      }
      return on.postMessage({ jobId: message.jobId, valid: answers }, [answers.buffer as ArrayBuffer])
    }
    const chunk = chunkOf(message)
    const valid = new Uint8Array(chunk.count)
    for (let i = 0; i < chunk.count; i++) valid[i] = verifyOne(chunk, i, nodeVersion)
    on.postMessage({ jobId: message.jobId, valid }, [valid.buffer])
  })
}

/** a job as verifyOne reads it; transactions a packed buffer does not hold verify as invalid */
function chunkOf(message: JobMessage): VerifyChunk {
  if ('items' in message) return { message: { items: message.items }, count: message.items.length }
  return { message: { txs: framesOf(message.packed, message.count) }, count: message.count }
}

/** `count` frames of a packed buffer; an item it does not hold is empty */
function framesOf(packed: Uint8Array, count: number): Uint8Array[] {
  let frames: (Uint8Array | undefined)[] = []
  try {
    frames = unpackFrames(packed)
  } catch {}
  return Array.from({ length: count }, (_, i) => frames[i] ?? new Uint8Array(0))
}

serve(port)
port.postMessage({ ready: true, backend: secp256k1BackendName() })
