/** Hash helpers shared by the protocol code (protocol.md §2). */
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

/** Keccak-256 (the original Keccak, not NIST SHA3-256) of bytes or UTF-8 text. */
export function keccak256(data: Uint8Array | string): Uint8Array {
  return keccak_256(typeof data === 'string' ? utf8ToBytes(data) : data)
}

/** Node hash: lower-case hex, no 0x, of Keccak-256(hostname + namespace) (protocol.md §2). */
export function nodeHash(hostname: string, namespace: string): string {
  return bytesToHex(keccak256(hostname + namespace))
}
