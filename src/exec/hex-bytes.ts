/**
 * Hex ↔ bytes on the EVM's hot path (every SLOAD's value, every SSTORE's, every call's calldata).
 * @ethereumjs/util's hexToBytes tests the string with a regular expression, strips the prefix into
 * a new string and pads it; these decode in one pass over the characters, and the payload decoder
 * is also the validity check (the executor used to run a regular expression first, then decode).
 */
import type { Hex } from '../domain.ts'
import { paddedHex } from '../wire/hex.ts'
import { hexDigit } from '../wire/hex-digits.ts'

/** `0x` + whole bytes of hex (either case) → the bytes; undefined for anything else (odd length, a non-hex digit, no prefix). */
export function hexToBytesChecked(hex: string): Uint8Array | undefined {
  if (hex.length < 2 || hex.charCodeAt(0) !== 48 || hex.charCodeAt(1) !== 120 || hex.length % 2 !== 0) return undefined
  const out = new Uint8Array((hex.length - 2) >> 1)
  for (let i = 0, c = 2; i < out.length; i++, c += 2) {
    const high = hexDigit(hex.charCodeAt(c))
    const low = hexDigit(hex.charCodeAt(c + 1))
    if (high < 0 || low < 0) return undefined
    out[i] = (high << 4) | low
  }
  return out
}

/** bytes (at most 32) → the 32-byte word they are left-padded to, as lower-case `0x` hex */
export function wordHex(bytes: Uint8Array): Hex {
  if (bytes.length > 32) throw new RangeError(`a storage word has at most 32 bytes, got ${bytes.length}`)
  return paddedHex(bytes, 32)
}
