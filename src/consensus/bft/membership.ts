/**
 * Which VPs make up the consensus group at each sequence number (consensus.md §10.10, issue 6).
 *
 * Membership is decided through the ordered log, never by local agreement: each VP's signed
 * membership vote travels inside a batch (covered by its digest, kept with the block's commit
 * proof), and every node that executes or replays the blocks feeds them here in order, so all
 * of them compute the same group for every seq, NVPs and restarted nodes included.
 *
 * Rules (Hyperchain's, made deterministic):
 * - a VP leaves only once the votes of ALL the members current at the ordering seq are ordered,
 *   its own included: one operator call, or a Byzantine minority, cannot remove anybody; or once a
 *   NODE proposal the admins voted executes in a block (MembershipDecision, docs/governance.md §11);
 * - the group never drops below MIN_VPS;
 * - a change decided at seq s takes effect after the first checkpoint boundary c ≥ s + L. A
 *   replica only handles slots h < seq ≤ h + L with h ≤ its executed height, so it has always
 *   executed every block that decides the group of any slot it handles: nobody ever acts on a
 *   slot whose group it could get wrong, and nothing needs to pause at the boundary;
 * - ids are stable (never renumbered); the primary of view v is the (v mod N)-th of the sorted
 *   members.
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { plainHex } from '../../wire/hex.ts'
import type { MemberVote, Signed } from './messages.ts'

/** consensus.md §1 (the same K and L as the replica's; repeated so that this module stands alone) */
const K = 10
const L = 4 * K
/** Hyperchain refuses a deletion at N == 4 */
export const MIN_VPS = 4

export interface Epoch {
  /** first seq this group orders */
  from: number
  /** sorted replica ids */
  members: number[]
}

export type MembershipOutcome =
  | { kind: 'scheduled'; action: 'delete' | 'add'; target: number; decidedAt: number; from: number; members: number[]; byProposal?: true }
  | { kind: 'refused'; action: 'delete' | 'add'; target: number; decidedAt: number; reason: string; byProposal?: true }

/**
 * A change the chain's governance decided at a block: a NODE proposal executed there
 * (docs/governance.md §11). It needs no member votes: the admins' votes decided it, and every node
 * executing the block wrote the same decision into the state, so every node records it alike.
 */
export interface MembershipDecision {
  action: 'delete' | 'add'
  target: number
  /** an addition's ECert (base64 DER), as an add vote carries it */
  cert?: string
}

/** everything the log knows after block `height`, to start from after a restart (blocks may be archived away) */
export interface MembershipSnapshot {
  height: number
  epochs: Epoch[]
  /** "delete/<id>", "add/<id>" or "add/<id>/<cert digest>" → voters whose votes are ordered */
  pending: [string, number[]][]
  known: number[]
  /** the certificates (base64 DER) of the VPs added with one; absent in snapshots from before */
  certs?: [number, string][]
}

export interface MembershipOptions {
  /**
   * Checks an add vote's content (its certificate) before it counts; returns why it is refused.
   * It must depend on the vote alone (every node replaying the log decides the same): the host
   * checks the certificate against the namespace CA, never against the clock or its own files.
   */
  admit?(vote: MemberVote): string | undefined
}

export interface Membership {
  /** the group that orders `seq` (known for every seq up to L past the recorded height) */
  at(seq: number): readonly number[]
  /** the group once every change recorded so far has taken effect */
  latest(): readonly number[]
  /** every id that was ever a member (signatures of any of them can be checked) */
  known(id: number): boolean
  /** the certificate (base64 DER) the add votes of `id` carried, once its addition is decided */
  certOf(id: number): string | undefined
  epochs(): readonly Epoch[]
  /** the last seq recorded */
  height(): number
  /** true when this vote needs no resending: it is ordered, or its change is decided or moot */
  settled(vote: MemberVote & { from: number }): boolean
  /**
   * applies what block `seq` decided: first the governance decisions its execution made (they were
   * judged against the group before the block), then the votes its batch ordered (seqs in
   * increasing order; blocks with neither may be skipped)
   */
  record(seq: number, votes: readonly Signed<MemberVote>[], decided?: readonly MembershipDecision[]): MembershipOutcome[]
  snapshot(): MembershipSnapshot
}

/** the first checkpoint boundary at least L after `seq`: the group changes after it */
export const activationBoundary = (seq: number): number => K * Math.ceil((seq + L) / K)

/**
 * The change a vote asks for. Add votes for one id that carry different certificates are
 * different changes: all the members must vote for the same host name and key.
 */
export const changeOf = (vote: MemberVote): string =>
  vote.cert === undefined
    ? `${vote.action}/${vote.target}`
    : `${vote.action}/${vote.target}/${plainHex(sha256(new TextEncoder().encode(vote.cert))).slice(0, 32)}`

