/**
 * The binary form of an admitted transaction, made once where it is admitted and carried as is: in
 * the message from a request thread to the chain thread, in the pool log (src/store/pool-log.ts),
 * and since issue 27 inside the committed transaction's record too: the SignedTx in the record
 * codec's form (record-codec.ts: bigints kept as bigints and numbers as numbers, so the params
 * object the client signed comes back exactly; hashes as bytes), and the transaction decoded from
 * it remembers those bytes, so the block commit writes them again instead of encoding it anew.
 * Records of the plain msgpack form an earlier version wrote (binary.ts; a pool log left by it)
 * still decode. Decoding checks the shape, so bytes from another thread or a damaged log cannot
 * become a malformed record. (Peers get the signed params, never this record: each VP derives the
 * hash itself, network/tx-relay.ts.)
 *
 * An admitted transaction travels with its signature check when it has had one:
 * `[flag byte][msgpack]`, flag 0 not checked yet, 1 valid, 2 invalid.
 */
import type { SignedTx } from '../domain.ts'
import { BinaryDecodeError, tagged, unpack } from './binary.ts'
import { decodeRememberedRecord, encodeRecord, isRecordEncoding } from './record-codec.ts'

const KINDS = new Set(['transfer', 'deploy', 'invoke', 'maintain'])
const HEX = /^0x[0-9a-f]*$/

export class TxDecodeError extends Error {
  override name = 'TxDecodeError'
}

export function encodeTx(tx: SignedTx): Uint8Array {
  return encodeRecord(tx)
}

export function decodeTx(bytes: Uint8Array): SignedTx {
  if (isRecordEncoding(bytes)) {
    let value: unknown
    try {
      value = decodeRememberedRecord(bytes)
    } catch (error) {
      throw new TxDecodeError(`a transaction record is not readable: ${(error as Error).message}`)
    }
    return checkedTx(value)
  }
  let value: unknown
  try {
    value = unpack(bytes, 'a transaction record')
  } catch (error) {
    throw error instanceof BinaryDecodeError ? new TxDecodeError(error.message) : error
  }
  return checkedTx(value)
}

/** A checked transaction's bytes with its signature check: undefined (not checked yet), true or false. */
export function encodeAdmitted(tx: SignedTx, signatureValid: boolean | undefined): Uint8Array {
  return tagged(signatureValid === undefined ? 0 : signatureValid ? 1 : 2, encodeTx(tx))
}

/** The same from a transaction's encodeTx bytes (a request thread has them already: it sent them to be verified). */
export function admittedRecord(encoded: Uint8Array, signatureValid: boolean): Uint8Array {
  return tagged(signatureValid ? 1 : 2, encoded)
}

export function decodeAdmitted(bytes: Uint8Array): { tx: SignedTx; signatureValid: boolean | undefined } {
  if (bytes.length < 2 || bytes[0] > 2) throw new TxDecodeError('not an admitted transaction record')
  return { tx: decodeTx(bytes.subarray(1)), signatureValid: bytes[0] === 0 ? undefined : bytes[0] === 1 }
}

const isHex = (value: unknown, bytes?: number): value is string =>
  typeof value === 'string' && HEX.test(value) && (bytes === undefined || value.length === 2 + 2 * bytes)
const isInteger = (value: unknown): value is bigint => typeof value === 'bigint'

function checkedTx(value: unknown): SignedTx {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TxDecodeError('a transaction record is a map')
  const tx = value as Record<string, unknown>
  const problem = !isHex(tx.hash, 32)
    ? 'hash'
    : typeof tx.kind !== 'string' || !KINDS.has(tx.kind)
      ? 'kind'
      : !isHex(tx.from, 20)
        ? 'from'
        : !(tx.to === null || isHex(tx.to, 20))
          ? 'to'
          : !isInteger(tx.value)
            ? 'value'
            : !isHex(tx.payload)
              ? 'payload'
              : !isInteger(tx.timestamp)
                ? 'timestamp'
                : !isInteger(tx.nonce)
                  ? 'nonce'
                  : typeof tx.extra !== 'string'
                    ? 'extra'
                    : typeof tx.opcode !== 'number'
                      ? 'opcode'
                      : tx.vmType !== 'EVM' && tx.vmType !== 'JVM' && tx.vmType !== 'BVM'
                        ? 'vmType'
                        : !isHex(tx.signature)
                          ? 'signature'
                          : !isHex(tx.signHash, 32)
                            ? 'signHash'
                            : typeof tx.simulate !== 'boolean'
                              ? 'simulate'
                              : tx.signed === null || typeof tx.signed !== 'object' || Array.isArray(tx.signed)
                                ? 'signed'
                                : undefined
  if (problem !== undefined) throw new TxDecodeError(`a transaction record with a malformed ${problem}`)
  return tx as unknown as SignedTx
}
