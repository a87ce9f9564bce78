/**
 * Worker thread of verify-pool.ts: verifies batches of transaction signatures off the main thread.
 * Messages in: `{ jobId, items: {tx, signature}[] }`; out: `{ jobId, valid: Uint8Array }` (1 =
 * valid), and `{ ready: true, backend }` once the crypto modules have loaded.
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { TxFields } from './sign-string.ts'
import { secp256k1BackendName, verifyTransactionSignature } from './signature.ts'

interface JobMessage {
  jobId: number
  items: { tx: TxFields; signature: string }[]
}

const port = parentPort
if (!port) throw new Error('verify-worker.ts must run as a worker thread')
const nodeVersion = (workerData as { nodeVersion?: string } | undefined)?.nodeVersion

port.on('message', (message: JobMessage) => {
  const valid = new Uint8Array(message.items.length)
  for (let i = 0; i < message.items.length; i++) {
    const item = message.items[i]
    valid[i] = verifyTransactionSignature(item.tx, item.signature, { nodeVersion }) ? 1 : 0
  }
  port.postMessage({ jobId: message.jobId, valid }, [valid.buffer])
})

port.postMessage({ ready: true, backend: secp256k1BackendName() })
