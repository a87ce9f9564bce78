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
 *
 * The protocol's sections are one file each, layered as subclasses on the shared state of core.ts:
 * normal-case.ts, retransmission.ts, checkpoints.ts, view-change.ts, recovery.ts, liveness.ts;
 * this file dispatches each message to its section.
 */

import type { OwnVote } from './core.ts'
import { Liveness } from './liveness.ts'
import {
  type Checkpoint,
  type Commit,
  type Hex,
  MAX_BATCH_VOTES,
  type MemberVote,
  type NewView,
  type PrePrepare,
  type Prepare,
  type PreparedCert,
  type Signed,
  type StableProof,
  type Status,
  signingBytes,
  type ViewChange,
} from './messages.ts'
import { K, quorumOf, type Replica, type ReplicaOptions } from './types.ts'

export {
  type CommittedBatch,
  type ConsensusEvent,
  type ConsensusTimers,
  DEFAULT_TIMERS,
  K,
  L,
  quorumOf,
  type Replica,
  type ReplicaHost,
  type ReplicaOptions,
  type ReplicaPhase,
  type Restored,
  TEST_TIMERS,
} from './types.ts'

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

/** the replica with every section: nothing is left abstract */
class ReplicaMachine extends Liveness {}

/**
 * The replica as its host sees it (types.ts Replica).
 *
 * Long because: it is the Replica interface's dispatch table, each entry a few lines handing over
 * to ReplicaMachine, whose sections are already one file each (normal-case.ts, view-change.ts,
 * recovery.ts, …); start() restores every persisted record in one place, in one order.
 */
