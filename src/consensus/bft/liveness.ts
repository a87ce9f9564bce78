/** The timers: batch cut, request, null request, view-change time-out, resends; the host calls tick(). */

import type { Checkpoint, Heartbeat } from './messages.ts'
import { Recovery } from './recovery.ts'
import { K } from './types.ts'

export abstract class Liveness extends Recovery {
  // ---- timers ----

  /** own checkpoint not yet stable, re-sent now and then: a lost checkpoint message must not keep the log from moving */
  checkpointResentAt = 0
  readonly resendCheckpoint = (now: number): void => {
    const latest = this.lastExecuted - (this.lastExecuted % K)
    if (latest <= this.stable.seq || now - this.checkpointResentAt < this.timers.nullRequestMs) return
    const blockHash = this.executedHashes.get(latest)
    if (blockHash === undefined) return
    this.checkpointResentAt = now
    this.host.broadcast(this.sign<Checkpoint>({ type: 'checkpoint', seq: latest, blockHash }))
  }

  readonly tick = (): void => {
    const now = this.host.now()
    if (this.observing) return
    if (this.retired()) {
      // its last duty: the checkpoint at the boundary it left at, which the old group's quorum may need
      this.resendCheckpoint(now)
      return
    }
    this.resendMemberVotes(now)
    if (!this.recovering && this.transferringTo === undefined) this.resendCheckpoint(now)
    if (this.recovering) {
      if (now - this.viewChangeStartedAt > this.timers.viewChangeMs) this.beginRecovery('no quorum answered the status request')
      return
    }
    if (this.inViewChange) {
      if (now - this.viewChangeStartedAt > this.viewChangeTimeout) {
        this.failedViewChanges++
        // alone in asking (cut off, or the others moved on): find out where the others are (consensus.md §4)
        if (this.failedViewChanges >= 2) {
          this.failedViewChanges = 0
          this.beginRecovery(`view change to ${this.view} failed twice`)
          return
        }
        this.viewChangeTimeout = Math.min(this.viewChangeTimeout * 2, 5 * this.timers.viewChangeMs)
        this.startViewChange(
          this.view + 1,
          `view ${this.view} did not start within ${Math.round((now - this.viewChangeStartedAt) / 1000)} s`,
        )
      }
      return
    }
    if (this.transferringTo === undefined) this.retransmit(now)
    if (this.primaryOf(this.view) === this.self) {
      // a primary whose batches commit nowhere may be the one left behind (cut off while the others
      // changed view; it never saw their new view): like a stalled backup, it asks where they are
      const inFlight = this.slots.get(this.lastDelivered + 1)
      if (
        inFlight?.prePrepare?.from === this.self &&
        now - Math.max(inFlight.seenAt, this.lastProgress) > this.timers.requestMs &&
        (this.behindCheckedAt === undefined || now - this.behindCheckedAt > this.timers.requestMs)
      ) {
        this.behindCheckedAt = now
        this.beginRecovery('batches proposed here commit nowhere: checking whether the others moved on', true)
        return
      }
      const age = this.host.oldestPendingAgeMs()
      if (
        this.memberVotes.size > 0 ||
        (age !== undefined && (age >= this.timers.batchMs || this.host.pendingCount() >= this.options.batchSize))
      )
        this.propose()
      // a decided group change takes effect only once the chain reaches its boundary: an idle
      // network would never get there, so the primary orders empty batches, one per tick, until it does
      else if (this.seqNo === this.lastDelivered && this.changePending()) this.propose(true)
      if (this.seqNo === this.lastDelivered && now - this.lastPrimarySend > this.timers.nullRequestMs) {
        this.host.broadcast(this.sign<Heartbeat>({ type: 'heartbeat', view: this.view, seq: this.seqNo }))
        this.lastPrimarySend = now
      }
      return
    }
    // backup: a stalled primary (work waiting, nothing committed) or a silent one is replaced;
    // transactions waiting in this pool count too, so a primary that leaves them out is replaced (§10.8)
    const waiting =
      this.transferringTo === undefined &&
      ([...this.slots.values()].some((slot) => slot.seq > this.lastDelivered && slot.prePrepare !== undefined) ||
        this.host.pendingCount() > 0)
    if (!waiting) this.waitingSince = undefined
    else {
      this.waitingSince ??= now
      const stalledFor = now - Math.max(this.waitingSince, this.lastProgress)
      if (stalledFor > this.timers.requestMs) {
        // first ask where the others are: a replica that fell behind sees a stall that is only its own
        if (this.behindCheckedAt === undefined || this.behindCheckedAt < Math.max(this.waitingSince, this.lastProgress)) {
          this.behindCheckedAt = now
          this.beginRecovery('nothing committed while work waits: checking whether this replica is behind', true)
          return
        }
        if (now - this.behindCheckedAt > this.timers.requestMs) {
          this.startViewChange(this.view + 1, `work waited ${Math.round(stalledFor / 1000)} s with nothing committed`)
          return
        }
      }
    }
    if (now - this.lastPrimaryContact > 3 * this.timers.nullRequestMs + this.timers.requestMs) {
      this.startViewChange(
        this.view + 1,
        `no word from primary ${this.primaryOf(this.view)} for ${Math.round((now - this.lastPrimaryContact) / 1000)} s`,
      )
    }
  }

  /** `onlyChecking`: a backup asking whether it is behind; its stall timers keep running */
  readonly beginRecovery = (reason: string, onlyChecking = false): void => {
    this.checkingBehind = onlyChecking
    this.recovering = true
    this.viewChangeStartedAt = this.host.now()
    this.statusNonce = `${this.self}-${this.host.now()}-${Math.random().toString(16).slice(2, 10)}`
    this.statusReplies.clear()
    this.host.event({ kind: 'recovery-started', reason })
    this.host.broadcast(this.sign({ type: 'status-request', nonce: this.statusNonce }))
  }
}
