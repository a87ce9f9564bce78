/** View change (consensus.md §4 with §10.4): view changes with proofs, the new view built from them and checked by every backup. */

import { Checkpoints } from './checkpoints.ts'
import { GENESIS, VIEW_WINDOW, ZERO_HASH } from './core.ts'
import {
  batchDigest,
  type Commit,
  type Hex,
  type NewView,
  type PrePrepare,
  type Prepare,
  type PreparedCert,
  type Signed,
  type StableProof,
  type ViewChange,
} from './messages.ts'
import { K, L } from './types.ts'

export abstract class ViewChanges extends Checkpoints {
  // ---- view change ----

  readonly startViewChange = (target: number, reason: string): void => {
    if (target <= this.view && this.inViewChange) return
    if (target < this.view) return
    this.view = target
    this.inViewChange = true
    this.viewChangeStartedAt = this.host.now()
    this.persistView()
    this.host.event({ kind: 'view-change-started', view: target, reason })
    this.host.log.info(`asking for view ${target}: ${reason}`)
    const message = this.sign<ViewChange>({
      type: 'view-change',
      view: target,
      stable: this.stable,
      prepared: [...this.preparedCerts.entries()].filter(([seq]) => seq > this.stable.seq).map(([, cert]) => cert),
    })
    this.recordViewChange(message)
    this.host.broadcast(message)
    this.tryNewView()
  }

  readonly recordViewChange = (message: Signed<ViewChange>): void => {
    let byReplica = this.viewChanges.get(message.body.view)
    if (byReplica === undefined) {
      byReplica = new Map()
      this.viewChanges.set(message.body.view, byReplica)
    }
    if (!byReplica.has(message.from)) byReplica.set(message.from, message)
  }

  readonly validStable = (proof: StableProof): boolean => {
    if (proof.seq === 0) return proof.proof.length === 0 && proof.blockHash === ZERO_HASH
    if (proof.seq % K !== 0) return false
    const signers = new Set<number>()
    for (const c of proof.proof) {
      if (c.body.seq !== proof.seq || c.body.blockHash !== proof.blockHash || !this.validSig(c)) return false
      if (this.membersAt(proof.seq).includes(c.from)) signers.add(c.from)
    }
    return signers.size >= this.quorumAt(proof.seq)
  }

  readonly validPrepared = (cert: PreparedCert, before: number, stableSeq: number): boolean => {
    const pp = cert.prePrepare
    const { seq, digest } = pp.body
    // the pre-prepare's sender is only checked to be a replica (validSig): a new view's primary
    // re-issues pre-prepares for seqs past a group change, whose group may not include it; the
    // quorum of prepares from the seq's group, given only to a legitimate pre-prepare, is what
    // binds the digest
    const members = this.membersAt(seq)
    if (pp.body.view >= before || !this.validSig(pp) || !this.validVotes(pp.body)) return false
    if (seq <= stableSeq || seq > stableSeq + L || digest !== batchDigest(seq, pp.body.timestamp, pp.body.txHashes, pp.body.votes))
      return false
    const signers = new Set<number>()
    for (const p of cert.prepares) {
      const b = p.body
      if (b.view !== pp.body.view || b.seq !== seq || b.digest !== digest || p.from === pp.from || !this.validSig(p)) return false
      if (members.includes(p.from)) signers.add(p.from)
    }
    return signers.size >= this.quorumAt(seq) - 1
  }

  readonly validViewChange = (message: Signed<ViewChange>): boolean =>
    this.validSig(message) &&
    this.validStable(message.body.stable) &&
    message.body.prepared.every((c) => this.validPrepared(c, message.body.view, message.body.stable.seq))

  readonly onViewChange = (message: Signed<ViewChange>): void => {
    const target = message.body.view
    if (target < this.view || target > this.view + VIEW_WINDOW || (target === this.view && !this.inViewChange)) return
    if (this.viewChanges.get(target)?.has(message.from) === true) return
    if (!this.validViewChange(message)) {
      this.host.log.warn(`an invalid view change from ${message.from} ignored`)
      return
    }
    this.recordViewChange(message)
    // f+1 replicas want a higher view: at least one of them is honest; join the smallest such view
    const above = [...this.viewChanges.entries()].filter(([v]) => v > this.view)
    const wanting = new Set(above.flatMap(([, byReplica]) => [...byReplica.keys()]))
    if (wanting.size >= this.faulty() + 1)
      this.startViewChange(Math.min(...above.map(([v]) => v)), `${wanting.size} replicas asked for a view change`)
    this.tryNewView()
  }

