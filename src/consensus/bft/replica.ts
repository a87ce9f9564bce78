/**
 * One VP's consensus: Hyperchain's RBFT as it really ran (PBFT with batching, checkpoints,
 * watermarks, view change, recovery; consensus.md §1-§5) with the safety changes of §10:
 * - every message signed and bound to its authenticated sender; proofs travel, never bare claims;
 * - a replica's votes, view and certificates are persisted before anything that depends on them
 *   is sent (the host's outbox guarantees the order) and never rewritten on restart;
 * - no renumbering: a view change keeps sequence numbers, null slots become empty blocks;
 * - NewView carries the view changes it was built from and every backup checks it;
 * - order, then execute: a committed batch is delivered; every K blocks a signed checkpoint
 *   compares block hashes (which cover the state root); a replica that disagrees with a quorum
 *   stops delivering and state-transfers;
 * - bounded buffers: only h < seq ≤ h + L, one message per sender per slot, views within a bound;
 * - a lost pre-prepare, prepare or commit is sent again, never relayed: a replica asks for what a
 *   slot lacks and peers answer with the messages they signed then (bounded, see "retransmission");
 * - a backup that sees work waiting while nothing commits for `request` ms asks for a view
 *   change, so a silent, stalled or censoring primary is replaced.
 *
 * The replica does no I/O and reads no clock of its own: a host (src/network/vp.ts in the node,
 * an in-memory simulator in the tests) carries its messages, persists its records, holds the
 * transactions, executes delivered batches and drives its ticks.
 */

import { createMembership, type Membership } from './membership.ts'
import {
  type Body,
  batchDigest,
  type Checkpoint,
  type Commit,
  type Heartbeat,
  type Hex,
  MAX_BATCH_TXS,
  MAX_BATCH_VOTES,
  type MemberVote,
  type NewView,
  type PrePrepare,
  type Prepare,
  type PreparedCert,
  type Signed,
  type SlotRequest,
  type StableProof,
  type Status,
  signingBytes,
  type ViewChange,
} from './messages.ts'

/** consensus.md §1: checkpoint period and log size (h < seq ≤ h + L) */
export const K = 10
export const L = 4 * K
/** a backup accepts messages for views up to this far above its own */
const VIEW_WINDOW = 16
/** a backup refuses a batch whose time is further than this ahead of its own clock */
const MAX_CLOCK_SKEW_MS = 60_000
/** the primary keeps at most this many batches in flight (proposed, not yet delivered) */
const PIPELINE = 8

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

interface Slot {
  seq: number
  prePrepare?: Signed<PrePrepare>
  prepares: Map<number, Signed<Prepare>>
  commits: Map<number, Signed<Commit>>
  haveTxs: boolean
  fetching: boolean
  sentPrepare: boolean
  sentCommit: boolean
  /** when this replica first saw the pre-prepare (request timer) */
  seenAt: number
  /** when the slot last got anything new (retransmission waits for it to go quiet) */
  touchedAt: number
  /** rounds of retransmission done for this slot, and when the last one was */
  retries: number
  retriedAt: number
}

interface OwnVote {
  view: number
  digest: Hex
}

const ZERO_HASH = `0x${'0'.repeat(64)}` as Hex
const GENESIS: StableProof = { seq: 0, blockHash: ZERO_HASH, proof: [] }
const pad = (n: number): string => n.toString().padStart(12, '0')
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

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

/**
 * Checks a commit certificate: at least a quorum of distinct replicas signed a commit for
 * (seq, digest) in one view. Used by NVPs and state transfer on blocks from peers.
 */
export function verifyCommitCertificate(
  certificate: readonly Signed<Commit>[],
  expected: { seq: number; digest: Hex; members: readonly number[] },
  verify: (replica: number, bytes: Uint8Array, signature: Uint8Array) => boolean,
): boolean {
  const byView = new Map<number, Set<number>>()
  for (const commit of certificate) {
    const { body, from } = commit
    if (body.type !== 'commit' || body.seq !== expected.seq || body.digest !== expected.digest) continue
    if (!expected.members.includes(from)) continue
    if (!verify(from, signingBytes(from, body), Buffer.from(commit.sig, 'hex'))) continue
    const signers = byView.get(body.view) ?? new Set<number>()
    signers.add(from)
    byView.set(body.view, signers)
  }
  const quorum = quorumOf(expected.members.length)
  return [...byView.values()].some((signers) => signers.size >= quorum)
}