/** `from`: a snapshot taken earlier (the blocks after its height are then recorded again) */
export function createMembership(initial: readonly number[], from?: MembershipSnapshot, options: MembershipOptions = {}): Membership {
  const epochs: Epoch[] = from?.epochs.map((epoch) => ({ from: epoch.from, members: [...epoch.members] })) ?? [
    { from: 1, members: [...initial].sort((a, b) => a - b) },
  ]
  const everMember = new Set(from?.known ?? initial)
  /** "delete/<id>" or "add/<id>" → voters whose votes are ordered */
  const pending = new Map<string, Set<number>>((from?.pending ?? []).map(([change, voters]) => [change, new Set(voters)]))
  /** the vote asks for something still to do: remove a member, or add one that is not */
  const open = (vote: Pick<MemberVote, 'action' | 'target'>): boolean => (vote.action === 'delete') === latest().includes(vote.target)
  let recordedTo = from?.height ?? 0
  const certs = new Map<number, string>(from?.certs ?? [])

  const at = (seq: number): readonly number[] => {
    for (let i = epochs.length - 1; i > 0; i--) if (seq >= epochs[i].from) return epochs[i].members
    return epochs[0].members
  }
  const latest = (): readonly number[] => epochs[epochs.length - 1].members

  return {
    at,
    latest,
    known: (id) => everMember.has(id),
    certOf: (id) => certs.get(id),
    epochs: () => epochs,
    height: () => recordedTo,
    settled(vote) {
      if (!open(vote)) return true
      return pending.get(changeOf(vote))?.has(vote.from) === true
    },
    record(seq, votes, decided = []) {
      if (seq <= recordedTo) return []
      recordedTo = seq
      const outcomes: MembershipOutcome[] = []
      /** schedules a change at the boundary after `seq`, or says why it cannot be */
      const schedule = (action: 'delete' | 'add', target: number, cert: string | undefined, byProposal: boolean): void => {
        const by = byProposal ? { byProposal: true as const } : {}
        const next = action === 'add' ? [...latest(), target].sort((a, b) => a - b) : latest().filter((member) => member !== target)
        if (next.length < MIN_VPS) {
          outcomes.push({ kind: 'refused', action, target, decidedAt: seq, reason: `the group would drop below ${MIN_VPS} VPs`, ...by })
          return
        }
        const boundary = activationBoundary(seq)
        const last = epochs[epochs.length - 1]
        if (last.from === boundary + 1) last.members = next
        else epochs.push({ from: boundary + 1, members: next })
        // its signatures are checked from now on (it signs nothing before it is a member)
        everMember.add(target)
        if (action === 'add' && cert !== undefined) certs.set(target, cert)
        // votes for the same change still waiting are moot now
        for (const change of [...pending.keys()])
          if (change === `${action}/${target}` || change.startsWith(`${action}/${target}/`)) pending.delete(change)
        outcomes.push({ kind: 'scheduled', action, target, decidedAt: seq, from: boundary + 1, members: next, ...by })
      }
      for (const decision of decided) {
        if (!open(decision)) {
          outcomes.push({
            kind: 'refused',
            action: decision.action,
            target: decision.target,
            decidedAt: seq,
            reason: decision.action === 'add' ? 'it is a member already' : 'it is no member',
            byProposal: true,
          })
          continue
        }
        schedule(decision.action, decision.target, decision.cert, true)
      }
      for (const { from, body } of votes) {
        const current = at(seq)
        // a vote counts only from a member, and only for a change still to do
        if (!current.includes(from) || !open(body)) continue
        const refusal = body.action === 'add' ? options.admit?.(body) : undefined
        if (refusal !== undefined) {
          outcomes.push({
            kind: 'refused',
            action: body.action,
            target: body.target,
            decidedAt: seq,
            reason: `vote of ${from}: ${refusal}`,
          })
          continue
        }
        const change = changeOf(body)
        const voters = pending.get(change) ?? new Set<number>()
        voters.add(from)
        pending.set(change, voters)
        if (!current.every((member) => voters.has(member))) continue
        pending.delete(change)
        schedule(body.action, body.target, body.cert, false)
      }
      return outcomes
    },
    snapshot: () => ({
      height: recordedTo,
      epochs: epochs.map((epoch) => ({ from: epoch.from, members: [...epoch.members] })),
      pending: [...pending].map(([target, voters]) => [target, [...voters].sort((a, b) => a - b)]),
      known: [...everMember].sort((a, b) => a - b),
      certs: [...certs].sort(([a], [b]) => a - b),
    }),
  }
}
