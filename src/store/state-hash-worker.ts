/**
 * Worker thread of state-hasher.ts: the lane vector of a block's state changes (state-hash.ts
 * changeLanes), off the main thread. In: `{ jobId, packed }` (state-hash.ts packLaneChanges, its buffer transferred); out: `{ jobId, lanes }` with the
 * lanes' buffer transferred, and `{ ready: true }` once loaded.
 */
import { parentPort } from 'node:worker_threads'
import { failpoint } from '../failpoints.ts'
import { publishThreadHeap } from '../metrics/thread-heap.ts'
import { runAsBulkThread } from '../workers/start.ts'
import { changeLanes, unpackLaneChanges } from './state-hash.ts'

const port = parentPort
if (!port) throw new Error('state-hash-worker.ts must run as a worker thread')
runAsBulkThread()
publishThreadHeap()

port.on('message', (message: { jobId: number; packed: Uint8Array }) => {
  // kills this worker as a crash would (docs/reliability.md "Threads that die")
  failpoint('state-hash.worker')
  const lanes = changeLanes(unpackLaneChanges(message.packed))
  port.postMessage({ jobId: message.jobId, lanes }, [lanes.buffer as ArrayBuffer])
})

port.postMessage({ ready: true })
