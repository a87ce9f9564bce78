/**
 * SM2 keys, addresses and signatures (GB/T 32918.2) with SM3 and the default user ID, as the
 * Hyperchain SDKs make them (docs/protocol.md §1.1, flag 0x01; docs/sdk-wire.md §4.2).
 *
 * Built on @noble/curves' generic Weierstrass arithmetic and node:crypto's SM3 (sm-crypto-v2's
 * pure-JS SM3 where Node.js was built without it). The node verifies with the same curve and
 * digest (src/crypto/sm2.ts), so both sides agree on every byte.
 */
import { createHash, getHashes } from 'node:crypto'
import { createRequire } from 'node:module'
import { DER, weierstrass } from '@noble/curves/abstract/weierstrass.js'
import { bytesToHex, concatBytes, hexToBytes, randomBytes } from '@noble/hashes/utils.js'
import { keccak256 } from './keccak.ts'

/** GB/T 32918.5 recommended curve parameters ("sm2p256v1"). */
const CURVE = {
  p: 0xfffffffeffffffffffffffffffffffffffffffff00000000ffffffffffffffffn,
  n: 0xfffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54123n,
  h: 1n,
  a: 0xfffffffeffffffffffffffffffffffffffffffff00000000fffffffffffffffcn,
  b: 0x28e9fa9e9d9f5e344d5a9e4bcf6509a7f39789f515ab8f92ddbcbd414d940e93n,
  Gx: 0x32c4ae2c1f1981195f9904466a39c9948fe30bbff2660be1715a4589334c74c7n,
  Gy: 0xbc3736a2f4f6779c59bdcee36b692153d0a9877cc62a474002df32e52139f0a0n,
} as const

/** The order of the curve's base point. */
export const SM2_N = CURVE.n
/** Points of the SM2 curve. */
export const Sm2Point = weierstrass(CURVE)
export type Sm2Point = InstanceType<typeof Sm2Point>

/** ENTL ‖ ID ‖ a ‖ b ‖ xG ‖ yG: the key-independent prefix of Z_A, with ID "1234567812345678" (ENTL = 128 bits). */
export const SM2_Z_PREFIX = concatBytes(
  hexToBytes('0080'),
  new TextEncoder().encode('1234567812345678'),
  int32(CURVE.a),
  int32(CURVE.b),
  int32(CURVE.Gx),
  int32(CURVE.Gy),
)

/**
 * SM3 digest. OpenSSL 3 (Node 20) ships SM3; a Node built without it falls back to sm-crypto-v2's
 * pure-JS SM3, which is several times slower but gives the same digest.
 */
export const sm3: (data: Uint8Array) => Uint8Array = getHashes().includes('sm3')
  ? (data) => new Uint8Array(createHash('sm3').update(data).digest())
  : sm3Fallback()

function sm3Fallback(): (data: Uint8Array) => Uint8Array {
  const { sm3: sm3Js } = createRequire(import.meta.url)('sm-crypto-v2') as { sm3(data: Uint8Array): string }
  return (data) => hexToBytes(sm3Js(data))
}

/** Z_A = SM3(ENTL ‖ ID ‖ a ‖ b ‖ xG ‖ yG ‖ xA ‖ yA) for a 65-byte uncompressed public key. */
export function sm2Z(publicKey: Uint8Array): Uint8Array {
  assertUncompressed(publicKey)
  return sm3(concatBytes(SM2_Z_PREFIX, publicKey.subarray(1)))
}

/** e = SM3(Z_A ‖ M), the value an SM2 signature signs. */
export function sm2Digest(publicKey: Uint8Array, message: Uint8Array): Uint8Array {
  return sm3(concatBytes(sm2Z(publicKey), message))
}

/** Address of an SM2 key: Keccak-256 of all 65 bytes, 0x04 included (unlike secp256k1), last 20 bytes. */
export function sm2Address(publicKey: Uint8Array): string {
  assertUncompressed(publicKey)
  return `0x${bytesToHex(keccak256(publicKey).subarray(12))}`
}

/** The 65-byte uncompressed public key (04 ‖ X ‖ Y) of a 32-byte private key. */
export function sm2PublicKey(privateKey: Uint8Array): Uint8Array {
  return Sm2Point.BASE.multiply(privateScalar(privateKey)).toBytes(false)
}

/**
 * Signs with SM2 and returns the DER signature. k is random unless given (tests only: a repeated k
 * leaks the private key).
 */
export function sm2Sign(privateKey: Uint8Array, message: Uint8Array, options: { k?: bigint } = {}): Uint8Array {
  const N = SM2_N
  const d = privateScalar(privateKey)
  const publicKey = Sm2Point.BASE.multiply(d).toBytes(false)
  const e = bytesToBigInt(sm2Digest(publicKey, message))
  const dPlus1Inverse = modInverse(d + 1n, N)
  for (;;) {
    const k = options.k ?? (bytesToBigInt(randomBytes(40)) % (N - 1n)) + 1n
    const x1 = Sm2Point.BASE.multiply(k).toAffine().x
    const r = (e + x1) % N
    if (r === 0n || r + k === N) {
      if (options.k !== undefined) throw new Error('SM2: the given k yields r = 0 or r + k = n')
      continue
    }
    const s = (dPlus1Inverse * mod(k - r * d, N)) % N
    if (s === 0n) {
      if (options.k !== undefined) throw new Error('SM2: the given k yields s = 0')
      continue
    }
    return hexToBytes(DER.hexFromSig({ r, s }))
  }
}

function privateScalar(privateKey: Uint8Array): bigint {
  const d = bytesToBigInt(privateKey)
  // d = n - 1 is excluded too: (1 + d) must be invertible.
  if (privateKey.length !== 32 || d <= 0n || d >= SM2_N - 1n) throw new Error('SM2 private key must be 32 bytes in [1, n-2]')
  return d
}

function assertUncompressed(publicKey: Uint8Array): void {
  if (publicKey.length !== 65 || publicKey[0] !== 0x04) throw new Error('SM2 public key must be 65 bytes 04‖X‖Y')
}

function int32(value: bigint): Uint8Array {
  return hexToBytes(value.toString(16).padStart(64, '0'))
}

/** Big-endian bytes as an unsigned integer. */
export function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${bytesToHex(bytes)}`)
}

function mod(a: bigint, m: bigint): bigint {
  const r = a % m
  return r < 0n ? r + m : r
}

function modInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m]
  let [oldS, s] = [1n, 0n]
  while (r !== 0n) {
    const q = oldR / r
    ;[oldR, r] = [r, oldR - q * r]
    ;[oldS, s] = [s, oldS - q * s]
  }
  if (oldR !== 1n) throw new Error('not invertible')
  return mod(oldS, m)
}
