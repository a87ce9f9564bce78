/** Byte-level helpers for keys: hex <-> bytes, fixed-width keys, order-preserving time keys. */
import type { Hex } from '../domain.ts'
import { bytesToHex } from '../wire/hex.ts'

export { ZERO_HASH } from '../domain.ts'
export const EMPTY = Buffer.alloc(0)

const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})*$/

/** Bytes of a `0x` hex byte string; throws a TypeError naming `what` when it is not one. */
export function hexToBytes(hex: Hex, what: string): Buffer {
  if (typeof hex !== 'string' || !HEX_BYTES.test(hex)) throw new TypeError(`${what}: not a 0x hex byte string: ${preview(hex)}`)
  return Buffer.from(hex.slice(2), 'hex')
}

/** Exactly `size` bytes from a `0x` hex string, or a TypeError. */
export function fixedBytes(hex: Hex, size: number, what: string): Buffer {
  const bytes = hexToBytes(hex, what)
  if (bytes.length !== size) throw new TypeError(`${what}: expected ${size} bytes, got ${bytes.length}: ${preview(hex)}`)
  return bytes
}

/** Exactly `size` bytes, or undefined for anything malformed (reads answer "not found" rather than throw). */
export function tryFixedBytes(hex: Hex, size: number): Buffer | undefined {
  if (typeof hex !== 'string' || hex.length !== 2 + size * 2 || !HEX_BYTES.test(hex)) return undefined
  return Buffer.from(hex.slice(2), 'hex')
}

/** Up to 32 bytes, left-padded with zeros to 32 (storage slots and values: `0x1` style short forms are the same word). */
export function word32(hex: Hex, what: string): Buffer {
  const bytes = hexToBytes(hex, what)
  if (bytes.length > 32) throw new TypeError(`${what}: more than 32 bytes: ${preview(hex)}`)
  if (bytes.length === 32) return bytes
  const padded = Buffer.alloc(32)
  bytes.copy(padded, 32 - bytes.length)
  return padded
}

export { bytesToHex }

/** Split a packed run of fixed-size records into hex strings. */
export function unpackHex(packed: Uint8Array | undefined, size: number): Hex[] {
  if (packed === undefined) return []
  const out: Hex[] = []
  for (let at = 0; at + size <= packed.length; at += size) out.push(bytesToHex(packed.subarray(at, at + size)))
  return out
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** int64 ns -> 8 bytes whose unsigned byte order is numeric order (sign bit flipped). Throws outside int64. */
export function time64(ns: bigint, what: string): Buffer {
  if (typeof ns !== 'bigint' || ns < INT64_MIN || ns > INT64_MAX) throw new TypeError(`${what}: not an int64 bigint: ${String(ns)}`)
  const out = Buffer.alloc(8)
  out.writeBigUInt64BE(ns - INT64_MIN)
  return out
}

/** Clamp a query bound into int64 so range scans accept any bigint. */
export function clampTime(ns: bigint): bigint {
  return ns < INT64_MIN ? INT64_MIN : ns > INT64_MAX ? INT64_MAX : ns
}

export function u32be(n: number): Buffer {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(n)
  return out
}

function preview(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value)
  return text.length > 80 ? `${text.slice(0, 80)}…` : text
}

/** a block number that fits the u32 keys of the block keyspaces */
export function isBlockNumber(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= 0xffffffff
}
