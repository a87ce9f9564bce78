/** Recovery after a start or restart (consensus.md §5), and the membership votes a replica casts and resends. */

import { ZERO_HASH } from './core.ts'
import type { Hex, MemberVote, PrePrepare, Signed, Status } from './messages.ts'
import { ViewChanges } from './view-change.ts'

export abstract class Recovery extends ViewChanges {
  // ---- recovery (start, restart) ----

  readonly onStatusRequest = (from: number, request: { nonce: string }): void => {
    this.host.send(
      from,
      this.sign<Status>({
        type: 'status',
        nonce: request.nonce,
        view: this.view,
        changing: this.inViewChange,
        stable: this.stable,
        height: this.lastExecuted,
        heightHash: this.executedHashes.get(this.lastExecuted) ?? ZERO_HASH,
      }),
    )
    // a peer (re)starting while this replica recovers too: ask it back, so replicas started together find each other at once
    if (this.recovering) this.host.send(from, this.sign({ type: 'status-request', nonce: this.statusNonce }))
  }

  /**
   * Joins the view the others run, learnt from their status (no new view was seen: it was missed).
   * Batches of any other view will never commit here; this replica's own proposals among them go
   * back to the pool, or a primary cut off while the others changed view would hold its clients'
   * transactions for ever, and a stale batch left waiting would start view changes.
   */
  readonly adoptView = (target: number): void => {
    const returned: Hex[] = []
    for (const [seq, slot] of this.slots) {
      if (seq <= this.lastDelivered || slot.prePrepare === undefined || slot.prePrepare.body.view === target) continue
      if (slot.prePrepare.from === this.self) returned.push(...slot.prePrepare.body.txHashes)
      this.slots.delete(seq)
    }
    if (returned.length > 0) this.host.returnToPool(returned)
    this.seqNo = Math.max(
      this.lastDelivered,
      this.stable.seq,
      ...[...this.slots.values()].filter((slot) => slot.prePrepare !== undefined).map((slot) => slot.seq),
    )
    this.view = target
    this.inViewChange = false
    this.persistView()
  }

  readonly onStatus = (message: Signed<Status>): void => {
    if (!this.recovering || message.body.nonce !== this.statusNonce || !this.validStable(message.body.stable)) return
    this.statusReplies.set(message.from, message.body)
    if (this.statusReplies.size < this.quorum() - 1) return
    this.recovering = false
    // the view at least f+1 replicas run (not changing): one of them is honest. A replica that
    // escalated views alone (cut off) comes back down to it: it never voted in those views (none
    // formed), and its votes stay bound per (view, seq). While the others change view too, it
    // keeps its own view change going rather than reset it.
    const settled = [...this.statusReplies.values()].filter((status) => !status.changing).map((status) => status.view)
    if (!this.inViewChange && !settled.includes(this.view)) settled.push(this.view)
    settled.sort((a, b) => b - a)
    if (settled.length >= this.faulty() + 1) {
      const agreed = settled[this.faulty()]
      if (agreed > this.view || (this.inViewChange && agreed <= this.view)) this.adoptView(agreed)
    }
    if (!this.checkingBehind) this.waitingSince = undefined
    let best = this.stable
    let tallest: { from: number; height: number } | undefined
    for (const [from, status] of this.statusReplies) {
      if (status.stable.seq > best.seq) best = status.stable
      if (status.height > (tallest?.height ?? this.lastExecuted)) tallest = { from, height: status.height }
    }
    if (!this.checkingBehind) {
      this.lastPrimaryContact = this.host.now()
      this.lastProgress = this.host.now()
    }
    if (best.seq > this.lastExecuted) {
      this.requestTransfer(
        best.seq,
        best.blockHash,
        best.proof.map((c) => c.from),
      )
    } else {
      if (best.seq > this.stable.seq) this.makeStable(best)
      // blocks past the last checkpoint: fetched from the peers that say they have them (the tallest
      // first), each checked by its commit proof; the height itself is only a claim
      if (tallest !== undefined) {
        const claimants = [...this.statusReplies].filter(([, status]) => status.height > this.lastExecuted).map(([from]) => from)
        this.requestTransfer(tallest.height, undefined, [tallest.from, ...claimants.filter((from) => from !== tallest.from)], true)
      }
    }
    this.host.event({ kind: 'recovery-finished', view: this.view, height: this.lastExecuted })
    this.propose()
  }

  // ---- membership ----

  readonly validVotes = (pp: PrePrepare): boolean =>
    (pp.votes ?? []).every((vote) => vote.body.type === 'member-vote' && this.validSig(vote))

  /** own votes not ordered yet go out again now and then: the primary may have changed, or lost them in a view change */
  readonly resendMemberVotes = (now: number): void => {
    for (let i = this.ownMemberVotes.length - 1; i >= 0; i--) {
      if (this.membership.settled({ ...this.ownMemberVotes[i].body, from: this.self })) this.ownMemberVotes.splice(i, 1)
    }
    if (this.ownMemberVotes.length === 0) return
    if (now - this.memberVotesSentAt < Math.min(this.timers.retransmitMs * 2 ** this.memberVoteRounds, this.timers.nullRequestMs)) return
    this.memberVotesSentAt = now
    this.memberVoteRounds = Math.min(this.memberVoteRounds + 1, 8)
    for (const vote of this.ownMemberVotes) {
      this.memberVotes.set(`${this.self}/${vote.body.action}/${vote.body.target}`, vote)
      this.host.broadcast(vote)
    }
  }

  readonly castVote = (action: MemberVote['action'], target: number, cert?: string): void => {
    const vote = this.sign<MemberVote>(
      cert === undefined ? { type: 'member-vote', action, target } : { type: 'member-vote', action, target, cert },
    )
    this.ownMemberVotes.push(vote)
    this.memberVotes.set(`${this.self}/${action}/${target}`, vote)
    this.host.broadcast(vote)
    this.memberVotesSentAt = this.host.now()
    this.memberVoteRounds = 0
    if (this.primaryOf(this.view) === this.self) this.propose()
  }

  /** blocks (before, upTo] executed: reports each group change among the seqs they open */
  readonly announceGroupChange = (before: number, upTo: number): void => {
    for (const epoch of this.membership.epochs()) {
      if (epoch.from > before + 1 && epoch.from <= upTo + 1) {
        this.host.event({ kind: 'membership-changed', from: epoch.from, members: epoch.members })
        this.host.log.info(
          `the group is now replicas ${epoch.members.join(', ')} from seq ${epoch.from}${epoch.members.includes(this.self) ? '' : ': this replica left it and goes idle'}`,
        )
      }
    }
  }
}
