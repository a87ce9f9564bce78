/**
 * The consensus messages among VPs, their canonical signing bytes and their wire codec.
 *
 * Every message is signed by its sender (consensus.md §10.1): the ones that serve as proofs
 * (prepares and commits inside certificates, checkpoints, view changes) can then be carried by
 * anyone and checked by everyone, and a NewView carries the view changes it was built from
 * (§10.4). The wire form is msgpack (wire/binary.ts, bigints kept); decoding checks every
 * field's type and size and throws on anything else, so a malformed or unknown message never
 * reaches the state machine (§10.7). What a replica signs, and a batch's digest, stay the
 * canonical JSON below whatever the wire form: signatures and digests in stored proofs and
 * consensus records must keep verifying.
 */
import { sha256 } from '@noble/hashes/sha2.js'
import type { Hex } from '../../domain.ts'
import { pack, unpack } from '../../wire/binary.ts'
import { bytesToHex } from '../../wire/hex.ts'
import { stringifyJson } from '../../wire/json.ts'

export type { Hex }

export interface PrePrepare {
  type: 'pre-prepare'
  view: number
  seq: number
  /** block time, ns (0: a null slot filled by a view change; the block then takes its parent's time + 1) */
  timestamp: bigint
  txHashes: Hex[]
  /** membership votes ordered with this batch (membership.ts); absent when none, so such batches encode as before */
  votes?: Signed<MemberVote>[]
  digest: Hex
}
/** a VP's vote to change the group, signed by the voter; it counts once ordered inside a batch */
export interface MemberVote {
  type: 'member-vote'
  action: 'delete' | 'add'
  /** the replica id the vote is about */
  target: number
  /**
   * add only: the new VP's ECert (base64 DER). It binds the id to a host name and a key that every
   * node replaying the chain checks against the namespace CA (membership.ts `admit`); it is signed
   * with the vote and covered by the batch digest. Absent on delete votes and on votes of old proofs.
   */
  cert?: string
}
export interface Prepare {
  type: 'prepare'
  view: number
  seq: number
  digest: Hex
}
export interface Commit {
  type: 'commit'
  view: number
  seq: number
  digest: Hex
}
export interface Checkpoint {
  type: 'checkpoint'
  seq: number
  blockHash: Hex
}
/** a stable checkpoint and its proof: quorum signed matching checkpoints (none for seq 0, the genesis) */
export interface StableProof {
  seq: number
  blockHash: Hex
  proof: Signed<Checkpoint>[]
}
/** a batch prepared in some view: its pre-prepare and quorum−1 prepares of other replicas */
export interface PreparedCert {
  prePrepare: Signed<PrePrepare>
  prepares: Signed<Prepare>[]
}
export interface ViewChange {
  type: 'view-change'
  /** the view asked for */
  view: number
  stable: StableProof
  prepared: PreparedCert[]
}
export interface NewView {
  type: 'new-view'
  view: number
  viewChanges: Signed<ViewChange>[]
  prePrepares: Signed<PrePrepare>[]
}
/** an idle primary says it is alive; `seq` is the last sequence number it assigned */
export interface Heartbeat {
  type: 'heartbeat'
  view: number
  seq: number
}
/**
 * The sender lacks the receiver's messages for slot (view, seq) (lost on the way, or dropped while
 * it recovered): the receiver sends again its own pre-prepare, prepare and commit of that slot, the
 * very messages it signed then, which the sender checks like any other (issue 6).
 */
export interface SlotRequest {
  type: 'slot-request'
  view: number
  seq: number
}
/** a (re)starting replica asks where the others are */
export interface StatusRequest {
  type: 'status-request'
  nonce: string
}
export interface Status {
  type: 'status'
  nonce: string
  view: number
  /** the sender is changing view (its `view` is the one it asks for) */
  changing: boolean
  stable: StableProof
  /** the sender's chain height and its last block's hash: a hint (blocks fetched are each checked by their commit proof) */
  height: number
  heightHash: Hex
}

export type Body =
  | MemberVote
  | PrePrepare
  | Prepare
  | Commit
  | Checkpoint
  | ViewChange
  | NewView
  | Heartbeat
  | SlotRequest
  | StatusRequest
  | Status

export interface Signed<T extends Body = Body> {
  body: T
  /** sender replica id */
  from: number
  /** hex signature over signingBytes(from, body) */
  sig: string
}

