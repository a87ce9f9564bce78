/**
 * Bytes as `0x` hex, as one flat string.
 *
 * The usual way (`hex += table[byte]`, as @noble/hashes and @ethereumjs/util do it) leaves a chain
 * of V8 cons strings behind: a 32-byte word became ~26 heap objects of 32 bytes each instead of
 * one of ~80. Harmless for a string that dies at once, but a block's receipts, logs, return values
 * and state keys live until the block commits, and every young-generation GC on the way copies
 * and promotes each link of each chain (issue 27: measured in a heap snapshot taken mid-block, ~6
 * KB of cons strings per ERC-20 call). Here the digits are written into bytes and read back once.
 */
import type { Hex } from '../domain.ts'

/** each byte's two digits as one little-endian Uint16: the low byte is the high digit */
const DIGIT_PAIRS = new Uint16Array(256)
for (let i = 0; i < 256; i++) {
  const digits = i.toString(16).padStart(2, '0')
  DIGIT_PAIRS[i] = digits.charCodeAt(0) | (digits.charCodeAt(1) << 8)
}

/** the digits of small inputs are written here (words, hashes, addresses, calldata: the common case) */
const scratch = Buffer.allocUnsafeSlow(4096)

/** `bytes` as lower-case hex digits, after `0x` when `prefixed`, left-padded with zero bytes to `width` bytes */
function hexText(bytes: Uint8Array, prefixed: boolean, width: number): string {
  const start = prefixed ? 2 : 0
  const pad = Math.max(0, width - bytes.length)
  const length = start + 2 * (pad + bytes.length)
  const out = length <= scratch.length ? scratch : Buffer.allocUnsafe(length)
  if (prefixed) {
    out[0] = 0x30 // '0'
    out[1] = 0x78 // 'x'
  }
  out.fill(0x30, start, start + 2 * pad)
  for (let i = 0, at = start + 2 * pad; i < bytes.length; i++, at += 2) {
    const pair = DIGIT_PAIRS[bytes[i]]
    out[at] = pair & 0xff
    out[at + 1] = pair >> 8
  }
  return out.toString('latin1', 0, length)
}

/** `0x` followed by the lower-case hex of `bytes`, a flat string (one parameter: safe as a `map` callback) */
export const bytesToHex = (bytes: Uint8Array): Hex => hexText(bytes, true, 0) as Hex

/** the same, left-padded with zero bytes to `width` bytes (a storage word: width 32) */
export const paddedHex = (bytes: Uint8Array, width: number): Hex => hexText(bytes, true, width) as Hex

/** the lower-case hex of `bytes` without `0x`, a flat string */
export const plainHex = (bytes: Uint8Array): string => hexText(bytes, false, 0)
