/** Retransmission (issue 6): a slot gone quiet asks for what it lacks; peers answer with what they signed then. */

import { PIPELINE, type Slot } from './core.ts'
import type { Commit, Prepare, Signed, SlotRequest } from './messages.ts'
import { NormalCase } from './normal-case.ts'
import { L } from './types.ts'

export abstract class Retransmission extends NormalCase {
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
  readonly heardFrom = new Map<number, number>()
  /** when the last round of resends went to each peer */
  readonly peerRoundAt = new Map<number, number>()
  /** `${peer}/${seq}` → when a slot request of that peer was last answered (pruned at each stable checkpoint) */
  readonly answeredRequests = new Map<string, number>()
  /** rounds for a slot already delivered here (the primary offering its pre-prepare to a backup that lags) */
  readonly MAX_ROUNDS_DELIVERED = 4

  readonly ownSlotMessages = (slot: Slot): Signed[] => {
    const own: Signed[] = []
    const pp = slot.prePrepare
    if (pp !== undefined && pp.from === this.self && pp.body.view === this.view) own.push(pp)
    const prepare = slot.prepares.get(this.self)
    if (prepare !== undefined && prepare.body.view === this.view) own.push(prepare)
    const commit = slot.commits.get(this.self)
    if (commit !== undefined && commit.body.view === this.view) own.push(commit)
    return own
  }

  /** this replica holds something of the slot in the current view */
  readonly known = (slot: Slot): boolean =>
    slot.prePrepare?.body.view === this.view ||
    [...slot.prepares.values(), ...slot.commits.values()].some((vote) => vote.body.view === this.view)

  /** a peer that sent nothing since the last round it got (down, cut off) gets at most one round per `requestMs` */
  readonly peerReachable = (peer: number, now: number): boolean => {
    const last = this.peerRoundAt.get(peer)
    if (last !== undefined && (this.heardFrom.get(peer) ?? Number.NEGATIVE_INFINITY) < last && now - last < this.timers.requestMs)
      return false
    this.peerRoundAt.set(peer, now)
    return true
  }

  readonly retransmit = (now: number): void => {
    let highest = this.lastDelivered
    for (const slot of this.slots.values())
      if (slot.seq > highest && slot.seq <= this.stable.seq + L && this.known(slot)) highest = slot.seq
    const from = Math.max(this.stable.seq, this.lastDelivered - PIPELINE) + 1
    const to = Math.min(highest, this.lastDelivered + PIPELINE, this.stable.seq + L)
    /** per peer: own messages to offer it, slots to ask it for */
    const offers = new Map<number, Signed[]>()
    const asks = new Map<number, number[]>()
    for (let seq = from; seq <= to; seq++) {
      const delivered = seq <= this.lastDelivered
      // below `highest`, a slot with nothing here is one whose messages were all lost: asked for like the others
      const slot = delivered ? this.slots.get(seq) : this.slotOf(seq)
      if (slot === undefined || (delivered && slot.retries >= this.MAX_ROUNDS_DELIVERED)) continue
      const pp = slot.prePrepare
      if (delivered && (pp?.from !== this.self || pp.body.view !== this.view)) continue
      if (!delivered && this.isCommitted(slot)) continue
      if (now - Math.max(slot.touchedAt, slot.retriedAt) < this.timers.retransmitMs * 2 ** Math.min(slot.retries, 3)) continue
      slot.retries++
      slot.retriedAt = now
      // a batch whose transactions could not be fetched: try again
      if (!delivered && !slot.haveTxs) this.acquireTxs(slot)
      const members = this.membersAt(seq)
      const primary = this.primaryAt(this.view, seq)
      const digest = pp?.body.view === this.view ? pp.body.digest : undefined
      const has = (votes: Map<number, Signed<Prepare | Commit>>, peer: number): boolean => {
        const vote = votes.get(peer)
        return vote !== undefined && vote.body.view === this.view && (digest === undefined || vote.body.digest === digest)
      }
      const prepared = this.isPrepared(slot)
      for (const peer of members) {
        if (peer === this.self) continue
        if (primary === this.self && pp?.from === this.self && !has(slot.prepares, peer) && !has(slot.commits, peer)) {
          const list = offers.get(peer) ?? []
          list.push(...this.ownSlotMessages(slot))
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
      if (!this.peerReachable(peer, now)) continue
      for (const message of offers.get(peer) ?? []) this.host.send(peer, message)
      for (const seq of asks.get(peer) ?? []) this.host.send(peer, this.sign<SlotRequest>({ type: 'slot-request', view: this.view, seq }))
    }
  }

  /** a peer lacks this replica's messages of a slot: the same signed messages again, at most once per interval per peer and slot */
  readonly onSlotRequest = (from: number, request: SlotRequest): void => {
    if (request.view !== this.view || !this.inWindow(request.seq)) return
    const slot = this.slots.get(request.seq)
    if (slot === undefined) return
    const key = `${from}/${request.seq}`
    const now = this.host.now()
    if (now - (this.answeredRequests.get(key) ?? Number.NEGATIVE_INFINITY) < this.timers.retransmitMs / 2) return
    this.answeredRequests.set(key, now)
    for (const message of this.ownSlotMessages(slot)) this.host.send(from, message)
  }
}
