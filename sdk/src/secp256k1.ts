/** secp256k1 keys, addresses and signatures over 32-byte Keccak digests (@noble/curves). */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { keccak256 } from './keccak.ts'

/** r ‖ s and the recovery id of an ECDSA signature. */
export interface RecoverableSignature {
  r: Uint8Array
  s: Uint8Array
  recovery: number
}

/** The 65-byte uncompressed public key (04 ‖ X ‖ Y) of a 32-byte private key. */
export function secp256k1PublicKey(privateKey: Uint8Array): Uint8Array {
  return secp256k1.getPublicKey(privateKey, false)
}

/**
 * Address of a secp256k1 key: Keccak-256 of X‖Y (the 0x04 prefix dropped), last 20 bytes, as
 * `0x` + 40 lower-case hex digits. `hash` lets the node use its native Keccak.
 */
export function secp256k1Address(publicKey: Uint8Array, hash: (data: Uint8Array) => Uint8Array = keccak256): string {
  if (publicKey.length !== 65 || publicKey[0] !== 0x04) throw new Error('secp256k1 public key must be 65 bytes 04‖X‖Y')
  return `0x${bytesToHex(hash(publicKey.subarray(1)).subarray(12))}`
}

/**
 * Deterministic (RFC 6979, HMAC-SHA256) signature of a 32-byte digest. `lowS: false` reproduces
 * the official JS SDK (elliptic without canonicalisation), which leaves s high about half the time;
 * the default is the canonical low-s form.
 */
export function secp256k1Sign(digest: Uint8Array, privateKey: Uint8Array, options: { lowS?: boolean } = {}): RecoverableSignature {
  const bytes = secp256k1.sign(digest, privateKey, { prehash: false, lowS: options.lowS ?? true, format: 'recovered' })
  return { r: bytes.slice(1, 33), s: bytes.slice(33, 65), recovery: bytes[0] }
}
