/**
 * Worker thread of verify-pool.ts: verifies batches of transaction signatures off the threads that
 * decide and answer. Messages in: `{ jobId, items: {tx, signature}[] }` or `{ jobId, txs:
 * Uint8Array[] }` (binary transactions, wire/tx-codec.ts); out: `{ jobId, valid: Uint8Array }` (a
 * SignatureVerdict code per item: 1 valid) on the port the job came from; `{ port }` adds a port another thread sends jobs on. Posts
 * `{ ready: true, backend }` once the crypto modules have loaded.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads'
import { secp256k1BackendName } from './signature.ts'
import { type VerifyChunk, verifyOne } from './verify-pool.ts'

type JobMessage = { jobId: number } & VerifyChunk['message']

const port = parentPort
if (!port) throw new Error('verify-worker.ts must run as a worker thread')
const nodeVersion = (workerData as { nodeVersion?: string } | undefined)?.nodeVersion

const serve = (on: MessagePort): void => {
  on.on('message', (message: JobMessage | { port: MessagePort }) => {
    if ('port' in message) return serve(message.port)
    const chunk: VerifyChunk = { message, count: 'items' in message ? message.items.length : message.txs.length }
    const valid = new Uint8Array(chunk.count)
    for (let i = 0; i < chunk.count; i++) valid[i] = verifyOne(chunk, i, nodeVersion)
    on.postMessage({ jobId: message.jobId, valid }, [valid.buffer])
  })
}
serve(port)
port.postMessage({ ready: true, backend: secp256k1BackendName() })
