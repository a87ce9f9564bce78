/** A verify worker's entry (verify-pool.ts's default) when the pool runs no jobs: signature checks only. */
import { serveVerifyWorker } from './verify-worker.ts'

serveVerifyWorker({})