/** What the sender signs: the sender id and the body, canonically. */
export function signingBytes(from: number, body: Body): Uint8Array {
  return new TextEncoder().encode(stringifyJson([from, canonical(body)]))
}

/** The same value with object keys in sorted order, so the bytes do not depend on construction order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) out[key] = canonical((value as Record<string, unknown>)[key])
    return out
  }
  return value
}

/**
 * Digest of a batch: SHA-256 over (seq, timestamp, tx hashes), so none can be swapped (§10.6),
 * and over its membership votes when it carries any (a batch without keeps its old digest).
 */
export function batchDigest(seq: number, timestamp: bigint, txHashes: readonly Hex[], votes?: readonly Signed<MemberVote>[]): Hex {
  const fields: unknown[] = [seq, timestamp, txHashes]
  if (votes !== undefined && votes.length > 0) fields.push(votes.map(canonical))
  return bytesToHex(sha256(new TextEncoder().encode(stringifyJson(fields))))
}

export function encodeMessage(message: Signed): Uint8Array {
  return pack(message)
}

// ---- decoding: every field checked ----

export class MessageError extends Error {
  override name = 'MessageError'
}

/** most transactions a batch may name */
export const MAX_BATCH_TXS = 2000
/** most membership votes one batch may carry */
export const MAX_BATCH_VOTES = 64
/** most certificates or messages one view change or new view may carry */
const MAX_ITEMS = 1000
const HASH = /^0x[0-9a-f]{64}$/
/** an ECert in base64 DER: a P-256 node certificate is well under 1 KiB */
const CERT = /^[A-Za-z0-9+/]{16,5000}={0,2}$/
const SIG = /^[0-9a-f]{2,512}$/

type Obj = Record<string, unknown>

const fail = (what: string): never => {
  throw new MessageError(what)
}
const obj = (v: unknown, what: string): Obj =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : fail(`${what} is not an object`)
const int = (v: unknown, what: string): number =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fail(`${what} is not a non-negative integer`)
const hash = (v: unknown, what: string): Hex => (typeof v === 'string' && HASH.test(v) ? (v as Hex) : fail(`${what} is not a 32-byte hash`))
const list = (v: unknown, max: number, what: string): unknown[] =>
  Array.isArray(v) && v.length <= max ? v : fail(`${what} is not a list of at most ${max}`)
const big = (v: unknown, what: string): bigint => {
  const n = typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : v
  return typeof n === 'bigint' && n >= 0n ? n : fail(`${what} is not a non-negative integer`)
}

function signed<T extends Body>(v: unknown, what: string, body: (b: Obj) => T): Signed<T> {
  const o = obj(v, what)
  const sig = typeof o.sig === 'string' && SIG.test(o.sig) ? o.sig : fail(`${what}.sig is not hex`)
  return { from: int(o.from, `${what}.from`), sig, body: body(obj(o.body, `${what}.body`)) }
}

const ofType = (b: Obj, type: string, what: string): void => {
  if (b.type !== type) fail(`${what} is not a ${type}`)
}

