/**
 * How many threads a node runs, from the cores it may use (issue 27, `[node] cores`).
 *
 * Each thread beside the chain thread pays for itself in hops: a message and a wake-up each way,
 * the transaction framed and copied, and its own heap to collect. That pays only when the thread
 * gets a core of its own:
 * - one core (four VPs sharing two, `npm run network`): the chain thread alone — requests,
 *   signatures and the state root on it, no worker at all;
 * - two cores: the chain thread, the request thread(s) and one verify worker. A request thread
 *   admits the submissions of a quiet turn itself (front/submitter.ts: fewer than four; at half
 *   load each request arrives alone) and sends a burst to the worker in one message; the state is
 *   hashed on the chain thread. Measured against the layout below on two cores (docs/pipeline.md,
 *   "The thread layout on two cores"): the same or 5–11% less CPU per transfer at full load,
 *   4–25% less at half load, and a lower p99 there;
 * - three or more: a verify worker per core and a state-hash worker, for the throughput of
 *   signatures on cores that would otherwise idle (not measured on more than two cores).
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
  if (cores === 2 && wanted.requestThreads > 0)
    return { cores, requestThreads: wanted.requestThreads, verifyWorkers: 1, stateHashWorker: false }
  return { cores, requestThreads: wanted.requestThreads, verifyWorkers: cores, stateHashWorker: true }
}

/** The cores each of `nodes` nodes started on one machine gets: an equal share, at least one. */
export const coresPerNode = (nodes: number, machineCores = availableParallelism()): number =>
  Math.max(1, Math.floor(machineCores / Math.max(1, nodes)))