export function createReplica(options: ReplicaOptions): Replica {
  const { self, n, host } = options
  const membership = options.membership ?? createMembership(Array.from({ length: n }, (_, i) => i + 1))
  const timers = options.timers
  // N, f, quorum and the primary belong to a seq's group (membership.ts): every slot in the window
  // has a group decided by blocks this replica has executed. View changes, recovery and liveness
  // timers use the group of the next seq to deliver.
  const membersAt = (seq: number): readonly number[] => membership.at(seq)
  const quorumAt = (seq: number): number => quorumOf(membersAt(seq).length)
  const primaryAt = (view: number, seq: number): number => {
    const members = membersAt(seq)
    return members[view % members.length]
  }
  const current = (): readonly number[] => membersAt(lastDelivered + 1)
  const quorum = (): number => quorumOf(current().length)
  const faulty = (): number => Math.floor((current().length - 1) / 3)
  const primaryOf = (view: number): number => primaryAt(view, lastDelivered + 1)
  /** a new VP not in the group yet: it only follows the chain (see ReplicaOptions.joining) */
  let observing = options.joining === true
  /** members that said they applied this VP's removal (Replica.removedBy); f + 1 of them retire it */
  const removedByMembers = new Set<number>()
  /** removed from the group: this VP takes no part any more (it goes idle; its host keeps serving blocks) */
  const retired = (): boolean => !observing && (removedByMembers.size > faulty() || !current().includes(self))
  /** a new VP whose addition took effect starts taking part: first it learns the view, as after a restart */
  const checkJoined = (): void => {
    if (!observing || !current().includes(self)) return
    observing = false
    host.log.info(`replica ${self} is in the group from seq ${lastDelivered + 1}: it takes part from now on`)
    beginRecovery('joined the group')
  }

  let view = 0
  let inViewChange = false
  let stable: StableProof = GENESIS
  /** last seq handed to the host for execution; every seq up to it is delivered */
  let lastDelivered = 0
  /** last seq the host confirmed executed, and the hashes it gave */
  let lastExecuted = 0
  const executedHashes = new Map<number, Hex>()
  /** time of the latest batch delivered or proposed: a new batch's time must pass it */
  let lastTimestamp = 0n
  /** primary: last seq assigned in this view */
  let seqNo = 0
  let slots = new Map<number, Slot>()
  /** own votes per seq (highest view): never contradicted, also after a restart */
  const ownVotes = new Map<number, OwnVote>()
  /** highest-view prepared certificate per seq above the stable checkpoint (view change input) */
  const preparedCerts = new Map<number, PreparedCert>()
  /** checkpoints received: seq → blockHash → signer → message */
  const checkpoints = new Map<number, Map<Hex, Map<number, Signed<Checkpoint>>>>()
  /** votes and pre-prepares for a view this replica has not entered yet (links order each sender's
   *  messages, not different senders': a prepare can overtake the new view it follows) */
  const early = new Map<number, Signed<PrePrepare | Prepare | Commit>[]>()
  /** view changes received: view → signer → message */
  const viewChanges = new Map<number, Map<number, Signed<ViewChange>>>()
  let viewChangeStartedAt = 0
  let viewChangeTimeout = timers.viewChangeMs
  /** state transfer in progress to this seq (no delivery meanwhile) */
  let transferringTo: number | undefined
  let recovering = false
  let statusNonce = ''
  const statusReplies = new Map<number, Status>()
  let lastPrimaryContact = 0
  let lastProgress = 0
  let lastPrimarySend = 0
  /** backup: since when work (a batch or a pooled transaction) has been waiting */
  let waitingSince: number | undefined
  /** view changes that timed out in a row; past a few the replica asks the others where they are */
  let failedViewChanges = 0
  /** when this backup last asked the others whether it is behind, before blaming the primary */
  let behindCheckedAt: number | undefined
  let checkingBehind = false
  /** membership votes to put in the next batch this replica proposes, by voter/target */
  const memberVotes = new Map<string, Signed<MemberVote>>()
  /** this VP's own membership votes, resent until they are ordered */
  const ownMemberVotes: Signed<MemberVote>[] = []
  let memberVotesSentAt = 0
  /** times the own votes went out since the last was cast: the resend interval doubles from `retransmitMs` up to `nullRequestMs` */
  let memberVoteRounds = 0

  // ---- signing and persistence ----

  const sign = <T extends Body>(body: T): Signed<T> => ({ body, from: self, sig: hex(host.sign(signingBytes(self, body))) })
  const validSig = (message: Signed): boolean =>
    membership.known(message.from) && host.verify(message.from, signingBytes(message.from, message.body), Buffer.from(message.sig, 'hex'))

  const persistView = (): void => host.persist('view', { view, inViewChange })
  /** records a vote before it is sent; refuses one that would contradict an earlier vote for the same (view, seq) */
  const recordVote = (seq: number, digest: Hex): boolean => {
    const earlier = ownVotes.get(seq)
    if (earlier !== undefined && earlier.view === view && earlier.digest !== digest) return false
    if (earlier === undefined || earlier.view < view || earlier.digest !== digest) {
      ownVotes.set(seq, { view, digest })
      host.persist(`vote/${pad(seq)}`, { view, digest })
    }
    return true
  }

  // ---- slots ----

  const inWindow = (seq: number): boolean => seq > stable.seq && seq <= stable.seq + L
  const slotOf = (seq: number): Slot => {
    let slot = slots.get(seq)
    if (slot === undefined) {
      slot = {
        seq,
        prepares: new Map(),
        commits: new Map(),
        haveTxs: false,
        fetching: false,
        sentPrepare: false,
        sentCommit: false,
        seenAt: 0,
        touchedAt: host.now(),
        retries: 0,
        retriedAt: 0,
      }
      slots.set(seq, slot)
    }
    return slot
  }
  const matching = <T extends { body: { digest: Hex; view: number } }>(votes: Map<number, T>, digest: Hex): number => {
    let count = 0
    for (const vote of votes.values()) if (vote.body.digest === digest && vote.body.view === view) count++
    return count
  }
  const isPrepared = (slot: Slot): boolean => {
    const pp = slot.prePrepare
    if (pp === undefined || pp.body.view !== view) return false
    return matching(slot.prepares, pp.body.digest) >= quorumAt(slot.seq) - 1
  }
  const isCommitted = (slot: Slot): boolean => {
    const pp = slot.prePrepare
    return pp !== undefined && isPrepared(slot) && matching(slot.commits, pp.body.digest) >= quorumAt(slot.seq)
  }

  // ---- normal case ----

  /** a group change is decided but its first seq is still ahead */
  const changePending = (): boolean => {
    const epochs = membership.epochs()
    return epochs[epochs.length - 1].from > lastDelivered + 1
  }

  /** `emptyAllowed`: a batch with neither transactions nor votes may be proposed (see changePending) */
  const propose = (emptyAllowed = false): void => {
    if (inViewChange || recovering || transferringTo !== undefined || retired() || observing) return
    // the first primary of a new group takes over at its first seq, once it delivered the one before
    if (seqNo < lastDelivered) seqNo = lastDelivered
    while (seqNo < stable.seq + L && seqNo - lastDelivered < PIPELINE) {
      const seq = seqNo + 1
      if (primaryAt(view, seq) !== self) return
      const votes = [...memberVotes.values()]
        .filter((vote) => !membership.settled({ ...vote.body, from: vote.from }))
        .slice(0, MAX_BATCH_VOTES)
      const txHashes = host.takeBatch(Math.min(options.batchSize, MAX_BATCH_TXS))
      if (txHashes.length === 0 && votes.length === 0 && !emptyAllowed) return
      memberVotes.clear()
      const now = BigInt(host.now()) * 1_000_000n
      const timestamp = now > lastTimestamp ? now : lastTimestamp + 1n
      const body: PrePrepare = { type: 'pre-prepare', view, seq, timestamp, txHashes, digest: batchDigest(seq, timestamp, txHashes, votes) }
      if (votes.length > 0) body.votes = votes
      if (!recordVote(seq, body.digest)) return
      seqNo = seq
      lastTimestamp = timestamp
      const message = sign(body)
      const slot = slotOf(seq)
      slot.prePrepare = message
      slot.haveTxs = true
      slot.sentPrepare = true
      slot.seenAt = host.now()
      slot.touchedAt = host.now()
      host.broadcast(message)
      lastPrimarySend = host.now()
    }
  }

  const onPrePrepare = (message: Signed<PrePrepare>): void => {
    const pp = message.body
    if (pp.view !== view || inViewChange || !inWindow(pp.seq) || pp.seq <= lastDelivered || message.from !== primaryAt(pp.view, pp.seq))
      return
    if (pp.digest !== batchDigest(pp.seq, pp.timestamp, pp.txHashes, pp.votes)) return
    if (!validVotes(pp)) {
      host.log.warn(`pre-prepare ${pp.seq} from ${message.from} carries a membership vote that is not validly signed; ignored`)
      return
    }
    if (pp.timestamp > BigInt(host.now() + MAX_CLOCK_SKEW_MS) * 1_000_000n) {
      host.log.warn(`pre-prepare ${pp.seq} from ${message.from} is dated more than ${MAX_CLOCK_SKEW_MS / 1000} s ahead; ignored`)
      return
    }
    lastPrimaryContact = host.now()
    const slot = slotOf(pp.seq)
    if (slot.prePrepare !== undefined) {
      if (slot.prePrepare.body.view === view && slot.prePrepare.body.digest !== pp.digest) {
        host.log.warn(`primary ${message.from} sent two batches for seq ${pp.seq} in view ${view}: asking for a view change`)
        startViewChange(view + 1, 'the primary sent conflicting batches')
      }
      return
    }
    slot.prePrepare = message
    slot.seenAt = host.now()
    slot.touchedAt = host.now()
    acquireTxs(slot)
  }

  const acquireTxs = (slot: Slot): void => {
    const pp = slot.prePrepare
    if (pp === undefined || slot.haveTxs || slot.fetching) return
    const missing = host.missingTxs(pp.body.txHashes)
    if (missing.length === 0) {
      slot.haveTxs = true
      advance(slot)
      return
    }
    slot.fetching = true
    host.fetchTxs(pp.from, missing, (all) => {
      slot.fetching = false
      // the slot may belong to an older view by now
      if (slots.get(slot.seq) !== slot || slot.prePrepare !== pp) return
      if (all) {
        slot.haveTxs = true
        advance(slot)
      } else host.log.warn(`the transactions of batch ${slot.seq} could not be fetched; waiting for the request timer`)
    })
  }

  /** sends what this slot now allows, then delivers whatever is committed in order */
  const advance = (slot: Slot): void => {
    const pp = slot.prePrepare
    if (pp === undefined || pp.body.view !== view || inViewChange) return
    if (!slot.sentPrepare && slot.haveTxs && primaryAt(view, slot.seq) !== self) {
      if (!recordVote(slot.seq, pp.body.digest)) return
      slot.sentPrepare = true
      const prepare = sign<Prepare>({ type: 'prepare', view, seq: slot.seq, digest: pp.body.digest })
      slot.prepares.set(self, prepare)
      host.broadcast(prepare)
    }
    if (!slot.sentCommit && slot.haveTxs && isPrepared(slot)) {
      slot.sentCommit = true
      const prepares = [...slot.prepares.values()].filter((p) => p.body.digest === pp.body.digest && p.body.view === view)
      const cert: PreparedCert = { prePrepare: pp, prepares }
      preparedCerts.set(slot.seq, cert)
      host.persist(`cert/${pad(slot.seq)}`, cert)
      const commit = sign<Commit>({ type: 'commit', view, seq: slot.seq, digest: pp.body.digest })
      slot.commits.set(self, commit)
      host.broadcast(commit)
    }
    deliverReady()
  }

  const deliverReady = (): void => {
    if (transferringTo !== undefined || recovering) return
    for (;;) {
      const slot = slots.get(lastDelivered + 1)
      if (slot === undefined || !slot.haveTxs || !isCommitted(slot)) return
      const pp = slot.prePrepare as Signed<PrePrepare>
      const certificate = [...slot.commits.values()].filter((c) => c.body.digest === pp.body.digest && c.body.view === view)
      lastDelivered = slot.seq
      if (pp.body.timestamp > lastTimestamp) lastTimestamp = pp.body.timestamp
      lastProgress = host.now()
      host.deliver({
        seq: slot.seq,
        view,
        timestamp: pp.body.timestamp,
        txHashes: pp.body.txHashes,
        votes: pp.body.votes ?? [],
        digest: pp.body.digest,
        certificate,
      })
    }
  }

  const onVote = (message: Signed<Prepare | Commit>): void => {
    const vote = message.body
    if (vote.view !== view || inViewChange || !inWindow(vote.seq)) return
    if (vote.seq <= lastDelivered) {
      // a first vote of this peer for a slot delivered here: it is behind on the slot (it just got
      // the pre-prepare again, or its requests were lost); it gets this replica's messages of the
      // slot at once, as if it had asked (rate-limited, see onSlotRequest)
      const slot = slots.get(vote.seq)
      const votes = vote.type === 'prepare' ? slot?.prepares : slot?.commits
      if (slot === undefined || votes === undefined || votes.has(message.from) || !membersAt(vote.seq).includes(message.from)) return
      if (vote.type === 'prepare' && message.from === primaryAt(view, vote.seq)) return
      votes.set(message.from, message as never)
      onSlotRequest(message.from, { type: 'slot-request', view: vote.view, seq: vote.seq })
      return
    }
    if (!membersAt(vote.seq).includes(message.from)) return
    if (vote.type === 'prepare' && message.from === primaryAt(view, vote.seq)) return
    const slot = slotOf(vote.seq)
    const votes = vote.type === 'prepare' ? slot.prepares : slot.commits
    if (votes.has(message.from)) return
    votes.set(message.from, message as never)
    slot.touchedAt = host.now()
    if (
      vote.type === 'commit' &&
      vote.digest !== slot.prePrepare?.body.digest &&
      matching(slot.commits, vote.digest) >= quorumAt(vote.seq)
    ) {
      // a quorum committed a batch this replica does not have (its pre-prepare was lost, or the
      // primary sent it another): the block exists, signed by a quorum; fetch it rather than wait
      host.log.warn(`a quorum committed batch ${vote.seq} that this replica did not get; fetching the block`)
      requestTransfer(
        vote.seq,
        undefined,
        [...slot.commits.values()].filter((c) => c.body.digest === vote.digest).map((c) => c.from),
      )
      return
    }
    advance(slot)
  }

  // ---- retransmission (issue 6) ----
  // A lost pre-prepare, prepare or commit is sent again, never relayed: each replica re-sends only
  // messages it signed itself, unchanged, so a receiver checks them like the first copy (signature,
  // sender, view, window). The replica missing something asks for it (slot-request) from the peers
  // whose messages it lacks; the primary also offers its pre-prepare again to backups it heard
  // nothing from for a slot, since a backup that never got it (lost, or dropped while it recovered)
  // may not know the slot exists. Bounded: only slots from PIPELINE below the next to deliver to
  // PIPELINE above it, each once it went quiet for retransmitMs, the interval doubling per round;
  // a peer that answers nothing (down, cut off) gets at most one round per `requestMs`.

  /** last time each peer sent this replica anything valid */
  const heardFrom = new Map<number, number>()
  /** when the last round of resends went to each peer */
  const peerRoundAt = new Map<number, number>()
  /** `${peer}/${seq}` → when a slot request of that peer was last answered (pruned at each stable checkpoint) */
  const answeredRequests = new Map<string, number>()
  /** rounds for a slot already delivered here (the primary offering its pre-prepare to a backup that lags) */
  const MAX_ROUNDS_DELIVERED = 4

  const ownSlotMessages = (slot: Slot): Signed[] => {
    const own: Signed[] = []
    const pp = slot.prePrepare
    if (pp !== undefined && pp.from === self && pp.body.view === view) own.push(pp)
    const prepare = slot.prepares.get(self)
    if (prepare !== undefined && prepare.body.view === view) own.push(prepare)
    const commit = slot.commits.get(self)
    if (commit !== undefined && commit.body.view === view) own.push(commit)
    return own
  }

  /** this replica holds something of the slot in the current view */
  const known = (slot: Slot): boolean =>
    slot.prePrepare?.body.view === view || [...slot.prepares.values(), ...slot.commits.values()].some((vote) => vote.body.view === view)

  /** a peer that sent nothing since the last round it got (down, cut off) gets at most one round per `requestMs` */
  const peerReachable = (peer: number, now: number): boolean => {
    const last = peerRoundAt.get(peer)
    if (last !== undefined && (heardFrom.get(peer) ?? Number.NEGATIVE_INFINITY) < last && now - last < timers.requestMs) return false
    peerRoundAt.set(peer, now)
    return true
  }

  const retransmit = (now: number): void => {
    let highest = lastDelivered
    for (const slot of slots.values()) if (slot.seq > highest && slot.seq <= stable.seq + L && known(slot)) highest = slot.seq
    const from = Math.max(stable.seq, lastDelivered - PIPELINE) + 1
    const to = Math.min(highest, lastDelivered + PIPELINE, stable.seq + L)
    /** per peer: own messages to offer it, slots to ask it for */
    const offers = new Map<number, Signed[]>()
    const asks = new Map<number, number[]>()
    for (let seq = from; seq <= to; seq++) {
      const delivered = seq <= lastDelivered
      // below `highest`, a slot with nothing here is one whose messages were all lost: asked for like the others
      const slot = delivered ? slots.get(seq) : slotOf(seq)
      if (slot === undefined || (delivered && slot.retries >= MAX_ROUNDS_DELIVERED)) continue
      const pp = slot.prePrepare
      if (delivered && (pp?.from !== self || pp.body.view !== view)) continue
      if (!delivered && isCommitted(slot)) continue
      if (now - Math.max(slot.touchedAt, slot.retriedAt) < timers.retransmitMs * 2 ** Math.min(slot.retries, 3)) continue
      slot.retries++
      slot.retriedAt = now
      // a batch whose transactions could not be fetched: try again
      if (!delivered && !slot.haveTxs) acquireTxs(slot)
      const members = membersAt(seq)
      const primary = primaryAt(view, seq)
      const digest = pp?.body.view === view ? pp.body.digest : undefined
      const has = (votes: Map<number, Signed<Prepare | Commit>>, peer: number): boolean => {
        const vote = votes.get(peer)
        return vote !== undefined && vote.body.view === view && (digest === undefined || vote.body.digest === digest)
      }
      const prepared = isPrepared(slot)
      for (const peer of members) {
        if (peer === self) continue
        if (primary === self && pp?.from === self && !has(slot.prepares, peer) && !has(slot.commits, peer)) {
          const list = offers.get(peer) ?? []
          list.push(...ownSlotMessages(slot))
          offers.set(peer, list)
        }
        if (delivered) continue
        const lacking =
          (peer === primary && digest === undefined) ||
          (peer !== primary && !prepared && !has(slot.prepares, peer)) ||
          !has(slot.commits, peer)
        if (lacking) {
          const list = asks.get(peer) ?? []
          list.push(seq)
          asks.set(peer, list)
        }
      }
    }
    for (const peer of new Set([...offers.keys(), ...asks.keys()])) {
      if (!peerReachable(peer, now)) continue
      for (const message of offers.get(peer) ?? []) host.send(peer, message)
      for (const seq of asks.get(peer) ?? []) host.send(peer, sign<SlotRequest>({ type: 'slot-request', view, seq }))
    }
  }

  /** a peer lacks this replica's messages of a slot: the same signed messages again, at most once per interval per peer and slot */
  const onSlotRequest = (from: number, request: SlotRequest): void => {
    if (request.view !== view || !inWindow(request.seq)) return
    const slot = slots.get(request.seq)
    if (slot === undefined) return
    const key = `${from}/${request.seq}`
    const now = host.now()
    if (now - (answeredRequests.get(key) ?? Number.NEGATIVE_INFINITY) < timers.retransmitMs / 2) return
    answeredRequests.set(key, now)
    for (const message of ownSlotMessages(slot)) host.send(from, message)
  }

  // ---- checkpoints ----

  const onCheckpoint = (message: Signed<Checkpoint>): void => {
    const { seq, blockHash } = message.body
    if (seq <= stable.seq || seq % K !== 0) return
    // far ahead of us is allowed (that is how a lagging replica learns it lags), but bounded
    // far ahead is bounded, except for a new VP following the chain from far behind
    if ((seq > stable.seq + 4 * L && !observing) || !membersAt(seq).includes(message.from)) return
    let byHash = checkpoints.get(seq)
    if (byHash === undefined) {
      byHash = new Map()
      checkpoints.set(seq, byHash)
    }
    for (const signers of byHash.values()) if (signers.has(message.from)) return
    let signers = byHash.get(blockHash)
    if (signers === undefined) {
      signers = new Map()
      byHash.set(blockHash, signers)
    }
    signers.set(message.from, message)
    checkStable(seq)
  }

  const checkStable = (seq: number): void => {
    const byHash = checkpoints.get(seq)
    if (byHash === undefined) return
    for (const [blockHash, signers] of byHash) {
      const mine = executedHashes.get(seq)
      if (signers.size >= quorumAt(seq)) {
        if (mine === undefined) {
          // the others are past this point: fetch the blocks instead of waiting for slots we may never complete
          if (lastExecuted < seq && lastDelivered < seq) requestTransfer(seq, blockHash, [...signers.keys()])
          return
        }
        if (mine !== blockHash) {
          host.log.warn(`block ${seq} here is ${mine}, a quorum has ${blockHash}: this replica stops and fetches the quorum's chain`)
          requestTransfer(seq, blockHash, [...signers.keys()])
          return
        }
        makeStable({ seq, blockHash, proof: [...signers.values()] })
        return
      }
      // f+1 agree on a checkpoint far above our window: we lag (consensus.md §5)
      if (signers.size >= Math.floor((membersAt(seq).length - 1) / 3) + 1 && seq > stable.seq + L && mine === undefined)
        requestTransfer(seq, blockHash, [...signers.keys()])
    }
  }

  const makeStable = (proof: StableProof): void => {
    if (proof.seq <= stable.seq) return
    stable = proof
    host.persist('stable', proof)
    for (const seq of [...slots.keys()]) if (seq <= proof.seq) slots.delete(seq)
    for (const seq of [...checkpoints.keys()]) if (seq <= proof.seq) checkpoints.delete(seq)
    for (const key of [...answeredRequests.keys()]) if (Number(key.split('/')[1]) <= proof.seq) answeredRequests.delete(key)
    for (const seq of [...preparedCerts.keys()]) {
      if (seq > proof.seq) continue
      preparedCerts.delete(seq)
      host.persist(`cert/${pad(seq)}`, undefined)
    }
    for (const seq of [...ownVotes.keys()]) {
      if (seq > proof.seq) continue
      ownVotes.delete(seq)
      host.persist(`vote/${pad(seq)}`, undefined)
    }
    for (const seq of [...executedHashes.keys()]) if (seq < proof.seq) executedHashes.delete(seq)
    if (seqNo < proof.seq) seqNo = proof.seq
    propose()
  }

  const requestTransfer = (seq: number, blockHash: Hex | undefined, replicas: number[], claimed = false): void => {
    if ((transferringTo !== undefined && transferringTo >= seq) || seq <= lastExecuted || retired()) return
    transferringTo = seq
    host.event({ kind: 'recovery-started', reason: `state transfer to block ${seq}${blockHash === undefined ? '' : ` (${blockHash})`}` })
    host.stateTransfer({ seq, blockHash, replicas: replicas.filter((r) => r !== self), claimed })
  }

  // ---- view change ----

  const startViewChange = (target: number, reason: string): void => {
    if (target <= view && inViewChange) return
    if (target < view) return
    view = target
    inViewChange = true
    viewChangeStartedAt = host.now()
    persistView()
    host.event({ kind: 'view-change-started', view: target, reason })
    host.log.info(`asking for view ${target}: ${reason}`)
    const message = sign<ViewChange>({
      type: 'view-change',
      view: target,
      stable,
      prepared: [...preparedCerts.entries()].filter(([seq]) => seq > stable.seq).map(([, cert]) => cert),
    })
    recordViewChange(message)
    host.broadcast(message)
    tryNewView()
  }

  const recordViewChange = (message: Signed<ViewChange>): void => {
    let byReplica = viewChanges.get(message.body.view)
    if (byReplica === undefined) {
      byReplica = new Map()
      viewChanges.set(message.body.view, byReplica)
    }
    if (!byReplica.has(message.from)) byReplica.set(message.from, message)
  }

  const validStable = (proof: StableProof): boolean => {
    if (proof.seq === 0) return proof.proof.length === 0 && proof.blockHash === ZERO_HASH
    if (proof.seq % K !== 0) return false
    const signers = new Set<number>()
    for (const c of proof.proof) {
      if (c.body.seq !== proof.seq || c.body.blockHash !== proof.blockHash || !validSig(c)) return false
      if (membersAt(proof.seq).includes(c.from)) signers.add(c.from)
    }
    return signers.size >= quorumAt(proof.seq)
  }

  const validPrepared = (cert: PreparedCert, before: number, stableSeq: number): boolean => {
    const pp = cert.prePrepare
    const { seq, digest } = pp.body
    // the pre-prepare's sender is only checked to be a replica (validSig): a new view's primary
    // re-issues pre-prepares for seqs past a group change, whose group may not include it; the
    // quorum of prepares from the seq's group, given only to a legitimate pre-prepare, is what
    // binds the digest
    const members = membersAt(seq)
    if (pp.body.view >= before || !validSig(pp) || !validVotes(pp.body)) return false
    if (seq <= stableSeq || seq > stableSeq + L || digest !== batchDigest(seq, pp.body.timestamp, pp.body.txHashes, pp.body.votes))
      return false
    const signers = new Set<number>()
    for (const p of cert.prepares) {
      const b = p.body
      if (b.view !== pp.body.view || b.seq !== seq || b.digest !== digest || p.from === pp.from || !validSig(p)) return false
      if (members.includes(p.from)) signers.add(p.from)
    }
    return signers.size >= quorumAt(seq) - 1
  }

  const validViewChange = (message: Signed<ViewChange>): boolean =>
    validSig(message) &&
    validStable(message.body.stable) &&
    message.body.prepared.every((c) => validPrepared(c, message.body.view, message.body.stable.seq))

  const onViewChange = (message: Signed<ViewChange>): void => {
    const target = message.body.view
    if (target < view || target > view + VIEW_WINDOW || (target === view && !inViewChange)) return
    if (viewChanges.get(target)?.has(message.from) === true) return
    if (!validViewChange(message)) {
      host.log.warn(`an invalid view change from ${message.from} ignored`)
      return
    }
    recordViewChange(message)
    // f+1 replicas want a higher view: at least one of them is honest; join the smallest such view
    const above = [...viewChanges.entries()].filter(([v]) => v > view)
    const wanting = new Set(above.flatMap(([, byReplica]) => [...byReplica.keys()]))
    if (wanting.size >= faulty() + 1)
      startViewChange(Math.min(...above.map(([v]) => v)), `${wanting.size} replicas asked for a view change`)
    tryNewView()
  }

  /** the pre-prepares a new view must carry, computed from a quorum of view changes (PBFT's rules, no renumbering) */
  const newViewPlan = (target: number, set: Signed<ViewChange>[]): { stable: StableProof; prePrepares: PrePrepare[] } => {
    let best = GENESIS
    for (const vc of set) if (vc.body.stable.seq > best.seq) best = vc.body.stable
    let maxSeq = best.seq
    const chosen = new Map<number, PreparedCert>()
    for (const vc of set) {
      for (const cert of vc.body.prepared) {
        const seq = cert.prePrepare.body.seq
        if (seq <= best.seq) continue
        if (seq > maxSeq) maxSeq = seq
        const current = chosen.get(seq)
        if (current === undefined || cert.prePrepare.body.view > current.prePrepare.body.view) chosen.set(seq, cert)
      }
    }
    const prePrepares: PrePrepare[] = []
    for (let seq = best.seq + 1; seq <= maxSeq; seq++) {
      const cert = chosen.get(seq)
      const timestamp = cert?.prePrepare.body.timestamp ?? 0n
      const txHashes = cert?.prePrepare.body.txHashes ?? []
      const votes = cert?.prePrepare.body.votes
      const pp: PrePrepare = {
        type: 'pre-prepare',
        view: target,
        seq,
        timestamp,
        txHashes,
        digest: batchDigest(seq, timestamp, txHashes, votes),
      }
      if (votes !== undefined) pp.votes = votes
      prePrepares.push(pp)
    }
    return { stable: best, prePrepares }
  }

  const tryNewView = (): void => {
    if (!inViewChange || primaryOf(view) !== self) return
    const set = [...(viewChanges.get(view)?.values() ?? [])]
    if (set.length < quorum() || !set.some((vc) => vc.from === self)) return
    const chosenSet = set.slice(0, quorum())
    if (!chosenSet.some((vc) => vc.from === self))
      chosenSet[chosenSet.length - 1] = set.find((vc) => vc.from === self) as Signed<ViewChange>
    const plan = newViewPlan(view, chosenSet)
    for (const pp of plan.prePrepares) if (!recordVote(pp.seq, pp.digest)) return
    const prePrepares = plan.prePrepares.map((pp) => sign(pp))
    const message = sign<NewView>({ type: 'new-view', view, viewChanges: chosenSet, prePrepares })
    host.persist('new-view', message)
    host.broadcast(message)
    enterView(plan.stable, prePrepares)
  }

  const onNewView = (message: Signed<NewView>): void => {
    const nv = message.body
    if (message.from !== primaryOf(nv.view) || nv.view < view || nv.view > view + VIEW_WINDOW) return
    if (nv.view === view && !inViewChange) return
    const signers = new Set<number>()
    for (const vc of nv.viewChanges) {
      if (vc.body.view !== nv.view || signers.has(vc.from) || !current().includes(vc.from) || !validViewChange(vc)) {
        host.log.warn(`a new view from ${message.from} carries an invalid view change; ignored`)
        return
      }
      signers.add(vc.from)
    }
    if (signers.size < quorum()) return
    const plan = newViewPlan(nv.view, nv.viewChanges)
    const same =
      plan.prePrepares.length === nv.prePrepares.length &&
      plan.prePrepares.every((pp, i) => {
        const got = nv.prePrepares[i]
        return (
          got.from === message.from &&
          got.body.seq === pp.seq &&
          got.body.digest === pp.digest &&
          got.body.view === nv.view &&
          validSig(got)
        )
      })
    if (!same) {
      host.log.warn(`the new view from ${message.from} does not follow from its view changes; asking for the next view`)
      view = nv.view
      inViewChange = true
      startViewChange(nv.view + 1, 'the new primary sent a wrong new view')
      return
    }
    view = nv.view
    enterView(plan.stable, nv.prePrepares)
  }

  const enterView = (newStable: StableProof, prePrepares: Signed<PrePrepare>[]): void => {
    inViewChange = false
    failedViewChanges = 0
    waitingSince = undefined
    viewChangeTimeout = timers.viewChangeMs
    persistView()
    // this replica's own proposals that the new view does not carry go back to the pool
    const kept = new Set(prePrepares.flatMap((pp) => pp.body.txHashes))
    const dropped: Hex[] = []
    for (const slot of slots.values()) {
      if (slot.seq <= lastDelivered || slot.prePrepare?.from !== self) continue
      for (const hash of slot.prePrepare.body.txHashes) if (!kept.has(hash)) dropped.push(hash)
    }
    if (dropped.length > 0) host.returnToPool(dropped)
    for (const v of [...viewChanges.keys()]) if (v <= view) viewChanges.delete(v)
    const old = slots
    slots = new Map()
    for (const [seq, slot] of old) if (seq <= lastDelivered) slots.set(seq, slot)
    seqNo = Math.max(lastDelivered, newStable.seq, ...prePrepares.map((pp) => pp.body.seq))
    lastPrimaryContact = host.now()
    lastProgress = host.now()
    if (newStable.seq > lastExecuted && newStable.seq > stable.seq) {
      requestTransfer(
        newStable.seq,
        newStable.blockHash,
        newStable.proof.map((c) => c.from),
      )
    }
    for (const pp of prePrepares) {
      if (pp.body.seq <= lastDelivered) continue
      const slot = slotOf(pp.body.seq)
      slot.prePrepare = pp
      slot.seenAt = host.now()
      if (pp.from === self) {
        slot.haveTxs = host.missingTxs(pp.body.txHashes).length === 0
        slot.sentPrepare = true
      }
      acquireTxs(slot)
      advance(slot)
    }
    host.event({ kind: 'view-change-finished', view, primary: primaryOf(view), height: lastExecuted })
    host.log.info(
      `view ${view}: primary is replica ${primaryOf(view)}; delivered ${lastDelivered}, next seq ${seqNo + 1}, ${host.pendingCount()} transactions waiting here, ${prePrepares.length} batches carried over`,
    )
    const waitingForThisView = early.get(view) ?? []
    for (const v of [...early.keys()]) if (v <= view) early.delete(v)
    for (const message of waitingForThisView) {
      if (message.body.type === 'pre-prepare') onPrePrepare(message as Signed<PrePrepare>)
      else onVote(message as Signed<Prepare | Commit>)
    }
    propose()
  }

  /** keeps a message of a view not entered yet, bounded per view (§10.7) */
  const keepEarly = (message: Signed<PrePrepare | Prepare | Commit>): void => {
    const v = message.body.view
    if (v > view + VIEW_WINDOW || !inWindow(message.body.seq)) return
    const kept = early.get(v) ?? []
    if (kept.length >= 3 * L * current().length) return
    kept.push(message)
    early.set(v, kept)
  }

  // ---- recovery (start, restart) ----

  const onStatusRequest = (from: number, request: { nonce: string }): void => {
    host.send(
      from,
      sign<Status>({
        type: 'status',
        nonce: request.nonce,
        view,
        changing: inViewChange,
        stable,
        height: lastExecuted,
        heightHash: executedHashes.get(lastExecuted) ?? ZERO_HASH,
      }),
    )
    // a peer (re)starting while this replica recovers too: ask it back, so replicas started together find each other at once
    if (recovering) host.send(from, sign({ type: 'status-request', nonce: statusNonce }))
  }

  /**
   * Joins the view the others run, learnt from their status (no new view was seen: it was missed).
   * Batches of any other view will never commit here; this replica's own proposals among them go
   * back to the pool, or a primary cut off while the others changed view would hold its clients'
   * transactions for ever, and a stale batch left waiting would start view changes.
   */
  const adoptView = (target: number): void => {
    const returned: Hex[] = []
    for (const [seq, slot] of slots) {
      if (seq <= lastDelivered || slot.prePrepare === undefined || slot.prePrepare.body.view === target) continue
      if (slot.prePrepare.from === self) returned.push(...slot.prePrepare.body.txHashes)
      slots.delete(seq)
    }
    if (returned.length > 0) host.returnToPool(returned)
    seqNo = Math.max(
      lastDelivered,
      stable.seq,
      ...[...slots.values()].filter((slot) => slot.prePrepare !== undefined).map((slot) => slot.seq),
    )
    view = target
    inViewChange = false
    persistView()
  }

  const onStatus = (message: Signed<Status>): void => {
    if (!recovering || message.body.nonce !== statusNonce || !validStable(message.body.stable)) return
    statusReplies.set(message.from, message.body)
    if (statusReplies.size < quorum() - 1) return
    recovering = false
    // the view at least f+1 replicas run (not changing): one of them is honest. A replica that
    // escalated views alone (cut off) comes back down to it: it never voted in those views (none
    // formed), and its votes stay bound per (view, seq). While the others change view too, it
    // keeps its own view change going rather than reset it.
    const settled = [...statusReplies.values()].filter((status) => !status.changing).map((status) => status.view)
    if (!inViewChange && !settled.includes(view)) settled.push(view)
    settled.sort((a, b) => b - a)
    if (settled.length >= faulty() + 1) {
      const agreed = settled[faulty()]
      if (agreed > view || (inViewChange && agreed <= view)) adoptView(agreed)
    }
    if (!checkingBehind) waitingSince = undefined
    let best = stable
    let tallest: { from: number; height: number } | undefined
    for (const [from, status] of statusReplies) {
      if (status.stable.seq > best.seq) best = status.stable
      if (status.height > (tallest?.height ?? lastExecuted)) tallest = { from, height: status.height }
    }
    if (!checkingBehind) {
      lastPrimaryContact = host.now()
      lastProgress = host.now()
    }
    if (best.seq > lastExecuted) {
      requestTransfer(
        best.seq,
        best.blockHash,
        best.proof.map((c) => c.from),
      )
    } else {
      if (best.seq > stable.seq) makeStable(best)
      // blocks past the last checkpoint: fetched from the peers that say they have them (the tallest
      // first), each checked by its commit proof; the height itself is only a claim
      if (tallest !== undefined) {
        const claimants = [...statusReplies].filter(([, status]) => status.height > lastExecuted).map(([from]) => from)
        requestTransfer(tallest.height, undefined, [tallest.from, ...claimants.filter((from) => from !== tallest.from)], true)
      }
    }
    host.event({ kind: 'recovery-finished', view, height: lastExecuted })
    propose()
  }

  // ---- membership ----

  const validVotes = (pp: PrePrepare): boolean => (pp.votes ?? []).every((vote) => vote.body.type === 'member-vote' && validSig(vote))

  /** own votes not ordered yet go out again now and then: the primary may have changed, or lost them in a view change */
  const resendMemberVotes = (now: number): void => {
    for (let i = ownMemberVotes.length - 1; i >= 0; i--) {
      if (membership.settled({ ...ownMemberVotes[i].body, from: self })) ownMemberVotes.splice(i, 1)
    }
    if (ownMemberVotes.length === 0) return
    if (now - memberVotesSentAt < Math.min(timers.retransmitMs * 2 ** memberVoteRounds, timers.nullRequestMs)) return
    memberVotesSentAt = now
    memberVoteRounds = Math.min(memberVoteRounds + 1, 8)
    for (const vote of ownMemberVotes) {
      memberVotes.set(`${self}/${vote.body.action}/${vote.body.target}`, vote)
      host.broadcast(vote)
    }
  }

  const castVote = (action: MemberVote['action'], target: number, cert?: string): void => {
    const vote = sign<MemberVote>(
      cert === undefined ? { type: 'member-vote', action, target } : { type: 'member-vote', action, target, cert },
    )
    ownMemberVotes.push(vote)
    memberVotes.set(`${self}/${action}/${target}`, vote)
    host.broadcast(vote)
    memberVotesSentAt = host.now()
    memberVoteRounds = 0
    if (primaryOf(view) === self) propose()
  }

  /** blocks (before, upTo] executed: reports each group change among the seqs they open */
  const announceGroupChange = (before: number, upTo: number): void => {
    for (const epoch of membership.epochs()) {
      if (epoch.from > before + 1 && epoch.from <= upTo + 1) {
        host.event({ kind: 'membership-changed', from: epoch.from, members: epoch.members })
        host.log.info(
          `the group is now replicas ${epoch.members.join(', ')} from seq ${epoch.from}${epoch.members.includes(self) ? '' : ': this replica left it and goes idle'}`,
        )
      }
    }
  }

  // ---- timers ----

  /** own checkpoint not yet stable, re-sent now and then: a lost checkpoint message must not keep the log from moving */
  let checkpointResentAt = 0
  const resendCheckpoint = (now: number): void => {
    const latest = lastExecuted - (lastExecuted % K)
    if (latest <= stable.seq || now - checkpointResentAt < timers.nullRequestMs) return
    const blockHash = executedHashes.get(latest)
    if (blockHash === undefined) return
    checkpointResentAt = now
    host.broadcast(sign<Checkpoint>({ type: 'checkpoint', seq: latest, blockHash }))
  }

  const tick = (): void => {
    const now = host.now()
    if (observing) return
    if (retired()) {
      // its last duty: the checkpoint at the boundary it left at, which the old group's quorum may need
      resendCheckpoint(now)
      return
    }
    resendMemberVotes(now)
    if (!recovering && transferringTo === undefined) resendCheckpoint(now)
    if (recovering) {
      if (now - viewChangeStartedAt > timers.viewChangeMs) beginRecovery('no quorum answered the status request')
      return
    }
    if (inViewChange) {
      if (now - viewChangeStartedAt > viewChangeTimeout) {
        failedViewChanges++
        // alone in asking (cut off, or the others moved on): find out where the others are (consensus.md §4)
        if (failedViewChanges >= 2) {
          failedViewChanges = 0
          beginRecovery(`view change to ${view} failed twice`)
          return
        }
        viewChangeTimeout = Math.min(viewChangeTimeout * 2, 5 * timers.viewChangeMs)
        startViewChange(view + 1, `view ${view} did not start within ${Math.round((now - viewChangeStartedAt) / 1000)} s`)
      }
      return
    }
    if (transferringTo === undefined) retransmit(now)
    if (primaryOf(view) === self) {
      // a primary whose batches commit nowhere may be the one left behind (cut off while the others
      // changed view; it never saw their new view): like a stalled backup, it asks where they are
      const inFlight = slots.get(lastDelivered + 1)
      if (
        inFlight?.prePrepare?.from === self &&
        now - Math.max(inFlight.seenAt, lastProgress) > timers.requestMs &&
        (behindCheckedAt === undefined || now - behindCheckedAt > timers.requestMs)
      ) {
        behindCheckedAt = now
        beginRecovery('batches proposed here commit nowhere: checking whether the others moved on', true)
        return
      }
      const age = host.oldestPendingAgeMs()
      if (memberVotes.size > 0 || (age !== undefined && (age >= timers.batchMs || host.pendingCount() >= options.batchSize))) propose()
      // a decided group change takes effect only once the chain reaches its boundary: an idle
      // network would never get there, so the primary orders empty batches, one per tick, until it does
      else if (seqNo === lastDelivered && changePending()) propose(true)
      if (seqNo === lastDelivered && now - lastPrimarySend > timers.nullRequestMs) {
        host.broadcast(sign<Heartbeat>({ type: 'heartbeat', view, seq: seqNo }))
        lastPrimarySend = now
      }
      return
    }
    // backup: a stalled primary (work waiting, nothing committed) or a silent one is replaced;
    // transactions waiting in this pool count too, so a primary that leaves them out is replaced (§10.8)
    const waiting =
      transferringTo === undefined &&
      ([...slots.values()].some((slot) => slot.seq > lastDelivered && slot.prePrepare !== undefined) || host.pendingCount() > 0)
    if (!waiting) waitingSince = undefined
    else {
      waitingSince ??= now
      const stalledFor = now - Math.max(waitingSince, lastProgress)
      if (stalledFor > timers.requestMs) {
        // first ask where the others are: a replica that fell behind sees a stall that is only its own
        if (behindCheckedAt === undefined || behindCheckedAt < Math.max(waitingSince, lastProgress)) {
          behindCheckedAt = now
          beginRecovery('nothing committed while work waits: checking whether this replica is behind', true)
          return
        }
        if (now - behindCheckedAt > timers.requestMs) {
          startViewChange(view + 1, `work waited ${Math.round(stalledFor / 1000)} s with nothing committed`)
          return
        }
      }
    }
    if (now - lastPrimaryContact > 3 * timers.nullRequestMs + timers.requestMs) {
      startViewChange(view + 1, `no word from primary ${primaryOf(view)} for ${Math.round((now - lastPrimaryContact) / 1000)} s`)
    }
  }

  /** `onlyChecking`: a backup asking whether it is behind; its stall timers keep running */
  const beginRecovery = (reason: string, onlyChecking = false): void => {
    checkingBehind = onlyChecking
    recovering = true
    viewChangeStartedAt = host.now()
    statusNonce = `${self}-${host.now()}-${Math.random().toString(16).slice(2, 10)}`
    statusReplies.clear()
    host.event({ kind: 'recovery-started', reason })
    host.broadcast(sign({ type: 'status-request', nonce: statusNonce }))
  }

  // ---- dispatch ----

  return {
    start(restored) {
      lastExecuted = restored.height
      lastDelivered = restored.height
      seqNo = restored.height
      lastTimestamp = restored.heightTime
      executedHashes.set(restored.height, restored.heightHash)
      const saved = restored.records
      const viewRecord = saved.get('view') as { view: number; inViewChange: boolean } | undefined
      view = viewRecord?.view ?? 0
      const savedStable = saved.get('stable') as StableProof | undefined
      if (savedStable !== undefined && savedStable.seq <= restored.height) stable = savedStable
      for (const [key, value] of saved) {
        if (key.startsWith('vote/')) ownVotes.set(Number(key.slice(5)), value as OwnVote)
        else if (key.startsWith('cert/')) preparedCerts.set(Number(key.slice(5)), value as PreparedCert)
      }
      lastPrimaryContact = host.now()
      lastProgress = host.now()
      // a (re)started replica first learns where the others are (consensus.md §5); a new one not in
      // the group yet only follows the chain until it is (checkJoined)
      checkJoined()
      if (!observing) beginRecovery(restored.height === 0 && saved.size === 0 ? 'start' : 'restart')
    },

    receive(from, message) {
      // the sender is who the link authenticated, never what the message claims (§10.1)
      if (message.from !== from || from === self || !membership.known(from)) return
      // a replica that left the group, or has not joined it yet, only listens for checkpoints
      if ((retired() || observing) && message.body.type !== 'checkpoint') return
      if (!validSig(message)) {
        host.log.warn(`a message from ${from} with a bad signature dropped`)
        return
      }
      heardFrom.set(from, host.now())
      const body = message.body
      // a replica that left the group has no say in view changes or recovery; its votes on slots
      // are checked against each slot's group below
      const perSlot = body.type === 'pre-prepare' || body.type === 'prepare' || body.type === 'commit' || body.type === 'checkpoint'
      if (!perSlot && !current().includes(from)) return
      switch (body.type) {
        case 'pre-prepare':
        case 'prepare':
        case 'commit': {
          if (recovering) return
          const notEntered = body.view > view || (body.view === view && inViewChange)
          if (notEntered) keepEarly(message as Signed<PrePrepare | Prepare | Commit>)
          else if (body.type === 'pre-prepare') onPrePrepare(message as Signed<PrePrepare>)
          else onVote(message as Signed<Prepare | Commit>)
          return
        }
        case 'checkpoint':
          onCheckpoint(message as Signed<Checkpoint>)
          return
        case 'view-change':
          if (!recovering) onViewChange(message as Signed<ViewChange>)
          return
        case 'new-view':
          if (!recovering) onNewView(message as Signed<NewView>)
          return
        case 'heartbeat':
          if (body.view !== view || from !== primaryOf(view) || inViewChange) return
          lastPrimaryContact = host.now()
          // an idle primary has delivered everything up to body.seq: a replica below it missed
          // batches and fetches the blocks (each checked by its commit proof), rather than wait
          // for the next checkpoint in a quiet network
          if (body.seq > lastDelivered && transferringTo === undefined) {
            requestTransfer(
              body.seq,
              undefined,
              current().filter((id) => id !== self),
              true,
            )
          }
          return
        case 'slot-request':
          onSlotRequest(from, body)
          return
        case 'status-request':
          onStatusRequest(from, body)
          return
        case 'status':
          onStatus(message as Signed<Status>)
          return
        case 'member-vote':
          // kept for this replica's next proposal; it counts only once ordered (membership.ts)
          if (current().includes(from) && !membership.settled({ ...body, from }) && memberVotes.size < 4 * MAX_BATCH_VOTES) {
            memberVotes.set(`${from}/${body.action}/${body.target}`, message as Signed<MemberVote>)
            if (primaryOf(view) === self) propose()
          }
          return
      }
    },

    txArrived() {
      // with nothing in flight a lone transaction is proposed at once rather than after the batch timer
      // (~0.7 → ~0.2 s on a 4-VP network); under load batches still fill while earlier ones are ordered
      // (executed() proposes what waits). A pre-prepare lost on the way, or dropped by a backup still
      // recovering at start, is offered again after `retransmitMs` (retransmit), not left to a view change
      if (host.pendingCount() >= options.batchSize || seqNo === lastDelivered) propose()
    },

    executed(seq, blockHash) {
      if (seq <= lastExecuted) return
      announceGroupChange(lastExecuted, seq)
      lastExecuted = seq
      executedHashes.set(seq, blockHash)
      if (seq % K === 0 && !observing) {
        const message = sign<Checkpoint>({ type: 'checkpoint', seq, blockHash })
        onCheckpoint(message)
        host.broadcast(message)
      }
      checkStable(seq)
      propose()
    },

    stateTransferred(seq, blockHash) {
      transferringTo = undefined
      if (seq > lastExecuted) {
        announceGroupChange(lastExecuted, seq)
        lastExecuted = seq
        executedHashes.set(seq, blockHash)
      }
      if (seq > lastDelivered) lastDelivered = seq
      if (seq > seqNo) seqNo = seq
      checkJoined()
      for (const s of [...slots.keys()]) if (s <= seq) slots.delete(s)
      lastProgress = host.now()
      host.event({ kind: 'recovery-finished', view, height: seq })
      checkStable(seq - (seq % K))
      for (const slot of slots.values()) advance(slot)
      propose()
    },

    tick,

    voteToRemove: (target) => castVote('delete', target),
    voteToAdd: (target, cert) => castVote('add', target, cert),

    removedBy(from) {
      if (retired() || observing || from === self || !current().includes(from)) return
      removedByMembers.add(from)
      if (!retired()) return
      host.log.warn(
        `replica ${self}: replicas ${[...removedByMembers].join(', ')} (f + 1 members) applied its removal from the group and refuse its links: it retires at block ${lastExecuted}, without the blocks up to its removal, which it missed while down`,
      )
    },

    state: () => ({
      view,
      primary: primaryOf(view),
      normal: !inViewChange && !recovering && transferringTo === undefined && !retired() && !observing,
      phase: retired()
        ? 'retired'
        : observing
          ? 'joining'
          : inViewChange
            ? 'viewChange'
            : recovering
              ? 'recovering'
              : transferringTo !== undefined
                ? 'stateTransfer'
                : 'normal',
      lastExecuted,
      stable: stable.seq,
      members: current(),
    }),
  }
}
