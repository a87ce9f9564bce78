/**
 * A block's log bloom: 2048 bits over the addresses and topics of its logs, three bits per item
 * taken from Keccak-256 of the item's bytes (Ethereum's construction). It is kept in the block's
 * header record so sub_getLogs reads the receipts only of blocks that may hold a match: a range of
 * blocks without matching logs costs one header read per block instead of one read per
 * transaction, which keeps a 5000-block query of full blocks from stalling the event loop.
 * A block without logs stores an empty bloom; a header without one (written before blooms
 * existed) is always scanned.
 */
import { hexToBytes } from '@noble/hashes/utils.js'
import type { Hex, Log } from '../domain.ts'
import { keccak256 } from './hash.ts'

export const BLOOM_BYTES = 256

/** [byte index, mask] of the three bits of one item */
function bitsOf(item: Hex): [number, number][] {
  const hash = keccak256(hexToBytes(item.slice(2).toLowerCase()))
  const bits: [number, number][] = []
  for (let i = 0; i < 6; i += 2) {
    const bit = ((hash[i] << 8) | hash[i + 1]) & 2047
    bits.push([BLOOM_BYTES - 1 - (bit >> 3), 1 << (bit & 7)])
  }
  return bits
}

/** The bloom of a block's logs; empty (zero bytes) when there are none. */
export function logsBloom(logs: readonly Pick<Log, 'address' | 'topics'>[]): Uint8Array {
  if (logs.length === 0) return new Uint8Array(0)
  const bloom = new Uint8Array(BLOOM_BYTES)
  for (const log of logs) {
    for (const item of [log.address, ...log.topics]) for (const [index, mask] of bitsOf(item)) bloom[index] |= mask
  }
  return bloom
}

/** The union of two blooms (the empty bloom is the identity). */
export function orBloom(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b
  if (b.length === 0) return a
  const out = new Uint8Array(BLOOM_BYTES)
  for (let i = 0; i < BLOOM_BYTES; i++) out[i] = a[i] | b[i]
  return out
}

/**
 * A test of a bloom against the criteria's addresses and topics (block bounds are the caller's):
 * false means no log of the block can match; true means it may.
 */
export function bloomQuery(criteria: {
  addresses?: ReadonlySet<string>
  topics?: readonly (ReadonlySet<string> | undefined)[]
}): (bloom: Uint8Array) => boolean {
  const alternatives: [number, number][][][] = []
  if (criteria.addresses !== undefined && criteria.addresses.size > 0)
    alternatives.push([...criteria.addresses].map((a) => bitsOf(a as Hex)))
  for (const accepted of criteria.topics ?? [])
    if (accepted !== undefined && accepted.size > 0) alternatives.push([...accepted].map((t) => bitsOf(t as Hex)))
  const has = (bloom: Uint8Array, bits: [number, number][]): boolean => bits.every(([index, mask]) => (bloom[index] & mask) !== 0)
  return (bloom) => bloom.length > 0 && alternatives.every((anyOf) => anyOf.some((bits) => has(bloom, bits)))
}
