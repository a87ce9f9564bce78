/** Hash helpers shared by the protocol code (protocol.md §2). */
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { keccak256 as portableKeccak256 } from '../../sdk/src/keccak.ts'
import { plainHex } from '../wire/hex.ts'

/** The `keccak` package's native sponge (its addon's export; the package wraps it in a stream class). */
interface NativeKeccakState {
  initialize(rate: number, capacity: number): void
  absorb(data: Buffer | Uint8Array): void
  absorbLastFewBits(bits: number): void
  squeeze(length: number): Buffer
}

/**
 * Keccak-256 runs several times per transaction (sign string, address, tx hash), so the native
 * sponge of the `keccak` package (N-API prebuilds, 4x @noble/hashes on a 320-byte sign string,
 * perf-baseline.md) is used when its addon loads and answers a known vector; otherwise the client
 * package's @noble/hashes one (sdk/src/keccak.ts). The sponge is driven directly: the `keccak`
 * package's own wrapper is a Transform stream whose construction cost more than the hashing of a
 * transaction's fields.
 */
const NativeKeccak = ((): (new () => NativeKeccakState) | undefined => {
  try {
    const fromKeccak = createRequire(createRequire(import.meta.url).resolve('keccak/package.json'))
    const State = fromKeccak('node-gyp-build')(dirname(fromKeccak.resolve('keccak/package.json'))) as new () => NativeKeccakState
    const probe = plainHex(nativeDigest(State, Buffer.from('abc')))
    return probe === '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45' ? State : undefined
  } catch {
    return undefined
  }
})()

function nativeDigest(State: new () => NativeKeccakState, data: Buffer | Uint8Array): Buffer {
  const state = new State()
  state.initialize(1088, 512) // Keccak-256: rate 1088 bits, capacity 512
  return digestWith(state, data)
}

/** Absorbs `data` into `state`, which initialize has just reset (it zeroes the whole sponge). */
function digestWith(state: NativeKeccakState, data: Buffer | Uint8Array): Buffer {
  state.absorb(data)
  state.absorbLastFewBits(0x01) // original Keccak padding, not SHA-3's 0x06
  return state.squeeze(32)
}

/** One sponge per thread, re-initialised per digest: constructing a wrapped native object costs more than reusing one. */
const sponge = NativeKeccak ? new NativeKeccak() : undefined

/** Keccak-256 (the original Keccak, not NIST SHA3-256) of bytes or UTF-8 text. */
export function keccak256(data: Uint8Array | string): Uint8Array {
  if (!sponge) return portableKeccak256(data)
  // The addon reads Buffers only, and its digest may be a slice of Node's shared 8 KiB pool: it is
  // copied into its own 32-byte Uint8Array, as @noble/hashes returns it (structured clone and
  // `.buffer` then see 32 bytes, not the pool).
  const input =
    typeof data === 'string'
      ? Buffer.from(data, 'utf8')
      : Buffer.isBuffer(data)
        ? data
        : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const out = new Uint8Array(32)
  sponge.initialize(1088, 512)
  out.set(digestWith(sponge, input))
  return out
}

/** Which Keccak implementation keccak256 uses in this thread. */
export function keccakBackendName(): 'native' | 'noble' {
  return NativeKeccak ? 'native' : 'noble'
}

/** Node hash: lower-case hex, no 0x, of Keccak-256(hostname + namespace) (protocol.md §2). */
export function nodeHash(hostname: string, namespace: string): string {
  return plainHex(keccak256(hostname + namespace))
}
