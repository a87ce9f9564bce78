/**
 * Worker thread of state-hasher.ts: the lane vector of a block's state changes (state-hash.ts
 * changeLanes), off the main thread. In: `{ jobId, changes }`; out: `{ jobId, lanes }` with the
 * lanes' buffer transferred, and `{ ready: true }` once loaded.
 */
import { parentPort } from 'node:worker_threads'
import { changeLanes, type LaneChange } from './state-hash.ts'

const port = parentPort
if (!port) throw new Error('state-hash-worker.ts must run as a worker thread')

port.on('message', (message: { jobId: number; changes: LaneChange[] }) => {
  const lanes = changeLanes(message.changes)
  port.postMessage({ jobId: message.jobId, lanes }, [lanes.buffer as ArrayBuffer])
})

port.postMessage({ ready: true })
