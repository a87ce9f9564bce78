/**
 * The world-state root (the block's merkleRoot, protocol.md §2).
 *
 * Choice: a homomorphic multiset hash, LtHash16 (Bellare–Micciancio's additive hash with the
 * parameters of Lewi et al., "Securing Update Propagation with Homomorphic Hashing", 2019):
 * every state entry (kind, key, value) maps to SHAKE-256(kind ‖ key ‖ value) read as 1024
 * little-endian 16-bit lanes; the state's lane vector is the lane-wise sum mod 2^16 over all
 * entries; root = Keccak-256 of the vector's 2048 bytes (little-endian lanes).
 *
 * Why, rather than Hyperchain's bucket tree or a Merkle Patricia trie:
 * - the root depends only on the set of entries (addition commutes), never on insertion order,
 *   block boundaries or history, so every node reaches the same root from the same state;
 * - a block costs O(changed entries): subtract the old entry's vector, add the new one; a delete
 *   is a subtraction, so deleting returns exactly to the earlier root;
 * - the only extra data kept is the 2 KiB vector (meta 'lanes'), written in the block's own LMDB
 *   transaction; no tree nodes, no random writes.
 * Cost of the choice: no inclusion proofs (nothing in the JSON-RPC surface serves state proofs),
 * and the root is not Hyperchain's bucket-tree value (no client can recompute that anyway: it
 * depends on the node's whole state). Kind bytes and fixed key widths per kind (state-codec.ts)
 * make kind ‖ key ‖ value unambiguous, so no two distinct entries hash the same input.
 *
 * Measured with node:crypto's native SHAKE-256 (OpenSSL): ~12 µs per entry hash, so a changed
 * entry costs ~25 µs (old out, new in); @noble/hashes' JS SHAKE is 7x slower.
 */
import { createHash } from 'node:crypto'
import { endianness } from 'node:os'
import { keccak256 } from '../crypto/hash.ts'
import type { Hex } from '../domain.ts'
import { packFrames, unpackFrames } from '../wire/frames.ts'
import { bytesToHex } from './codec.ts'
import type { EntryKindValue } from './state-codec.ts'

export const LANE_COUNT = 1024
export const LANE_BYTES = LANE_COUNT * 2

let hashedEntries = 0

/** How many entry hashes this process has computed (tests assert per-block cost with it). */
export function hashedEntryCount(): number {
  return hashedEntries
}

function entryDigest(kind: EntryKindValue, key: Uint8Array, value: Uint8Array): Buffer {
  hashedEntries++
  return createHash('shake256', { outputLength: LANE_BYTES }).update(Uint8Array.of(kind)).update(key).update(value).digest()
}

const LITTLE_ENDIAN_HOST = endianness() === 'LE'

/** The digest as 1024 little-endian lanes: a view when the host is little-endian (no copy), else decoded. */
function digestLanes(kind: EntryKindValue, key: Uint8Array, value: Uint8Array): Uint16Array {
  const d = entryDigest(kind, key, value)
  if (LITTLE_ENDIAN_HOST && d.byteOffset % 2 === 0) return new Uint16Array(d.buffer, d.byteOffset, LANE_COUNT)
  const lanes = new Uint16Array(LANE_COUNT)
  for (let i = 0; i < LANE_COUNT; i++) lanes[i] = d[i * 2] | (d[i * 2 + 1] << 8)
  return lanes
}

/** lanes += H(kind ‖ key ‖ value), lane-wise mod 2^16 (Uint16Array wraps). */
export function addEntry(lanes: Uint16Array, kind: EntryKindValue, key: Uint8Array, value: Uint8Array): void {
  const v = digestLanes(kind, key, value)
  for (let i = 0; i < LANE_COUNT; i++) lanes[i] += v[i]
}

/** lanes -= H(kind ‖ key ‖ value). */
export function removeEntry(lanes: Uint16Array, kind: EntryKindValue, key: Uint8Array, value: Uint8Array): void {
  const v = digestLanes(kind, key, value)
  for (let i = 0; i < LANE_COUNT; i++) lanes[i] -= v[i]
}

export function emptyLanes(): Uint16Array {
  return new Uint16Array(LANE_COUNT)
}

/** One entry's change: its bytes before (undefined = absent) and after (undefined = deleted). */
export interface LaneChange {
  kind: EntryKindValue
  key: Uint8Array
  old: Uint8Array | undefined
  next: Uint8Array | undefined
}

/**
 * Σ H(new entries) − Σ H(old entries): what the changes add to any state's lanes (addition mod
 * 2^16 commutes, so the same vector serves whichever state they apply to). The costly part of a
 * block's root, so it can run on a worker thread (state-hasher.ts).
 */
export function changeLanes(changes: readonly LaneChange[]): Uint16Array {
  const lanes = emptyLanes()
  for (const change of changes) {
    if (change.old !== undefined) removeEntry(lanes, change.kind, change.key, change.old)
    if (change.next !== undefined) addEntry(lanes, change.kind, change.key, change.next)
  }
  return lanes
}

/**
 * The changes as one buffer for the hashing worker (wire/frames.ts: kind, key, old, next per
 * change). Posting the LaneChange objects cost ~40 µs per transfer on the chain thread: structured
 * clone copied each small Uint8Array's whole backing buffer.
 */
export function packLaneChanges(changes: readonly LaneChange[]): Uint8Array {
  return packFrames(changes.flatMap((change) => [Uint8Array.of(change.kind), change.key, change.old, change.next]))
}

/** packLaneChanges read back; the entries are views into `packed`. */
export function unpackLaneChanges(packed: Uint8Array): LaneChange[] {
  const frames = unpackFrames(packed)
  const changes: LaneChange[] = []
  for (let i = 0; i + 3 < frames.length; i += 4) {
    const [kind, key, old, next] = frames.slice(i, i + 4)
    if (kind === undefined || key === undefined) throw new RangeError('state lanes: a change without kind or key')
    changes.push({ kind: kind[0] as EntryKindValue, key, old, next })
  }
  return changes
}

/** a + b, lane-wise mod 2^16, as a new vector. */
export function addLanes(a: Uint16Array, b: Uint16Array): Uint16Array {
  const sum = a.slice()
  for (let i = 0; i < LANE_COUNT; i++) sum[i] += b[i]
  return sum
}

/** Little-endian bytes of the lanes, whatever the host's byte order. */
export function lanesToBytes(lanes: Uint16Array): Buffer {
  if (LITTLE_ENDIAN_HOST) return Buffer.from(lanes.buffer.slice(lanes.byteOffset, lanes.byteOffset + LANE_BYTES))
  const out = Buffer.alloc(LANE_BYTES)
  for (let i = 0; i < LANE_COUNT; i++) out.writeUInt16LE(lanes[i], i * 2)
  return out
}

export function lanesFromBytes(bytes: Uint8Array): Uint16Array {
  if (bytes.length !== LANE_BYTES) throw new Error(`state lanes: expected ${LANE_BYTES} bytes, got ${bytes.length}`)
  const lanes = new Uint16Array(LANE_COUNT)
  for (let i = 0; i < LANE_COUNT; i++) lanes[i] = bytes[i * 2] | (bytes[i * 2 + 1] << 8)
  return lanes
}

/** Keccak-256 of the lanes' 2 KiB, with the native Keccak when it loads (noble's took 8% of a block's CPU). */
export function lanesRoot(lanes: Uint16Array): Hex {
  return bytesToHex(keccak256(lanesToBytes(lanes)))
}

/** The root of the empty state (no accounts, code, storage or contracts). */
export const EMPTY_STATE_ROOT: Hex = lanesRoot(emptyLanes())
