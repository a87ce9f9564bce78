/**
 * Transaction signatures: parsing the `signature` parameter and verifying it against `from`
 * (protocol.md §1.1–§1.2, sdk-wire.md §4.2–§4.4). Signing lives in the client package
 * (sdk/src/account.ts); the helpers tests and tools use are re-exported here.
 *
 * Layouts, told apart by length and first byte:
 * - `00 ‖ r ‖ s ‖ v` (66 bytes): secp256k1 over Keccak-256, public key recovered, v = 0..3;
 * - `r ‖ s ‖ v` (65 bytes): the same without the flag, as printed in the 2017 manual (a 1.4 node
 *   rejects it; Keel accepts it so the manual's examples work);
 * - `01 ‖ pubkey(65) ‖ DER(r, s)`: SM2 with SM3 and the default ID.
 * Other flags (DID 0x81/0x86, aggregate 0x07/0x87, ED25519, R1) are rejected.
 *
 * High-s secp256k1 signatures are accepted on purpose: the JS SDK does not normalise s, so about
 * half of real signatures are high-s (sdk-wire.md §4.2). The malleability this allows (s → n − s
 * gives a second valid signature and a second tx hash) is handled by duplicate detection on
 * (from, sign hash), not here (ARCHITECTURE.md decision 4).
 */
import { utf8ToBytes } from '@noble/hashes/utils.js'
import {
  type PrivateKey,
  type Secp256k1SignOptions,
  SIGNATURE_FLAG,
  type SignatureScheme,
  signSecp256k1 as signWith,
} from '../../sdk/src/account.ts'
import { keccak256 } from './hash.ts'
import { secp256k1, secp256k1Address, secp256k1Sign } from './secp256k1.ts'
import { coverageRefusal } from './sign-coverage.ts'
import { eachSignStringCandidateOf, type SignStringKind, type SignStringOptions, type TxFields } from './sign-string.ts'
import { sm2Address, sm2VerifyAny } from './sm2.ts'

export { addressFromPrivateKey, signSm2 } from '../../sdk/src/account.ts'
export type { SignatureScheme }

export type ParsedSignature =
  | { scheme: 'secp256k1'; layout: 'flagged' | 'legacy'; r: Uint8Array; s: Uint8Array; recovery: number }
  | { scheme: 'sm2'; publicKey: Uint8Array; der: Uint8Array }

/** A signature that cannot be parsed; the message says why (for logs, never for the wire). */
export class SignatureFormatError extends Error {
  override name = 'SignatureFormatError'
}

const SECP256K1_FLAG = SIGNATURE_FLAG.secp256k1
const SM2_FLAG = SIGNATURE_FLAG.sm2

/**
 * Hex to bytes, `0x` optional, as the 2017 node decodes it (common.FromHex: an odd number of
 * digits gets a leading 0). The tx hash covers exactly these bytes.
 */
export function decodeSignatureHex(signatureHex: string): Uint8Array {
  let digits = signatureHex.startsWith('0x') || signatureHex.startsWith('0X') ? signatureHex.slice(2) : signatureHex
  if (!/^[0-9a-fA-F]*$/.test(digits)) throw new SignatureFormatError('signature is not hex')
  if (digits.length % 2 === 1) digits = `0${digits}`
  // Node's decoder reads every digit pair of checked hex exactly; copied out of Buffer's shared pool
  return new Uint8Array(Buffer.from(digits, 'hex'))
}

export function parseSignature(signature: string | Uint8Array): ParsedSignature {
  const bytes = typeof signature === 'string' ? decodeSignatureHex(signature) : signature
  if (bytes.length < 65) throw new SignatureFormatError(`signature too short: ${bytes.length} bytes`)
  if (bytes.length === 65) return secp256k1Parts(bytes, 0, 'legacy')
  const flag = bytes[0]
  if (flag === SECP256K1_FLAG) {
    if (bytes.length !== 66) throw new SignatureFormatError(`secp256k1 signature must be 66 bytes, got ${bytes.length}`)
    return secp256k1Parts(bytes, 1, 'flagged')
  }
  if (flag === SM2_FLAG) {
    // a DER SEQUENCE of two INTEGERs takes at least 8 bytes
    if (bytes.length < 66 + 8) throw new SignatureFormatError(`SM2 signature too short: ${bytes.length} bytes`)
    const publicKey = bytes.slice(1, 66)
    if (publicKey[0] !== 0x04) throw new SignatureFormatError('SM2 public key must be uncompressed (04‖X‖Y)')
    return { scheme: 'sm2', publicKey, der: bytes.slice(66) }
  }
  throw new SignatureFormatError(`unsupported signature flag 0x${flag.toString(16).padStart(2, '0')}`)
}

function secp256k1Parts(bytes: Uint8Array, offset: number, layout: 'flagged' | 'legacy'): ParsedSignature {
  const recovery = bytes[offset + 64]
  // The 2017 node takes v as a raw recovery id; Ethereum's 27/28 are not accepted (protocol.md §1.1).
  if (recovery > 3) throw new SignatureFormatError(`recovery id must be 0..3, got ${recovery}`)
  return { scheme: 'secp256k1', layout, r: bytes.slice(offset, offset + 32), s: bytes.slice(offset + 32, offset + 64), recovery }
}

