/** Keccak-256, the original Keccak (not NIST SHA3-256): addresses, sign hashes, ABI selectors and event topics. */
import { keccak_256 } from '@noble/hashes/sha3.js'
import { utf8ToBytes } from '@noble/hashes/utils.js'

/** Keccak-256 of bytes or of UTF-8 text. */
export function keccak256(data: Uint8Array | string): Uint8Array {
  return keccak_256(typeof data === 'string' ? utf8ToBytes(data) : data)
}
