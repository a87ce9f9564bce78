/** Hash helpers shared by the protocol code (protocol.md §2). */
import { createRequire } from 'node:module'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

/** The subset of the `keccak` package's native binding used here (it ships no types). */
type NativeKeccakFactory = (algorithm: 'keccak256') => { update(data: Buffer | string): { digest(): Buffer } }

/**
 * Keccak-256 runs several times per transaction (sign string, address, tx hash), so the native
 * binding of the `keccak` package (N-API prebuilds, 4x @noble/hashes on a 320-byte sign string,
 * perf-baseline.md) is used when its addon loads and answers a known vector; @noble/hashes otherwise.
 */
const nativeKeccak = ((): NativeKeccakFactory | undefined => {
  try {
    const factory = createRequire(import.meta.url)('keccak/bindings') as NativeKeccakFactory
    const probe = bytesToHex(factory('keccak256').update(Buffer.from('abc')).digest())
    return probe === '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45' ? factory : undefined
  } catch {
    return undefined
  }
})()

/** Keccak-256 (the original Keccak, not NIST SHA3-256) of bytes or UTF-8 text. */
export function keccak256(data: Uint8Array | string): Uint8Array {
  if (!nativeKeccak) return keccak_256(typeof data === 'string' ? utf8ToBytes(data) : data)
  // The binding takes only Buffers or strings (UTF-8). It returns a Buffer that may be a slice of
  // Node's shared 8 KiB pool, so the digest is copied into its own 32-byte Uint8Array, as
  // @noble/hashes returns it (structured clone and `.buffer` then see 32 bytes, not the pool).
  const input = typeof data === 'string' || Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const out = new Uint8Array(32)
  out.set(nativeKeccak('keccak256').update(input).digest())
  return out
}

/** Which Keccak implementation keccak256 uses in this thread. */
export function keccakBackendName(): 'native' | 'noble' {
  return nativeKeccak ? 'native' : 'noble'
}

/** Node hash: lower-case hex, no 0x, of Keccak-256(hostname + namespace) (protocol.md §2). */
export function nodeHash(hostname: string, namespace: string): string {
  return bytesToHex(keccak256(hostname + namespace))
}