  /** the pre-prepares a new view must carry, computed from a quorum of view changes (PBFT's rules, no renumbering) */
  readonly newViewPlan = (target: number, set: Signed<ViewChange>[]): { stable: StableProof; prePrepares: PrePrepare[] } => {
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

  readonly tryNewView = (): void => {
    if (!this.inViewChange || this.primaryOf(this.view) !== this.self) return
    const set = [...(this.viewChanges.get(this.view)?.values() ?? [])]
    if (set.length < this.quorum() || !set.some((vc) => vc.from === this.self)) return
    const chosenSet = set.slice(0, this.quorum())
    if (!chosenSet.some((vc) => vc.from === this.self))
      chosenSet[chosenSet.length - 1] = set.find((vc) => vc.from === this.self) as Signed<ViewChange>
    const plan = this.newViewPlan(this.view, chosenSet)
    for (const pp of plan.prePrepares) if (!this.recordVote(pp.seq, pp.digest)) return
    const prePrepares = plan.prePrepares.map((pp) => this.sign(pp))
    const message = this.sign<NewView>({ type: 'new-view', view: this.view, viewChanges: chosenSet, prePrepares })
    this.host.persist('new-view', message)
    this.host.broadcast(message)
    this.enterView(plan.stable, prePrepares)
  }

  readonly onNewView = (message: Signed<NewView>): void => {
    const nv = message.body
    if (message.from !== this.primaryOf(nv.view) || nv.view < this.view || nv.view > this.view + VIEW_WINDOW) return
    if (nv.view === this.view && !this.inViewChange) return
    const signers = new Set<number>()
    for (const vc of nv.viewChanges) {
      if (vc.body.view !== nv.view || signers.has(vc.from) || !this.current().includes(vc.from) || !this.validViewChange(vc)) {
        this.host.log.warn(`a new view from ${message.from} carries an invalid view change; ignored`)
        return
      }
      signers.add(vc.from)
    }
    if (signers.size < this.quorum()) return
    const plan = this.newViewPlan(nv.view, nv.viewChanges)
    const same =
      plan.prePrepares.length === nv.prePrepares.length &&
      plan.prePrepares.every((pp, i) => {
        const got = nv.prePrepares[i]
        return (
          got.from === message.from &&
          got.body.seq === pp.seq &&
          got.body.digest === pp.digest &&
          got.body.view === nv.view &&
          this.validSig(got)
        )
      })
    if (!same) {
      this.host.log.warn(`the new view from ${message.from} does not follow from its view changes; asking for the next view`)
      this.view = nv.view
      this.inViewChange = true
      this.startViewChange(nv.view + 1, 'the new primary sent a wrong new view')
      return
    }
    this.view = nv.view
    this.enterView(plan.stable, nv.prePrepares)
  }

  readonly enterView = (newStable: StableProof, prePrepares: Signed<PrePrepare>[]): void => {
    this.inViewChange = false
    this.failedViewChanges = 0
    this.waitingSince = undefined
    this.viewChangeTimeout = this.timers.viewChangeMs
    this.persistView()
    // this replica's own proposals that the new view does not carry go back to the pool
    const kept = new Set(prePrepares.flatMap((pp) => pp.body.txHashes))
    const dropped: Hex[] = []
    for (const slot of this.slots.values()) {
      if (slot.seq <= this.lastDelivered || slot.prePrepare?.from !== this.self) continue
      for (const hash of slot.prePrepare.body.txHashes) if (!kept.has(hash)) dropped.push(hash)
    }
    if (dropped.length > 0) this.host.returnToPool(dropped)
    for (const v of [...this.viewChanges.keys()]) if (v <= this.view) this.viewChanges.delete(v)
    const old = this.slots
    this.slots = new Map()
    for (const [seq, slot] of old) if (seq <= this.lastDelivered) this.slots.set(seq, slot)
    this.seqNo = Math.max(this.lastDelivered, newStable.seq, ...prePrepares.map((pp) => pp.body.seq))
    this.lastPrimaryContact = this.host.now()
    this.lastProgress = this.host.now()
    if (newStable.seq > this.lastExecuted && newStable.seq > this.stable.seq) {
      this.requestTransfer(
        newStable.seq,
        newStable.blockHash,
        newStable.proof.map((c) => c.from),
      )
    }
    for (const pp of prePrepares) {
      if (pp.body.seq <= this.lastDelivered) continue
      const slot = this.slotOf(pp.body.seq)
      slot.prePrepare = pp
      slot.seenAt = this.host.now()
      if (pp.from === this.self) {
        slot.haveTxs = this.host.missingTxs(pp.body.txHashes).length === 0
        slot.sentPrepare = true
      }
      this.acquireTxs(slot)
      this.advance(slot)
    }
    this.host.event({ kind: 'view-change-finished', view: this.view, primary: this.primaryOf(this.view), height: this.lastExecuted })
    this.host.log.info(
      `view ${this.view}: primary is replica ${this.primaryOf(this.view)}; delivered ${this.lastDelivered}, next seq ${this.seqNo + 1}, ${this.host.pendingCount()} transactions waiting here, ${prePrepares.length} batches carried over`,
    )
    const waitingForThisView = this.early.get(this.view) ?? []
    for (const v of [...this.early.keys()]) if (v <= this.view) this.early.delete(v)
    for (const message of waitingForThisView) {
      if (message.body.type === 'pre-prepare') this.onPrePrepare(message as Signed<PrePrepare>)
      else this.onVote(message as Signed<Prepare | Commit>)
    }
    this.propose()
  }

  /** keeps a message of a view not entered yet, bounded per view (§10.7) */
  readonly keepEarly = (message: Signed<PrePrepare | Prepare | Commit>): void => {
    const v = message.body.view
    if (v > this.view + VIEW_WINDOW || !this.inWindow(message.body.seq)) return
    const kept = this.early.get(v) ?? []
    if (kept.length >= 3 * L * this.current().length) return
    kept.push(message)
    this.early.set(v, kept)
  }
}
