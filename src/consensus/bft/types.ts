/**
 * What a replica (replica.ts) and its host agree on: the timers, the host's duties, what a replica
 * restores after a restart and reports back, and the quorum rule every section uses.
 */
import type { Membership } from './membership.ts'
import type { Commit, Hex, MemberVote, Signed } from './messages.ts'

/** consensus.md §1: checkpoint period and log size (h < seq ≤ h + L) */
export const K = 10
export const L = 4 * K

export interface ConsensusTimers {
  /** the primary cuts a partial batch after this */
  batchMs: number
  /** work waiting with no commit for this long: the primary is stalled (or censoring) */
  requestMs: number
  /** an idle primary says it is alive this often; backups wait 3× this + request */
  nullRequestMs: number
  /** a view change that has not finished after this moves on to the next view (doubling, up to 5×) */
  viewChangeMs: number
  /**
   * a slot in flight that got nothing new for this long has its lost messages sent again (the
   * interval doubles per slot, up to 8×): well below `requestMs`, so a lost message costs a resend,
   * not a view change (issue 6)
   */
  retransmitMs: number
  /** how often the replica looks at its timers */
  tickMs: number
}

/** consensus.md §8 (Hyperchain's defaults) */
export const DEFAULT_TIMERS: ConsensusTimers = {
  batchMs: 500,
  requestMs: 6000,
  nullRequestMs: 6000,
  viewChangeMs: 8000,
  retransmitMs: 1000,
  tickMs: 250,
}
/** consensus.md §10.12: the same rules, scaled down for tests */
export const TEST_TIMERS: ConsensusTimers = {
  batchMs: 500,
  requestMs: 2000,
  nullRequestMs: 2500,
  viewChangeMs: 4000,
  retransmitMs: 300,
  tickMs: 100,
}

/** what a replica is doing: ordering, electing a primary, asking where the others are, fetching blocks, following until it joins the group, or out of it */
export type ReplicaPhase = 'normal' | 'viewChange' | 'recovering' | 'stateTransfer' | 'joining' | 'retired'

export interface CommittedBatch {
  seq: number
  view: number
  timestamp: bigint
  txHashes: Hex[]
  digest: Hex
  /** membership votes ordered with the batch: the host records them (Membership.record) before it reports the block executed */
  votes: Signed<MemberVote>[]
  /** quorum signed commits: the proof NVPs and lagging replicas check */
  certificate: Signed<Commit>[]
}

export type ConsensusEvent =
  | { kind: 'view-change-started'; view: number; reason: string }
  | { kind: 'view-change-finished'; view: number; primary: number; height: number }
  | { kind: 'recovery-started'; reason: string }
  | { kind: 'recovery-finished'; view: number; height: number }
  /** the group changed: it orders from seq `from` on (this replica left it when `members` lacks it) */
  | { kind: 'membership-changed'; from: number; members: readonly number[] }

export interface ReplicaHost {
  sign(bytes: Uint8Array): Uint8Array
  verify(replica: number, bytes: Uint8Array, signature: Uint8Array): boolean
  /** a record to keep across a crash (undefined deletes it); sends issued after it wait until it is durable */
  persist(key: string, value: unknown): void
  send(to: number, message: Signed): void
  broadcast(message: Signed): void
  /** primary: takes up to `max` verified transactions out of the pool's queue, in arrival order */
  takeBatch(max: number): Hex[]
  pendingCount(): number
  oldestPendingAgeMs(): number | undefined
  /** hashes of `txHashes` this node holds neither pooled nor committed */
  missingTxs(txHashes: readonly Hex[]): Hex[]
  /** asks `from` (then others) for them; calls `done(true)` once all are held, `done(false)` if they could not be had */
  fetchTxs(from: number, txHashes: readonly Hex[], done: (all: boolean) => void): void
  /** transactions of batches a view change dropped, back to the pool */
  returnToPool(txHashes: readonly Hex[]): void
  /** executes committed batches in order; calls `executed(seq, blockHash)` for each */
  deliver(batch: CommittedBatch): void
  /**
   * brings the chain to block `seq` from `replicas`, each block checked by its commit proof, and to
   * hash `blockHash` when given (a checkpoint's); calls `stateTransferred`. A `claimed` target is one
   * replica's bare word (a status height, a heartbeat's seq), which a Byzantine replica can make up:
   * the host fetches what the peers have up to it and calls `stateTransferred` with the height it
   * reached once none brings more, rather than insist for ever
   */
  stateTransfer(target: { seq: number; blockHash: Hex | undefined; replicas: number[]; claimed: boolean }): void
  event(event: ConsensusEvent): void
  now(): number
  log: { debug(m: string): void; info(m: string): void; warn(m: string): void }
}

/** What a replica finds of itself after a restart (keys it persisted) plus the chain's height. */
export interface Restored {
  records: Map<string, unknown>
  /** height of the chain: every batch up to it was executed */
  height: number
  /** hash of the block at `height` (zero hash at 0) */
  heightHash: Hex
  /** the batch time of the block at `height` (0 at genesis) */
  heightTime: bigint
}

export interface ReplicaOptions {
  self: number
  /** number of VPs at genesis; ids 1..n */
  n: number
  /**
   * the group per seq, kept by the host: it records each block's votes (delivered here or
   * fetched by state transfer) before it reports the block executed, and rebuilds it from the
   * chain on a restart. Default: 1..n, never changing (tests that do not change the group).
   */
  membership?: Membership
  /**
   * this replica is not in the group yet (peerconfig.toml's `new = true`): it follows the chain
   * through checkpoints and state transfer, takes no part, and joins once its addition takes effect
   */
  joining?: boolean
  batchSize: number
  timers: ConsensusTimers
  host: ReplicaHost
}

export interface Replica {
  start(restored: Restored): void
  /** a message from the authenticated replica `from` */
  receive(from: number, message: Signed): void
  /** transactions became ready in the pool */
  txArrived(): void
  executed(seq: number, blockHash: Hex): void
  stateTransferred(seq: number, blockHash: Hex): void
  /** the host calls this every `timers.tickMs` */
  tick(): void
  /** this VP votes to remove `target` from the group; the vote is resent until it is ordered (membership.ts) */
  voteToRemove(target: number): void
  /** this VP votes to add replica `target` to the group (resent until ordered, like a removal vote); `cert`: its ECert, base64 DER */
  voteToAdd(target: number, cert?: string): void
  /**
   * member `from` refuses this VP's links because it applied this VP's removal: f + 1 of them (one
   * honest at least) retire it even without the blocks up to the boundary (it was down meanwhile)
   */
  removedBy(from: number): void
  state(): {
    view: number
    primary: number
    normal: boolean
    phase: ReplicaPhase
    lastExecuted: number
    stable: number
    members: readonly number[]
  }
}

export function quorumOf(n: number): number {
  const f = Math.floor((n - 1) / 3)
  return Math.ceil((n + f + 1) / 2)
}
