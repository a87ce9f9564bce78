/**
 * Accounts and transaction signatures as Hyperchain clients make them (docs/protocol.md §1.1,
 * docs/sdk-wire.md §4.2):
 * - secp256k1: Keccak-256 of the UTF-8 sign string, RFC 6979, hex `00 ‖ r ‖ s ‖ v`;
 * - SM2 (SM3, default ID): hex `01 ‖ public key (65 bytes) ‖ DER(r, s)`.
 * Hex without `0x`, as the official JS SDK puts it on the wire; the node takes either.
 *
 * ```ts
 * const account = accountFromPrivateKey(privateKey)          // or accountFromPrivateKey(key, 'sm2')
 * const signature = account.sign('from=0x…&to=0x…&…')
 * ```
 */
import { bytesToHex, concatBytes, hexToBytes, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { keccak256 } from './keccak.ts'
import { type RecoverableSignature, secp256k1Address, secp256k1PublicKey, secp256k1Sign } from './secp256k1.ts'
import { sm2Address, sm2PublicKey, sm2Sign } from './sm2.ts'

/** The first byte of a signature: which scheme made it. */
export const SIGNATURE_FLAG = { secp256k1: 0x00, sm2: 0x01 } as const

export type SignatureScheme = keyof typeof SIGNATURE_FLAG

/** A private key: 32 bytes, or their hex (`0x` optional). */
export type PrivateKey = string | Uint8Array

/** Signs sign strings for one address. */
export interface Account {
  /** `0x` + 40 lower-case hex digits */
  readonly address: string
  readonly scheme: SignatureScheme
  /** the signature of a sign string, as a transaction's `signature` carries it (hex, no `0x`) */
  sign(signString: string): string
}

export interface Secp256k1SignOptions {
  /** canonical low-s (default); `false` reproduces the official JS SDK byte for byte */
  lowS?: boolean
  /** signs the digest (the node's tools pass the native libsecp256k1 signer); @noble/curves by default */
  signDigest?(digest: Uint8Array, privateKey: Uint8Array, options: { lowS?: boolean }): RecoverableSignature
  /** Keccak-256 (the node's tools pass the native one) */
  keccak256?(data: Uint8Array): Uint8Array
}

export function privateKeyBytes(privateKey: PrivateKey): Uint8Array {
  if (typeof privateKey !== 'string') return privateKey
  const digits = privateKey.startsWith('0x') || privateKey.startsWith('0X') ? privateKey.slice(2) : privateKey
  if (!/^[0-9a-fA-F]{64}$/.test(digits)) throw new Error('a private key is 32 bytes: 64 hex digits, 0x optional')
  return hexToBytes(digits)
}

function messageBytes(message: string | Uint8Array): Uint8Array {
  return typeof message === 'string' ? utf8ToBytes(message) : message
}

/** Signs a sign string with secp256k1: hex `00‖r‖s‖v` without `0x`. */
export function signSecp256k1(message: string | Uint8Array, privateKey: PrivateKey, options: Secp256k1SignOptions = {}): string {
  const hash = options.keccak256 ?? keccak256
  const signDigest = options.signDigest ?? secp256k1Sign
  const { r, s, recovery } = signDigest(hash(messageBytes(message)), privateKeyBytes(privateKey), { lowS: options.lowS })
  return bytesToHex(concatBytes(Uint8Array.of(SIGNATURE_FLAG.secp256k1), r, s, Uint8Array.of(recovery)))
}

/** Signs a sign string with SM2 (random k unless given, tests only): hex `01‖pubkey‖DER` without `0x`. */
export function signSm2(message: string | Uint8Array, privateKey: PrivateKey, options: { k?: bigint } = {}): string {
  const key = privateKeyBytes(privateKey)
  const der = sm2Sign(key, messageBytes(message), options)
  return bytesToHex(concatBytes(Uint8Array.of(SIGNATURE_FLAG.sm2), sm2PublicKey(key), der))
}

/** The account address of a private key: `0x` + 40 lower-case hex digits. */
export function addressFromPrivateKey(privateKey: PrivateKey, scheme: SignatureScheme = 'secp256k1'): string {
  const key = privateKeyBytes(privateKey)
  return scheme === 'sm2' ? sm2Address(sm2PublicKey(key)) : secp256k1Address(secp256k1PublicKey(key))
}

/** An account that signs with `privateKey` (secp256k1 unless `scheme` says `sm2`). */
export function accountFromPrivateKey(privateKey: PrivateKey, scheme: SignatureScheme = 'secp256k1'): Account {
  const key = privateKeyBytes(privateKey)
  const address = addressFromPrivateKey(key, scheme)
  return {
    address,
    scheme,
    sign: scheme === 'sm2' ? (text) => signSm2(text, key) : (text) => signSecp256k1(text, key),
  }
}

/** A new random key and its account. Keep `privateKey` secret: it is the account. */
export function generateAccount(scheme: SignatureScheme = 'secp256k1'): Account & { privateKey: string } {
  for (;;) {
    const key = randomBytes(32)
    try {
      return { ...accountFromPrivateKey(key, scheme), privateKey: `0x${bytesToHex(key)}` }
    } catch {
      // 32 random bytes outside [1, n-2] (odds about 2^-128): draw again
    }
  }
}
