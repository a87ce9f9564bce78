/**
 * Worker thread of verify-pool.ts: verifies batches of transaction signatures off the threads that
 * decide and answer. Messages in: `{ jobId, items: {tx, signature}[] }` or `{ jobId, packed, count }`
 * (binary transactions, wire/tx-codec.ts, as one buffer: wire/frames.ts); out: `{ jobId, valid: Uint8Array }` (a
 * SignatureVerdict code per item: 1 valid) on the port the job came from; `{ port }` adds a port another thread sends jobs on. Posts
 * `{ ready: true, backend }` once the crypto modules have loaded.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads'
import { unpackFrames } from '../wire/frames.ts'
import type { TxFields } from './sign-string.ts'
import { secp256k1BackendName } from './signature.ts'
import { type VerifyChunk, verifyOne } from './verify-pool.ts'

type JobMessage = { jobId: number } & ({ items: { tx: TxFields; signature: string }[] } | { packed: Uint8Array; count: number })

const port = parentPort
if (!port) throw new Error('verify-worker.ts must run as a worker thread')
const nodeVersion = (workerData as { nodeVersion?: string } | undefined)?.nodeVersion

const serve = (on: MessagePort): void => {
  on.on('message', (message: JobMessage | { port: MessagePort }) => {
    if ('port' in message) return serve(message.port)
    const chunk = chunkOf(message)
    const valid = new Uint8Array(chunk.count)
    for (let i = 0; i < chunk.count; i++) valid[i] = verifyOne(chunk, i, nodeVersion)
    on.postMessage({ jobId: message.jobId, valid }, [valid.buffer])
  })
}

/** a job as verifyOne reads it; transactions a packed buffer does not hold verify as invalid */
function chunkOf(message: JobMessage): VerifyChunk {
  if ('items' in message) return { message: { items: message.items }, count: message.items.length }
  let frames: (Uint8Array | undefined)[] = []
  try {
    frames = unpackFrames(message.packed)
  } catch {}
  const txs = Array.from({ length: message.count }, (_, i) => frames[i] ?? new Uint8Array(0))
  return { message: { txs }, count: message.count }
}

serve(port)
port.postMessage({ ready: true, backend: secp256k1BackendName() })
