/**
 * What a worker thread of verify-pool.ts does: verifies batches of transaction signatures off the
 * threads that decide and answer. Messages in: `{ jobId, items: {tx, signature}[] }`; out: `{ jobId,
 * valid: Uint8Array }` (a SignatureVerdict code per item: 1 valid) on the port the job came from.
 * `{ jobId, job, data, packed, count }` runs a named job of the table its entry passed (verify-pool.ts
 * JobModule) over the requests packed in one buffer (wire/frames.ts) and answers its per-item bytes
 * packed the same way. `{ port }` adds a port another thread sends jobs on. Posts `{ ready: true,
 * backend }` once it serves.
 *
 * A worker's entry module imports its jobs and calls serveVerifyWorker, so an import shows which
 * jobs a worker runs: signature-worker.ts (none), front/admission-worker.ts (the admission's).
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads'
import { failpoint } from '../failpoints.ts'
import { publishThreadHeap } from '../metrics/thread-heap.ts'
import { unpackFrames } from '../wire/frames.ts'
import { runAsBulkThread } from '../workers/start.ts'
import type { TxFields } from './sign-string.ts'
import { secp256k1BackendName } from './signature.ts'
import { type JobModule, runJobChunk, type VerifyChunk, verifyOne } from './verify-pool.ts'

type JobMessage = { jobId: number } & (
  | { items: { tx: TxFields; signature: string }[] }
  | { packed: Uint8Array; count: number; job: string; data: unknown }
)

/** serves this worker thread's port with the signature checks and `handlers`' jobs, then says it is ready */
export function serveVerifyWorker(handlers: JobModule['handlers']): void {
  const port = parentPort
  if (!port) throw new Error('a verify worker must run as a worker thread (verify-pool.ts starts it)')
  runAsBulkThread()
  publishThreadHeap()
  const { nodeVersion } = (workerData ?? {}) as { nodeVersion?: string }
  serve(port, handlers, nodeVersion)
  port.postMessage({ ready: true, backend: secp256k1BackendName() })
}

function serve(on: MessagePort, handlers: JobModule['handlers'], nodeVersion: string | undefined): void {
  on.on('message', (message: JobMessage | { port: MessagePort }) => {
    if ('port' in message) return serve(message.port, handlers, nodeVersion)
    // kills this worker as a crash would (docs/reliability.md "Threads that die")
    failpoint('verify.worker')
    if ('job' in message) {
      let answers: Uint8Array
      try {
        answers = runJobChunk(
          handlers,
          { job: message.job, requests: framesOf(message.packed, message.count), data: message.data },
          nodeVersion,
        )
      } catch {
        answers = new Uint8Array(0)
      }
      return on.postMessage({ jobId: message.jobId, valid: answers }, [answers.buffer as ArrayBuffer])
    }
    const chunk: VerifyChunk = { message: { items: message.items }, count: message.items.length }
    const valid = new Uint8Array(chunk.count)
    for (let i = 0; i < chunk.count; i++) valid[i] = verifyOne(chunk, i, nodeVersion)
    on.postMessage({ jobId: message.jobId, valid }, [valid.buffer])
  })
}

/** `count` frames of a packed buffer; a request it does not hold is empty (the job answers it as malformed) */
function framesOf(packed: Uint8Array, count: number): Uint8Array[] {
  let frames: (Uint8Array | undefined)[] = []
  try {
    frames = unpackFrames(packed)
  } catch {}
  return Array.from({ length: count }, (_, i) => frames[i] ?? new Uint8Array(0))
}
