/** The normal case (consensus.md §3): propose, pre-prepare, prepare, commit, deliver in order. */

import { MAX_CLOCK_SKEW_MS, PIPELINE, pad, ReplicaCore, type Slot } from './core.ts'
import {
  batchDigest,
  type Commit,
  MAX_BATCH_TXS,
  MAX_BATCH_VOTES,
  type PrePrepare,
  type Prepare,
  type PreparedCert,
  type Signed,
} from './messages.ts'
import { L } from './types.ts'

export abstract class NormalCase extends ReplicaCore {
  // ---- normal case ----

  /** a group change is decided but its first seq is still ahead */
  readonly changePending = (): boolean => {
    const epochs = this.membership.epochs()
    return epochs[epochs.length - 1].from > this.lastDelivered + 1
  }

  /** `emptyAllowed`: a batch with neither transactions nor votes may be proposed (see changePending) */
  readonly propose = (emptyAllowed = false): void => {
    if (this.inViewChange || this.recovering || this.transferringTo !== undefined || this.retired() || this.observing) return
    // the first primary of a new group takes over at its first seq, once it delivered the one before
    if (this.seqNo < this.lastDelivered) this.seqNo = this.lastDelivered
    while (this.seqNo < this.stable.seq + L && this.seqNo - this.lastDelivered < PIPELINE) {
      const seq = this.seqNo + 1
      if (this.primaryAt(this.view, seq) !== this.self) return
      // a batch proposed for this (view, seq) before a restart binds this replica (recordVote), and
      // any batch made now differs from it (its time at least): none can be proposed until a view
      // change moves on, so nothing is taken out of the pool for it
      const earlier = this.ownVotes.get(seq)
      if (earlier !== undefined && earlier.view === this.view) return
      const votes = [...this.memberVotes.values()]
        .filter((vote) => !this.membership.settled({ ...vote.body, from: vote.from }))
        .slice(0, MAX_BATCH_VOTES)
      const txHashes = this.host.takeBatch(Math.min(this.options.batchSize, MAX_BATCH_TXS))
      if (txHashes.length === 0 && votes.length === 0 && !emptyAllowed) return
      this.memberVotes.clear()
      const now = BigInt(this.host.now()) * 1_000_000n
      const timestamp = now > this.lastTimestamp ? now : this.lastTimestamp + 1n
      const body: PrePrepare = {
        type: 'pre-prepare',
        view: this.view,
        seq,
        timestamp,
        txHashes,
        digest: batchDigest(seq, timestamp, txHashes, votes),
      }
      if (votes.length > 0) body.votes = votes
      if (!this.recordVote(seq, body.digest)) {
        // taken and never proposed: back to the pool, or they would wait there, taken, for ever (F3)
        if (txHashes.length > 0) this.host.returnToPool(txHashes)
        return
      }
      this.seqNo = seq
      this.lastTimestamp = timestamp
      const message = this.sign(body)
      const slot = this.slotOf(seq)
      slot.prePrepare = message
      slot.haveTxs = true
      slot.sentPrepare = true
      slot.seenAt = this.host.now()
      slot.touchedAt = this.host.now()
      this.host.broadcast(message)
      this.lastPrimarySend = this.host.now()
    }
  }

  readonly onPrePrepare = (message: Signed<PrePrepare>): void => {
    const pp = message.body
    if (
      pp.view !== this.view ||
      this.inViewChange ||
      !this.inWindow(pp.seq) ||
      pp.seq <= this.lastDelivered ||
      message.from !== this.primaryAt(pp.view, pp.seq)
    )
      return
    if (pp.digest !== batchDigest(pp.seq, pp.timestamp, pp.txHashes, pp.votes)) return
    if (!this.validVotes(pp)) {
      this.host.log.warn(`pre-prepare ${pp.seq} from ${message.from} carries a membership vote that is not validly signed; ignored`)
      return
    }
    if (pp.timestamp > BigInt(this.host.now() + MAX_CLOCK_SKEW_MS) * 1_000_000n) {
      this.host.log.warn(`pre-prepare ${pp.seq} from ${message.from} is dated more than ${MAX_CLOCK_SKEW_MS / 1000} s ahead; ignored`)
      return
    }
    this.lastPrimaryContact = this.host.now()
    const slot = this.slotOf(pp.seq)
    if (slot.prePrepare !== undefined) {
      if (slot.prePrepare.body.view === this.view && slot.prePrepare.body.digest !== pp.digest) {
        this.host.log.warn(`primary ${message.from} sent two batches for seq ${pp.seq} in view ${this.view}: asking for a view change`)
        this.startViewChange(this.view + 1, 'the primary sent conflicting batches')
      }
      return
    }
    slot.prePrepare = message
    slot.seenAt = this.host.now()
    slot.touchedAt = this.host.now()
    this.acquireTxs(slot)
  }