function memberVote(b: Obj): MemberVote {
  ofType(b, 'member-vote', 'body')
  if (b.action !== 'delete' && b.action !== 'add') fail('action is not "delete" or "add"')
  const vote: MemberVote = { type: 'member-vote', action: b.action as MemberVote['action'], target: int(b.target, 'target') }
  if (b.cert !== undefined) {
    if (b.action !== 'add') fail('only an add vote carries a certificate')
    vote.cert =
      typeof b.cert === 'string' && CERT.test(b.cert) ? b.cert : fail('cert is not a base64 certificate of at most 5000 characters')
  }
  return vote
}
function prePrepare(b: Obj): PrePrepare {
  ofType(b, 'pre-prepare', 'body')
  const body: PrePrepare = {
    type: 'pre-prepare',
    view: int(b.view, 'view'),
    seq: int(b.seq, 'seq'),
    timestamp: big(b.timestamp, 'timestamp'),
    txHashes: list(b.txHashes, MAX_BATCH_TXS, 'txHashes').map((h, i) => hash(h, `txHashes[${i}]`)),
    digest: hash(b.digest, 'digest'),
  }
  if (b.votes !== undefined) body.votes = list(b.votes, MAX_BATCH_VOTES, 'votes').map((v, i) => signed(v, `votes[${i}]`, memberVote))
  return body
}
function vote<T extends 'prepare' | 'commit'>(type: T) {
  return (b: Obj): { type: T; view: number; seq: number; digest: Hex } => {
    ofType(b, type, 'body')
    return { type, view: int(b.view, 'view'), seq: int(b.seq, 'seq'), digest: hash(b.digest, 'digest') }
  }
}
function checkpoint(b: Obj): Checkpoint {
  ofType(b, 'checkpoint', 'body')
  return { type: 'checkpoint', seq: int(b.seq, 'seq'), blockHash: hash(b.blockHash, 'blockHash') }
}
function stableProof(v: unknown): StableProof {
  const o = obj(v, 'stable')
  return {
    seq: int(o.seq, 'stable.seq'),
    blockHash: hash(o.blockHash, 'stable.blockHash'),
    proof: list(o.proof, MAX_ITEMS, 'stable.proof').map((c, i) => signed(c, `stable.proof[${i}]`, checkpoint)),
  }
}
function viewChange(b: Obj): ViewChange {
  ofType(b, 'view-change', 'body')
  return {
    type: 'view-change',
    view: int(b.view, 'view'),
    stable: stableProof(b.stable),
    prepared: list(b.prepared, MAX_ITEMS, 'prepared').map((c, i) => {
      const cert = obj(c, `prepared[${i}]`)
      return {
        prePrepare: signed(cert.prePrepare, `prepared[${i}].prePrepare`, prePrepare),
        prepares: list(cert.prepares, MAX_ITEMS, `prepared[${i}].prepares`).map((p, k) =>
          signed(p, `prepared[${i}].prepares[${k}]`, vote('prepare')),
        ),
      }
    }),
  }
}

const bodies: Record<string, (b: Obj) => Body> = {
  'member-vote': memberVote,
  'pre-prepare': prePrepare,
  prepare: vote('prepare'),
  commit: vote('commit'),
  checkpoint,
  'view-change': viewChange,
  'new-view': (b) => {
    ofType(b, 'new-view', 'body')
    return {
      type: 'new-view',
      view: int(b.view, 'view'),
      viewChanges: list(b.viewChanges, MAX_ITEMS, 'viewChanges').map((v, i) => signed(v, `viewChanges[${i}]`, viewChange)),
      prePrepares: list(b.prePrepares, MAX_ITEMS, 'prePrepares').map((p, i) => signed(p, `prePrepares[${i}]`, prePrepare)),
    }
  },
  heartbeat: (b) => ({ type: 'heartbeat', view: int(b.view, 'view'), seq: int(b.seq, 'seq') }),
  'slot-request': (b) => ({ type: 'slot-request', view: int(b.view, 'view'), seq: int(b.seq, 'seq') }),
  'status-request': (b) => ({
    type: 'status-request',
    nonce: typeof b.nonce === 'string' && b.nonce.length <= 64 ? b.nonce : fail('nonce is not a short string'),
  }),
  status: (b) => ({
    type: 'status',
    nonce: typeof b.nonce === 'string' && b.nonce.length <= 64 ? b.nonce : fail('nonce is not a short string'),
    view: int(b.view, 'view'),
    changing: typeof b.changing === 'boolean' ? b.changing : fail('changing is not a boolean'),
    stable: stableProof(b.stable),
    height: int(b.height, 'height'),
    heightHash: hash(b.heightHash, 'heightHash'),
  }),
}

/** A message off the wire; throws MessageError on anything but a well-formed message of a known type. */
export function decodeMessage(bytes: Uint8Array): Signed {
  let value: unknown
  try {
    value = unpack(bytes, 'a consensus message')
  } catch (error) {
    throw new MessageError((error as Error).message)
  }
  return checkMessage(value)
}

/** A decoded value checked as a message: decodeMessage without the wire form (a block proof holds messages). */
export function checkMessage(value: unknown): Signed {
  const type = obj(obj(value, 'message').body, 'body').type
  const decode = typeof type === 'string' && Object.hasOwn(bodies, type) ? bodies[type] : undefined
  if (decode === undefined) throw new MessageError(`unknown message type ${String(type).slice(0, 32)}`)
  return signed(value, 'message', decode)
}
