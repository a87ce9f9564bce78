/**
 * The verify workers' entry on a node (node.ts): the signature checks (crypto/verify-worker.ts) and
 * the request threads' admission jobs (admission-job.ts), imported here so the dependency shows.
 */
import { serveVerifyWorker } from '../crypto/verify-worker.ts'
import { jobs } from './admission-job.ts'

serveVerifyWorker(jobs)
