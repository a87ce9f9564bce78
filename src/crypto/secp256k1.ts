/**
 * secp256k1 public-key recovery and signing over 32-byte Keccak digests.
 *
 * Recovery is the hottest CPU path of the node (ARCHITECTURE.md decision 3). The native
 * libsecp256k1 binding (`secp256k1` on npm, N-API prebuilds) recovers ~22k keys/s per core against
 * ~1k/s for @noble/curves (perf-baseline.md), so it is used whenever its addon loads; @noble/curves
 * is the fallback for platforms without a prebuild. The choice is made once, at module load.
 * `KEEL_SECP256K1=noble` forces the fallback (tests use it to cover both paths).
 */
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { secp256k1 as noble } from '@noble/curves/secp256k1.js'
import {
  secp256k1Address as addressOfKey,
  secp256k1Sign as nobleSign,
  type RecoverableSignature,
  secp256k1PublicKey,
} from '../../sdk/src/secp256k1.ts'
import { bytesToHex, plainHex } from '../wire/hex.ts'
import { keccak256 } from './hash.ts'

export { type RecoverableSignature, secp256k1PublicKey }

export type Secp256k1BackendName = 'native' | 'noble'

export interface Secp256k1Backend {
  name: Secp256k1BackendName
  /** 65-byte uncompressed public key, or undefined when (r, s, recovery) recovers no key. */
  recover(digest: Uint8Array, r: Uint8Array, s: Uint8Array, recovery: number): Uint8Array | undefined
}

/** The subset of the `secp256k1` package's API used here (it ships no types). */
interface NativeSecp256k1 {
  ecdsaRecover(signature: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number }
}

/**
 * The package's addon under its argument-checking wrapper: recovery into a caller's 65-byte
 * output (its length says uncompressed), answering 0 when a key was recovered (1: r or s do not
 * parse, 2: no key). It checks the lengths of the signature and digest itself.
 */
interface NativeSecp256k1Addon {
  ecdsaRecover(output: Uint8Array, signature: Uint8Array, recid: number, msg32: Uint8Array): number
}

const N = noble.Point.CURVE().n

const nobleBackend: Secp256k1Backend = {
  name: 'noble',
  recover(digest, r, s, recovery) {
    try {
      const signature = new noble.Signature(bytesToBigInt(r), bytesToBigInt(s), recovery)
      return signature.recoverPublicKey(digest).toBytes(false)
    } catch {
      return undefined
    }
  },
}

function loadNative(): { backend: Secp256k1Backend; addon: NativeSecp256k1 } | undefined {
  if (process.env.KEEL_SECP256K1 === 'noble') return undefined
  try {
    // `secp256k1/bindings` loads only the addon; the package's main entry would silently fall back
    // to its own slow pure-JS (elliptic) code instead of failing.
    const fromPackage = createRequire(import.meta.url)
    const addon = fromPackage('secp256k1/bindings') as NativeSecp256k1
    // Verification calls the addon directly, skipping the wrapper's checks of what it checks anyway.
    const fromSecp256k1 = createRequire(fromPackage.resolve('secp256k1/package.json'))
    const { Secp256k1 } = fromSecp256k1('node-gyp-build')(dirname(fromSecp256k1.resolve('secp256k1/package.json'))) as {
      Secp256k1: new () => NativeSecp256k1Addon
    }
    const raw = new Secp256k1()
    const signature = new Uint8Array(64)
    const scratch = new Uint8Array(64)
    const backend: Secp256k1Backend = {
      name: 'native',
      recover(digest, r, s, recovery) {
        // libsecp256k1 rejects r or s >= n, zero values and points not on the curve (a non-zero answer)
        if (r.length !== 32 || s.length !== 32 || digest.length !== 32 || !(recovery >= 0 && recovery <= 3)) return undefined
        signature.set(r, 0)
        signature.set(s, 32)
        const publicKey = new Uint8Array(65)
        return raw.ecdsaRecover(publicKey, signature, recovery, digest) === 0 ? publicKey : undefined
      },
    }
    // Smoke test: a binding that loads but misbehaves must not become the verifier.
    scratch.fill(1)
    const probe = addon.ecdsaSign(scratch.subarray(0, 32), scratch.subarray(32))
    const recovered = backend.recover(scratch.subarray(0, 32), probe.signature.subarray(0, 32), probe.signature.subarray(32), probe.recid)
    const expected = noble.getPublicKey(scratch.subarray(32), false)
    if (!recovered || plainHex(recovered) !== plainHex(expected)) return undefined
    return { backend, addon }
  } catch {
    return undefined
  }
}

const native = loadNative()

/** The recovery backend chosen at module load. */
export const secp256k1: Secp256k1Backend = native?.backend ?? nobleBackend

/** Which secp256k1 implementation verifies signatures in this thread. */
export function secp256k1BackendName(): Secp256k1BackendName {
  return secp256k1.name
}

/** Both backends, for tests and benchmarks that compare them. */
export function secp256k1Backends(): Secp256k1Backend[] {
  return native ? [native.backend, nobleBackend] : [nobleBackend]
}

/** Address of a secp256k1 key (sdk/src/secp256k1.ts), hashed with the node's Keccak. */
export function secp256k1Address(publicKey: Uint8Array): string {
  return addressOfKey(publicKey, keccak256)
}

/**
 * Deterministic (RFC 6979) signature of a 32-byte digest as r‖s and the recovery id, as the client
 * package's secp256k1Sign makes it; low-s (the default) uses the native signer when available
 * (same RFC 6979 nonce, so the same r). Tools and load generators sign with it.
 */
export function secp256k1Sign(digest: Uint8Array, privateKey: Uint8Array, options: { lowS?: boolean } = {}): RecoverableSignature {
  if ((options.lowS ?? true) && native) {
    const { signature, recid } = native.addon.ecdsaSign(digest, privateKey)
    return { r: signature.slice(0, 32), s: signature.slice(32, 64), recovery: recid }
  }
  return nobleSign(digest, privateKey, options)
}

/** n − s with the recovery id's parity flipped: the other valid signature for the same (r, key). */
export function secp256k1Malleate(s: Uint8Array, recovery: number): { s: Uint8Array; recovery: number } {
  const flipped = (N - bytesToBigInt(s)) % N
  return { s: bigIntTo32(flipped), recovery: recovery ^ 1 }
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(bytesToHex(bytes))
}

function bigIntTo32(value: bigint): Uint8Array {
  const hex = value.toString(16).padStart(64, '0')
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}
