/**
 * How many threads a node runs, from the cores it may use (issue 27, `[node] cores`).
 *
 * Each thread beside the chain thread pays for itself in hops: a message and a wake-up each way,
 * the transaction framed and copied, and its own heap to collect (docs/pipeline.md, the cost
 * ledger: ~80 µs per transfer of hops on two cores). That pays when the thread gets a core of its
 * own. A node given one core (four VPs sharing two, `npm run network`) gains nothing from five
 * threads fighting for it, so there it runs as one: requests, signatures and the state root on the
 * chain thread, no worker at all.
 */
import { availableParallelism } from 'node:os'

export interface ThreadLayout {
  /** the cores the layout is made for */
  cores: number
  /** request threads ([jsonrpc] threads, or none) */
  requestThreads: number
  /** signature-verifying workers (0: verified on the chain thread) */
  verifyWorkers: number
  /** whether the world state is hashed on a worker of its own */
  stateHashWorker: boolean
}

/**
 * The layout for `cores` (0: all of the machine's; never more than it has) with `requestThreads`
 * request threads wanted ([jsonrpc] threads).
 */
export function threadLayout(wanted: { cores: number; requestThreads: number }, machineCores = availableParallelism()): ThreadLayout {
  const cores = wanted.cores === 0 ? machineCores : Math.min(wanted.cores, machineCores)
  if (cores <= 1) return { cores, requestThreads: 0, verifyWorkers: 0, stateHashWorker: false }
  return { cores, requestThreads: wanted.requestThreads, verifyWorkers: cores, stateHashWorker: true }
}

/** The cores each of `nodes` nodes started on one machine gets: an equal share, at least one. */
export const coresPerNode = (nodes: number, machineCores = availableParallelism()): number =>
  Math.max(1, Math.floor(machineCores / Math.max(1, nodes)))
