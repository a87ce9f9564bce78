/**
 * The replica's state and the parts every section of its protocol shares: the group and quorum of
 * a seq, signing, the persisted votes and the slots of the window. The sections are layered on it
 * as subclasses, one file each, in the order of consensus.md: normal case (normal-case.ts),
 * retransmission, checkpoints, view change, recovery with membership votes, and the timers that
 * drive them (liveness.ts); replica.ts dispatches messages to them. Where a section calls into
 * one of a later file, the member is declared abstract here.
 */
import { createMembership } from './membership.ts'
import {
  type Body,
  type Checkpoint,
  type Commit,
  type Hex,
  type MemberVote,
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
import { L, quorumOf, type ReplicaOptions } from './types.ts'

/** a backup accepts messages for views up to this far above its own */
export const VIEW_WINDOW = 16
/** a backup refuses a batch whose time is further than this ahead of its own clock */
export const MAX_CLOCK_SKEW_MS = 60_000
/** the primary keeps at most this many batches in flight (proposed, not yet delivered) */
export const PIPELINE = 8

export interface Slot {
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

export interface OwnVote {
  view: number
  digest: Hex
}

export const ZERO_HASH = `0x${'0'.repeat(64)}` as Hex
export const GENESIS: StableProof = { seq: 0, blockHash: ZERO_HASH, proof: [] }
export const pad = (n: number): string => n.toString().padStart(12, '0')
export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

/** assigns the options before the fields of the subclasses read them */
class OptionsHolder {
  constructor(readonly options: ReplicaOptions) {}
}

/** State, group, signing, persistence and slots. */
export abstract class ReplicaCore extends OptionsHolder {
  // ---- defined by later sections ----
  abstract beginRecovery: (reason: string, onlyChecking?: boolean) => void
  abstract validVotes: (pp: PrePrepare) => boolean
  abstract startViewChange: (target: number, reason: string) => void
  abstract onSlotRequest: (from: number, request: SlotRequest) => void
  abstract requestTransfer: (seq: number, blockHash: Hex | undefined, replicas: number[], claimed?: boolean) => void

  // ---- core ----

  readonly self = this.options.self
  readonly n = this.options.n
  readonly host = this.options.host
  readonly membership = this.options.membership ?? createMembership(Array.from({ length: this.n }, (_, i) => i + 1))
  readonly timers = this.options.timers
  // N, f, quorum and the primary belong to a seq's group (membership.ts): every slot in the window
  // has a group decided by blocks this replica has executed. View changes, recovery and liveness
  // timers use the group of the next seq to deliver.
  readonly membersAt = (seq: number): readonly number[] => this.membership.at(seq)
  readonly quorumAt = (seq: number): number => quorumOf(this.membersAt(seq).length)
  readonly primaryAt = (view: number, seq: number): number => {
    const members = this.membersAt(seq)
    return members[view % members.length]
  }
  readonly current = (): readonly number[] => this.membersAt(this.lastDelivered + 1)
  readonly quorum = (): number => quorumOf(this.current().length)
  readonly faulty = (): number => Math.floor((this.current().length - 1) / 3)
  readonly primaryOf = (view: number): number => this.primaryAt(view, this.lastDelivered + 1)
  /** a new VP not in the group yet: it only follows the chain (see ReplicaOptions.joining) */
  observing = this.options.joining === true
  /** members that said they applied this VP's removal (Replica.removedBy); f + 1 of them retire it */
  readonly removedByMembers = new Set<number>()
  /** removed from the group: this VP takes no part any more (it goes idle; its host keeps serving blocks) */
  readonly retired = (): boolean => !this.observing && (this.removedByMembers.size > this.faulty() || !this.current().includes(this.self))
  /** a new VP whose addition took effect starts taking part: first it learns the view, as after a restart */
  readonly checkJoined = (): void => {
    if (!this.observing || !this.current().includes(this.self)) return
    this.observing = false
    this.host.log.info(`replica ${this.self} is in the group from seq ${this.lastDelivered + 1}: it takes part from now on`)
    this.beginRecovery('joined the group')
  }

  view = 0
  inViewChange = false
  stable: StableProof = GENESIS
  /** last seq handed to the host for execution; every seq up to it is delivered */
  lastDelivered = 0
  /** last seq the host confirmed executed, and the hashes it gave */
  lastExecuted = 0
  readonly executedHashes = new Map<number, Hex>()
  /** time of the latest batch delivered or proposed: a new batch's time must pass it */
  lastTimestamp = 0n
  /** primary: last seq assigned in this view */
  seqNo = 0
  slots = new Map<number, Slot>()
  /** own votes per seq (highest view): never contradicted, also after a restart */
  readonly ownVotes = new Map<number, OwnVote>()
  /** highest-view prepared certificate per seq above the stable checkpoint (view change input) */
  readonly preparedCerts = new Map<number, PreparedCert>()
  /** checkpoints received: seq → blockHash → signer → message */
  readonly checkpoints = new Map<number, Map<Hex, Map<number, Signed<Checkpoint>>>>()
  /** votes and pre-prepares for a view this replica has not entered yet (links order each sender's
   *  messages, not different senders': a prepare can overtake the new view it follows) */
  readonly early = new Map<number, Signed<PrePrepare | Prepare | Commit>[]>()
  /** view changes received: view → signer → message */
  readonly viewChanges = new Map<number, Map<number, Signed<ViewChange>>>()
  viewChangeStartedAt = 0
  viewChangeTimeout = this.timers.viewChangeMs
  /** state transfer in progress to this seq (no delivery meanwhile) */
  transferringTo: number | undefined
  recovering = false
  statusNonce = ''
  readonly statusReplies = new Map<number, Status>()
  lastPrimaryContact = 0
  lastProgress = 0
  lastPrimarySend = 0
  /** backup: since when work (a batch or a pooled transaction) has been waiting */
  waitingSince: number | undefined
  /** view changes that timed out in a row; past a few the replica asks the others where they are */
  failedViewChanges = 0
  /** when this backup last asked the others whether it is behind, before blaming the primary */
  behindCheckedAt: number | undefined
  checkingBehind = false
  /** membership votes to put in the next batch this replica proposes, by voter/target */
  readonly memberVotes = new Map<string, Signed<MemberVote>>()
  /** this VP's own membership votes, resent until they are ordered */
  readonly ownMemberVotes: Signed<MemberVote>[] = []
  memberVotesSentAt = 0
  /** times the own votes went out since the last was cast: the resend interval doubles from `retransmitMs` up to `nullRequestMs` */
  memberVoteRounds = 0

  // ---- signing and persistence ----

  readonly sign = <T extends Body>(body: T): Signed<T> => ({
    body,
    from: this.self,
    sig: hex(this.host.sign(signingBytes(this.self, body))),
  })
  readonly validSig = (message: Signed): boolean =>
    this.membership.known(message.from) &&
    this.host.verify(message.from, signingBytes(message.from, message.body), Buffer.from(message.sig, 'hex'))

  readonly persistView = (): void => this.host.persist('view', { view: this.view, inViewChange: this.inViewChange })
  /** records a vote before it is sent; refuses one that would contradict an earlier vote for the same (view, seq) */
  readonly recordVote = (seq: number, digest: Hex): boolean => {
    const earlier = this.ownVotes.get(seq)
    if (earlier !== undefined && earlier.view === this.view && earlier.digest !== digest) return false
    if (earlier === undefined || earlier.view < this.view || earlier.digest !== digest) {
      this.ownVotes.set(seq, { view: this.view, digest })
      this.host.persist(`vote/${pad(seq)}`, { view: this.view, digest })
    }
    return true
  }

  // ---- slots ----

  readonly inWindow = (seq: number): boolean => seq > this.stable.seq && seq <= this.stable.seq + L
  readonly slotOf = (seq: number): Slot => {
    let slot = this.slots.get(seq)
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
        touchedAt: this.host.now(),
        retries: 0,
        retriedAt: 0,
      }
      this.slots.set(seq, slot)
    }
    return slot
  }
  readonly matching = <T extends { body: { digest: Hex; view: number } }>(votes: Map<number, T>, digest: Hex): number => {
    let count = 0
    for (const vote of votes.values()) if (vote.body.digest === digest && vote.body.view === this.view) count++
    return count
  }
  readonly isPrepared = (slot: Slot): boolean => {
    const pp = slot.prePrepare
    if (pp === undefined || pp.body.view !== this.view) return false
    return this.matching(slot.prepares, pp.body.digest) >= this.quorumAt(slot.seq) - 1
  }
  readonly isCommitted = (slot: Slot): boolean => {
    const pp = slot.prePrepare
    return pp !== undefined && this.isPrepared(slot) && this.matching(slot.commits, pp.body.digest) >= this.quorumAt(slot.seq)
  }
}