export interface SignatureCheck {
  valid: boolean
  scheme?: SignatureScheme
  /** the sign string the signature matched */
  signString?: string
  /** which one it is */
  signedWith?: SignStringKind
  /**
   * valid, but over a sign string that leaves out a field the transaction carries: the -32602
   * message that refuses it (sign-coverage.ts)
   */
  uncovered?: string
  /** why it is invalid (logs only) */
  reason?: string
}

/** A valid check of `tx` under `kind`, with the refusal when that sign string leaves out a field it carries. */
function matched(tx: TxFields, scheme: SignatureScheme, text: string, kind: SignStringKind, options: SignStringOptions): SignatureCheck {
  const uncovered = coverageRefusal(tx, kind, options.nodeVersion)
  return { valid: true, scheme, signString: text, signedWith: kind, ...(uncovered === undefined ? {} : { uncovered }) }
}

/**
 * Checks `signature` against `tx.from` over every candidate sign string (sign-string.ts) and says
 * which one matched. Never throws: malformed input is an invalid signature.
 */
export function checkTransactionSignature(tx: TxFields, signature: string | Uint8Array, options: SignStringOptions = {}): SignatureCheck {
  let parsed: ParsedSignature
  let from: string
  try {
    parsed = parseSignature(signature)
    from = normaliseAddress(tx.from)
  } catch (error) {
    return { valid: false, reason: (error as Error).message }
  }
  try {
    if (parsed.scheme === 'sm2') {
      // The address check is cheap and comes first, as in the 2017 node.
      if (sm2Address(parsed.publicKey) !== from) return { valid: false, scheme: 'sm2', reason: 'SM2 public key does not belong to from' }
      // SM2 verifies all candidates at the cost of one (see sm2VerifyAny), so build them all.
      const candidates = [...eachSignStringCandidateOf(tx, options)]
      const index = sm2VerifyAny(
        parsed.publicKey,
        parsed.der,
        candidates.map((candidate) => utf8ToBytes(candidate.text)),
      )
      return index < 0
        ? { valid: false, scheme: 'sm2', reason: 'SM2 signature matches no sign string' }
        : matched(tx, 'sm2', candidates[index].text, candidates[index].kind, options)
    }
    for (const candidate of eachSignStringCandidateOf(tx, options)) {
      const publicKey = secp256k1.recover(keccak256(candidate.text), parsed.r, parsed.s, parsed.recovery)
      if (publicKey && secp256k1Address(publicKey) === from) return matched(tx, 'secp256k1', candidate.text, candidate.kind, options)
    }
  } catch (error) {
    return { valid: false, scheme: parsed.scheme, reason: (error as Error).message }
  }
  return { valid: false, scheme: 'secp256k1', reason: 'signature recovers no key matching from over any sign string' }
}

/**
 * True when `signature` was made by `tx.from` over any candidate sign string. (It says nothing of
 * fields that sign string leaves out: see signatureVerdict.)
 */
export function verifyTransactionSignature(tx: TxFields, signature: string | Uint8Array, options: SignStringOptions = {}): boolean {
  return checkTransactionSignature(tx, signature, options).valid
}

/** What a verifier answers per transaction: 0 invalid, 1 valid, 2 valid over a sign string that leaves out a field the transaction carries. */
export const SignatureVerdict = { invalid: 0, valid: 1, uncovered: 2 } as const
export type SignatureVerdictCode = (typeof SignatureVerdict)[keyof typeof SignatureVerdict]

export function signatureVerdict(tx: TxFields, signature: string | Uint8Array, options: SignStringOptions = {}): SignatureVerdictCode {
  const check = checkTransactionSignature(tx, signature, options)
  if (!check.valid) return SignatureVerdict.invalid
  return check.uncovered === undefined ? SignatureVerdict.valid : SignatureVerdict.uncovered
}

/** `0x` + 40 lower-case hex digits; throws on anything else. */
export function normaliseAddress(address: string): string {
  const digits = address.startsWith('0x') || address.startsWith('0X') ? address.slice(2) : address
  if (!/^[0-9a-fA-F]{40}$/.test(digits)) throw new SignatureFormatError(`from is not a 20-byte address: ${JSON.stringify(address)}`)
  return `0x${digits.toLowerCase()}`
}

/**
 * Signs a sign string with secp256k1 as the client package does (sdk/src/account.ts), with the
 * node's native signer and Keccak where they load: tools and load generators sign fast.
 */
export function signSecp256k1(
  message: string | Uint8Array,
  privateKey: PrivateKey,
  options: Pick<Secp256k1SignOptions, 'lowS'> = {},
): string {
  return signWith(message, privateKey, { lowS: options.lowS, signDigest: secp256k1Sign, keccak256 })
}

export { secp256k1BackendName } from './secp256k1.ts'