export function createReplica(options: ReplicaOptions): Replica {
  const r = new ReplicaMachine(options)
  // ---- dispatch ----
  return {
    start(restored) {
      r.lastExecuted = restored.height
      r.lastDelivered = restored.height
      r.seqNo = restored.height
      r.lastTimestamp = restored.heightTime
      r.executedHashes.set(restored.height, restored.heightHash)
      const saved = restored.records
      const viewRecord = saved.get('view') as { view: number; inViewChange: boolean } | undefined
      r.view = viewRecord?.view ?? 0
      const savedStable = saved.get('stable') as StableProof | undefined
      if (savedStable !== undefined && savedStable.seq <= restored.height) r.stable = savedStable
      for (const [key, value] of saved) {
        if (key.startsWith('vote/')) r.ownVotes.set(Number(key.slice(5)), value as OwnVote)
        else if (key.startsWith('cert/')) r.preparedCerts.set(Number(key.slice(5)), value as PreparedCert)
      }
      r.lastPrimaryContact = r.host.now()
      r.lastProgress = r.host.now()
      // a (re)started replica first learns where the others are (consensus.md §5); a new one not in
      // the group yet only follows the chain until it is (checkJoined)
      r.checkJoined()
      if (!r.observing) r.beginRecovery(restored.height === 0 && saved.size === 0 ? 'start' : 'restart')
    },

    receive(from, message) {
      // the sender is who the link authenticated, never what the message claims (§10.1)
      if (message.from !== from || from === r.self || !r.membership.known(from)) return
      // a replica that left the group, or has not joined it yet, only listens for checkpoints
      if ((r.retired() || r.observing) && message.body.type !== 'checkpoint') return
      if (!r.validSig(message)) {
        r.host.log.warn(`a message from ${from} with a bad signature dropped`)
        return
      }
      r.heardFrom.set(from, r.host.now())
      const body = message.body
      // a replica that left the group has no say in view changes or recovery; its votes on slots
      // are checked against each slot's group below
      const perSlot = body.type === 'pre-prepare' || body.type === 'prepare' || body.type === 'commit' || body.type === 'checkpoint'
      if (!perSlot && !r.current().includes(from)) return
      switch (body.type) {
        case 'pre-prepare':
        case 'prepare':
        case 'commit': {
          if (r.recovering) return
          const notEntered = body.view > r.view || (body.view === r.view && r.inViewChange)
          if (notEntered) r.keepEarly(message as Signed<PrePrepare | Prepare | Commit>)
          else if (body.type === 'pre-prepare') r.onPrePrepare(message as Signed<PrePrepare>)
          else r.onVote(message as Signed<Prepare | Commit>)
          return
        }
        case 'checkpoint':
          r.onCheckpoint(message as Signed<Checkpoint>)
          return
        case 'view-change':
          if (!r.recovering) r.onViewChange(message as Signed<ViewChange>)
          return
        case 'new-view':
          if (!r.recovering) r.onNewView(message as Signed<NewView>)
          return
        case 'heartbeat':
          if (body.view !== r.view || from !== r.primaryOf(r.view) || r.inViewChange) return
          r.lastPrimaryContact = r.host.now()
          // an idle primary has delivered everything up to body.seq: a replica below it missed
          // batches and fetches the blocks (each checked by its commit proof), rather than wait
          // for the next checkpoint in a quiet network
          if (body.seq > r.lastDelivered && r.transferringTo === undefined) {
            r.requestTransfer(
              body.seq,
              undefined,
              r.current().filter((id) => id !== r.self),
              true,
            )
          }
          return
        case 'slot-request':
          r.onSlotRequest(from, body)
          return
        case 'status-request':
          r.onStatusRequest(from, body)
          return
        case 'status':
          r.onStatus(message as Signed<Status>)
          return
        case 'member-vote':
          // kept for this replica's next proposal; it counts only once ordered (membership.ts)
          if (r.current().includes(from) && !r.membership.settled({ ...body, from }) && r.memberVotes.size < 4 * MAX_BATCH_VOTES) {
            r.memberVotes.set(`${from}/${body.action}/${body.target}`, message as Signed<MemberVote>)
            if (r.primaryOf(r.view) === r.self) r.propose()
          }
          return
      }
    },

    txArrived() {
      // with nothing in flight a lone transaction is proposed at once rather than after the batch timer
      // (~0.7 → ~0.2 s on a 4-VP network); under load batches still fill while earlier ones are ordered
      // (executed() proposes what waits). A pre-prepare lost on the way, or dropped by a backup still
      // recovering at start, is offered again after `retransmitMs` (retransmit), not left to a view change
      if (r.host.pendingCount() >= r.options.batchSize || r.seqNo === r.lastDelivered) r.propose()
    },

    executed(seq, blockHash) {
      if (seq <= r.lastExecuted) return
      r.announceGroupChange(r.lastExecuted, seq)
      r.lastExecuted = seq
      r.executedHashes.set(seq, blockHash)
      if (seq % K === 0 && !r.observing) {
        const message = r.sign<Checkpoint>({ type: 'checkpoint', seq, blockHash })
        r.onCheckpoint(message)
        r.host.broadcast(message)
      }
      r.checkStable(seq)
      r.propose()
    },

    stateTransferred(seq, blockHash) {
      r.transferringTo = undefined
      if (seq > r.lastExecuted) {
        r.announceGroupChange(r.lastExecuted, seq)
        r.lastExecuted = seq
        r.executedHashes.set(seq, blockHash)
      }
      if (seq > r.lastDelivered) r.lastDelivered = seq
      if (seq > r.seqNo) r.seqNo = seq
      r.checkJoined()
      // the blocks fetched decided those seqs: this replica's own batches among them that they did not
      // commit (the others moved on in a view it missed) go back to the pool (what they did commit is
      // settled already), or their transactions would stay taken, neither ordered nor re-gossiped
      const dropped: Hex[] = []
      for (const [s, slot] of r.slots) {
        if (s > seq) continue
        if (slot.prePrepare?.from === r.self) dropped.push(...slot.prePrepare.body.txHashes)
        r.slots.delete(s)
      }
      if (dropped.length > 0) r.host.returnToPool(dropped)
      r.lastProgress = r.host.now()
      r.host.event({ kind: 'recovery-finished', view: r.view, height: seq })
      r.checkStable(seq - (seq % K))
      for (const slot of r.slots.values()) r.advance(slot)
      r.propose()
    },

    tick: r.tick,

    voteToRemove: (target) => r.castVote('delete', target),
    voteToAdd: (target, cert) => r.castVote('add', target, cert),

    removedBy(from) {
      if (r.retired() || r.observing || from === r.self || !r.current().includes(from)) return
      r.removedByMembers.add(from)
      if (!r.retired()) return
      r.host.log.warn(
        `replica ${r.self}: replicas ${[...r.removedByMembers].join(', ')} (f + 1 members) applied its removal from the group and refuse its links: it retires at block ${r.lastExecuted}, without the blocks up to its removal, which it missed while down`,
      )
    },

    state: () => ({
      view: r.view,
      primary: r.primaryOf(r.view),
      normal: !r.inViewChange && !r.recovering && r.transferringTo === undefined && !r.retired() && !r.observing,
      phase: r.retired()
        ? 'retired'
        : r.observing
          ? 'joining'
          : r.inViewChange
            ? 'viewChange'
            : r.recovering
              ? 'recovering'
              : r.transferringTo !== undefined
                ? 'stateTransfer'
                : 'normal',
      lastExecuted: r.lastExecuted,
      stable: r.stable.seq,
      members: r.current(),
    }),
  }
}
