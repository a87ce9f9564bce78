/** Checkpoints every K blocks, the stable checkpoint and its proof, state transfer when behind or different. */

import { pad } from './core.ts'
import type { Checkpoint, Hex, Signed, StableProof } from './messages.ts'
import { Retransmission } from './retransmission.ts'
import { K, L } from './types.ts'

export abstract class Checkpoints extends Retransmission {
  // ---- checkpoints ----

  readonly onCheckpoint = (message: Signed<Checkpoint>): void => {
    const { seq, blockHash } = message.body
    if (seq <= this.stable.seq || seq % K !== 0) return
    // far ahead of us is allowed (that is how a lagging replica learns it lags), but bounded
    // far ahead is bounded, except for a new VP following the chain from far behind
    if ((seq > this.stable.seq + 4 * L && !this.observing) || !this.membersAt(seq).includes(message.from)) return
    let byHash = this.checkpoints.get(seq)
    if (byHash === undefined) {
      byHash = new Map()
      this.checkpoints.set(seq, byHash)
    }
    for (const signers of byHash.values()) if (signers.has(message.from)) return
    let signers = byHash.get(blockHash)
    if (signers === undefined) {
      signers = new Map()
      byHash.set(blockHash, signers)
    }
    signers.set(message.from, message)
    this.checkStable(seq)
  }

  readonly checkStable = (seq: number): void => {
    const byHash = this.checkpoints.get(seq)
    if (byHash === undefined) return
    for (const [blockHash, signers] of byHash) {
      const mine = this.executedHashes.get(seq)
      if (signers.size >= this.quorumAt(seq)) {
        if (mine === undefined) {
          // the others are past this point: fetch the blocks instead of waiting for slots we may never complete
          if (this.lastExecuted < seq && this.lastDelivered < seq) this.requestTransfer(seq, blockHash, [...signers.keys()])
          return
        }
        if (mine !== blockHash) {
          this.host.log.warn(`block ${seq} here is ${mine}, a quorum has ${blockHash}: this replica stops and fetches the quorum's chain`)
          this.requestTransfer(seq, blockHash, [...signers.keys()])
          return
        }
        this.makeStable({ seq, blockHash, proof: [...signers.values()] })
        return
      }
      // f+1 agree on a checkpoint far above our window: we lag (consensus.md §5)
      if (signers.size >= Math.floor((this.membersAt(seq).length - 1) / 3) + 1 && seq > this.stable.seq + L && mine === undefined)
        this.requestTransfer(seq, blockHash, [...signers.keys()])
    }
  }

  readonly makeStable = (proof: StableProof): void => {
    if (proof.seq <= this.stable.seq) return
    this.stable = proof
    this.host.persist('stable', proof)
    for (const seq of [...this.slots.keys()]) if (seq <= proof.seq) this.slots.delete(seq)
    for (const seq of [...this.checkpoints.keys()]) if (seq <= proof.seq) this.checkpoints.delete(seq)
    for (const key of [...this.answeredRequests.keys()]) if (Number(key.split('/')[1]) <= proof.seq) this.answeredRequests.delete(key)
    for (const seq of [...this.preparedCerts.keys()]) {
      if (seq > proof.seq) continue
      this.preparedCerts.delete(seq)
      this.host.persist(`cert/${pad(seq)}`, undefined)
    }
    for (const seq of [...this.ownVotes.keys()]) {
      if (seq > proof.seq) continue
      this.ownVotes.delete(seq)
      this.host.persist(`vote/${pad(seq)}`, undefined)
    }
    for (const seq of [...this.executedHashes.keys()]) if (seq < proof.seq) this.executedHashes.delete(seq)
    if (this.seqNo < proof.seq) this.seqNo = proof.seq
    this.propose()
  }

  readonly requestTransfer = (seq: number, blockHash: Hex | undefined, replicas: number[], claimed = false): void => {
    if ((this.transferringTo !== undefined && this.transferringTo >= seq) || seq <= this.lastExecuted || this.retired()) return
    this.transferringTo = seq
    this.host.event({
      kind: 'recovery-started',
      reason: `state transfer to block ${seq}${blockHash === undefined ? '' : ` (${blockHash})`}`,
    })
    this.host.stateTransfer({ seq, blockHash, replicas: replicas.filter((r) => r !== this.self), claimed })
  }
}