  readonly acquireTxs = (slot: Slot): void => {
    const pp = slot.prePrepare
    if (pp === undefined || slot.haveTxs || slot.fetching) return
    const missing = this.host.missingTxs(pp.body.txHashes)
    if (missing.length === 0) {
      slot.haveTxs = true
      this.advance(slot)
      return
    }
    slot.fetching = true
    this.host.fetchTxs(pp.from, missing, (all) => {
      slot.fetching = false
      // the slot may belong to an older view by now
      if (this.slots.get(slot.seq) !== slot || slot.prePrepare !== pp) return
      if (all) {
        slot.haveTxs = true
        this.advance(slot)
      } else this.host.log.warn(`the transactions of batch ${slot.seq} could not be fetched; waiting for the request timer`)
    })
  }

  /** sends what this slot now allows, then delivers whatever is committed in order */
  readonly advance = (slot: Slot): void => {
    const pp = slot.prePrepare
    if (pp === undefined || pp.body.view !== this.view || this.inViewChange) return
    if (!slot.sentPrepare && slot.haveTxs && this.primaryAt(this.view, slot.seq) !== this.self) {
      if (!this.recordVote(slot.seq, pp.body.digest)) return
      slot.sentPrepare = true
      const prepare = this.sign<Prepare>({ type: 'prepare', view: this.view, seq: slot.seq, digest: pp.body.digest })
      slot.prepares.set(this.self, prepare)
      this.host.broadcast(prepare)
    }
    if (!slot.sentCommit && slot.haveTxs && this.isPrepared(slot)) {
      slot.sentCommit = true
      const prepares = [...slot.prepares.values()].filter((p) => p.body.digest === pp.body.digest && p.body.view === this.view)
      const cert: PreparedCert = { prePrepare: pp, prepares }
      this.preparedCerts.set(slot.seq, cert)
      this.host.persist(`cert/${pad(slot.seq)}`, cert)
      const commit = this.sign<Commit>({ type: 'commit', view: this.view, seq: slot.seq, digest: pp.body.digest })
      slot.commits.set(this.self, commit)
      this.host.broadcast(commit)
    }
    this.deliverReady()
  }

  readonly deliverReady = (): void => {
    if (this.transferringTo !== undefined || this.recovering) return
    for (;;) {
      const slot = this.slots.get(this.lastDelivered + 1)
      if (slot === undefined || !slot.haveTxs || !this.isCommitted(slot)) return
      const pp = slot.prePrepare as Signed<PrePrepare>
      const certificate = [...slot.commits.values()].filter((c) => c.body.digest === pp.body.digest && c.body.view === this.view)
      this.lastDelivered = slot.seq
      if (pp.body.timestamp > this.lastTimestamp) this.lastTimestamp = pp.body.timestamp
      this.lastProgress = this.host.now()
      this.host.deliver({
        seq: slot.seq,
        view: this.view,
        timestamp: pp.body.timestamp,
        txHashes: pp.body.txHashes,
        votes: pp.body.votes ?? [],
        digest: pp.body.digest,
        certificate,
      })
    }
  }

  readonly onVote = (message: Signed<Prepare | Commit>): void => {
    const vote = message.body
    if (vote.view !== this.view || this.inViewChange || !this.inWindow(vote.seq)) return
    if (vote.seq <= this.lastDelivered) {
      // a first vote of this peer for a slot delivered here: it is behind on the slot (it just got
      // the pre-prepare again, or its requests were lost); it gets this replica's messages of the
      // slot at once, as if it had asked (rate-limited, see onSlotRequest)
      const slot = this.slots.get(vote.seq)
      const votes = vote.type === 'prepare' ? slot?.prepares : slot?.commits
      if (slot === undefined || votes === undefined || votes.has(message.from) || !this.membersAt(vote.seq).includes(message.from)) return
      if (vote.type === 'prepare' && message.from === this.primaryAt(this.view, vote.seq)) return
      votes.set(message.from, message as never)
      this.onSlotRequest(message.from, { type: 'slot-request', view: vote.view, seq: vote.seq })
      return
    }
    if (!this.membersAt(vote.seq).includes(message.from)) return
    if (vote.type === 'prepare' && message.from === this.primaryAt(this.view, vote.seq)) return
    const slot = this.slotOf(vote.seq)
    const votes = vote.type === 'prepare' ? slot.prepares : slot.commits
    if (votes.has(message.from)) return
    votes.set(message.from, message as never)
    slot.touchedAt = this.host.now()
    if (
      vote.type === 'commit' &&
      vote.digest !== slot.prePrepare?.body.digest &&
      this.matching(slot.commits, vote.digest) >= this.quorumAt(vote.seq)
    ) {
      // a quorum committed a batch this replica does not have (its pre-prepare was lost, or the
      // primary sent it another): the block exists, signed by a quorum; fetch it rather than wait
      this.host.log.warn(`a quorum committed batch ${vote.seq} that this replica did not get; fetching the block`)
      this.requestTransfer(
        vote.seq,
        undefined,
        [...slot.commits.values()].filter((c) => c.body.digest === vote.digest).map((c) => c.from),
      )
      return
    }
    this.advance(slot)
  }
}
