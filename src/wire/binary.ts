/**
 * The one msgpack (msgpackr) set-up behind every binary form Keel writes: admitted transactions
 * (tx-codec.ts, the pool log, request thread → chain thread), transactions relayed between VPs,
 * consensus messages, block proofs, consensus records and block-sync replies. Bigints stay bigints
 * and numbers stay numbers, so a signed params object comes back exactly; maps decode as plain
 * objects; no record extension, so every payload decodes on its own (a peer or a file written by
 * another process shares no structure table with the reader).
 *
 * A tagged form is one leading byte, then msgpack. The tag says what follows: a transaction's
 * signature check (tx-codec.ts), or BINARY_TAG where bytes on disk may still be JSON written by an
 * earlier version (block proofs, consensus records: JSON starts with `[` or `{`, never 0x01).
 */
import { Packr } from 'msgpackr'

const packr = new Packr({ useRecords: false, useBigIntExtension: true, mapsAsObjects: true } as ConstructorParameters<typeof Packr>[0])

/** the tag of a binary record where the same place may hold JSON from an earlier version */
export const BINARY_TAG = 0x01

export class BinaryDecodeError extends Error {
  override name = 'BinaryDecodeError'
}

export const pack = (value: unknown): Uint8Array => packr.pack(value)

/** `what` names the payload in the error a malformed one throws */
export function unpack(bytes: Uint8Array, what: string): unknown {
  try {
    return packr.unpack(bytes)
  } catch (error) {
    throw new BinaryDecodeError(`${what} is not msgpack: ${(error as Error).message}`)
  }
}

/** `tag` ‖ msgpack of `value` */
export function packTagged(tag: number, value: unknown): Uint8Array {
  return tagged(tag, packr.pack(value))
}

/** `tag` ‖ `body` */
export function tagged(tag: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.length + 1)
  out[0] = tag
  out.set(body, 1)
  return out
}

/** Whether `bytes` is packTagged(BINARY_TAG, …) rather than JSON an earlier version wrote. */
export const isBinary = (bytes: Uint8Array): boolean => bytes[0] === BINARY_TAG
