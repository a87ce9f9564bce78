/**
 * Block proofs: what a VP keeps with each block (keyspace 24's proof bytes) and block sync carries,
 * so that any node can check a block's commit certificate and record the membership votes its
 * batch ordered (vp.ts, nvp.ts).
 */
import type { Commit, MemberVote, Signed } from '../consensus/bft/messages.ts'
import { checkMessage } from '../consensus/bft/messages.ts'
import type { BlockBatch } from '../store/index.ts'
import { BINARY_TAG, isBinary, packTagged, unpack } from '../wire/binary.ts'
import { parseJson } from '../wire/json.ts'

/**
 * The proof kept with a block (keyspace 24's proof bytes) and carried by block sync: the commit
 * certificate and the membership votes its batch ordered (the votes are part of the batch, its
 * digest covers them, and every node that replays the block records them, membership.ts). Written
 * as wire/binary.ts's tagged msgpack of `[commits]`, or `[commits, votes]` when the batch ordered
 * votes. Blocks stored by an earlier version hold JSON — a bare list of commits, or
 * `{commits, votes}` — and a data directory keeps them (block sync serves them as stored), so both
 * are read.
 */
export const encodeProof = (certificate: readonly Signed<Commit>[], votes: readonly Signed<MemberVote>[] = []): Uint8Array =>
  packTagged(BINARY_TAG, votes.length === 0 ? [certificate] : [certificate, votes])

/** the certificate and votes of a proof; throws on a malformed one */
export function decodeProof(proof: Uint8Array): { commits: Signed<Commit>[]; votes: Signed<MemberVote>[] } {
  let commits: unknown
  let votes: unknown = []
  if (isBinary(proof)) {
    const parsed = unpack(proof.subarray(1), 'a block proof')
    if (!Array.isArray(parsed) || parsed.length < 1 || parsed.length > 2) throw new Error('a block proof is [commits] or [commits, votes]')
    ;[commits, votes = []] = parsed
  } else {
    const parsed = parseJson(Buffer.from(proof).toString('utf8'), { maxDepth: 16 }) as unknown
    if (Array.isArray(parsed)) commits = parsed
    else ({ commits, votes } = (parsed ?? {}) as { commits?: unknown; votes?: unknown })
  }
  if (!Array.isArray(commits) || !Array.isArray(votes)) throw new Error('a block proof is a list of commits, and of votes')
  const decode = <T>(items: unknown[], type: string): T[] =>
    items.map((item) => {
      const message = checkMessage(item)
      if (message.body.type !== type) throw new Error(`a block proof holds a ${message.body.type} among its ${type}s`)
      return message as T
    })
  return { commits: decode<Signed<Commit>>(commits, 'commit'), votes: decode<Signed<MemberVote>>(votes, 'member-vote') }
}

/** msgpack's tag of a one-item list: a binary proof `[commits]`, which carries no votes */
const FIXARRAY_1 = 0x91

/** the membership votes a block's batch ordered (none when its proof cannot be read: it was checked when stored) */
export function votesOf(batch: Pick<BlockBatch, 'proof'> | undefined): Signed<MemberVote>[] {
  // a proof without votes (binary [commits]; JSON's bare list) is not decoded: the common case
  if (batch === undefined) return []
  const proof = batch.proof
  if (isBinary(proof) ? proof[1] === FIXARRAY_1 : proof[0] !== 0x7b) return []
  try {
    return decodeProof(proof).votes
  } catch {
    return []
  }
}
