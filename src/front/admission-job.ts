/**
 * A submission's admission, run on the verify workers beside its signature check (verify-pool.ts
 * JobModule): decoding and hashing (chain/admission.ts), the signature verdict, and the encoded
 * record the chain thread logs. The request thread then only parses, checks the params' schema,
 * and answers; it was the node's busiest thread, and these two Keccak hashes, the sign strings
 * and the msgpack encoding were a third of its work per transfer.
 *
 * Request, per item: msgpack `[kind, params]`; the batch's data: `{ nowNs }`, the request thread's
 * clock when the batch left (the time window is the request thread's, as before). Answer, per
 * item: `0 ‖ tx hash (32 bytes) ‖ record` (wire/tx-codec.ts admittedRecord), or `1 ‖ msgpack
 * [code, message]`: the refusal the request thread throws.
 */
import { admitTransaction } from '../chain/admission.ts'
import type { TxFields } from '../crypto/sign-string.ts'
import { checkTransactionSignature } from '../crypto/signature.ts'
import type { JobHandler } from '../crypto/verify-pool.ts'
import type { Hex, TxKind } from '../domain.ts'
import { InvalidParams, RpcError } from '../errors.ts'
import { pack, unpack } from '../wire/binary.ts'
import { bytesToHex } from '../wire/hex.ts'
import { admittedRecord, encodeTx } from '../wire/tx-codec.ts'

export const ADMIT_JOB = 'admit'

const ADMITTED = 0
const REFUSED = 1

/** a refusal whose code is not a client's error: the request thread logs it as unexpected */
const UNEXPECTED = 0

export type AdmissionAnswer = { hash: Hex; record: Uint8Array } | { refusal: RpcError } | { unexpected: Error }

/** One request's bytes. */
export function admissionRequest(kind: TxKind, params: object): Uint8Array {
  return pack([kind, params])
}

/**
 * A submission decoded, hashed, its signature checked and its record encoded, in this thread: a
 * request thread's quiet turn (front/submitter.ts `BURST`) or one with no verify worker to send it
 * to; throws the refusal. The workers' job below runs the same.
 */
export function admitHere(
  kind: TxKind,
  params: Record<string, unknown>,
  nowNs: bigint,
  nodeVersion: string | undefined,
): { hash: Hex; record: Uint8Array } {
  const tx = admitTransaction(kind, params, { nowNs: () => nowNs })
  const check = checkTransactionSignature(tx.signed as unknown as TxFields, tx.signature, { nodeVersion })
  if (check.valid && check.uncovered !== undefined) throw new InvalidParams(check.uncovered)
  return { hash: tx.hash, record: admittedRecord(encodeTx(tx), check.valid) }
}

function admitOne(request: Uint8Array, nowNs: bigint, nodeVersion: string | undefined): Uint8Array {
  try {
    const [kind, params] = unpack(request, 'an admission request') as [TxKind, Record<string, unknown>]
    const { hash, record } = admitHere(kind, params, nowNs, nodeVersion)
    const answer = new Uint8Array(1 + 32 + record.length)
    answer[0] = ADMITTED
    answer.set(Buffer.from(hash.slice(2), 'hex'), 1)
    answer.set(record, 33)
    return answer
  } catch (error) {
    const refusal = error instanceof RpcError ? [error.code, error.message] : [UNEXPECTED, (error as Error)?.stack ?? String(error)]
    const body = pack(refusal)
    const answer = new Uint8Array(1 + body.length)
    answer[0] = REFUSED
    answer.set(body, 1)
    return answer
  }
}

const admit: JobHandler = (items, data, { nodeVersion }) => {
  const { nowNs } = data as { nowNs: bigint }
  return items.map((request) => admitOne(request, nowNs, nodeVersion))
}

/** the verify workers' table of this module's jobs (verify-pool.ts JobModule) */
export const jobs: Readonly<Record<string, JobHandler>> = { [ADMIT_JOB]: admit }

/** An answer's bytes read back. */
export function admissionAnswer(bytes: Uint8Array): AdmissionAnswer {
  if (bytes[0] === ADMITTED && bytes.length > 33) {
    return { hash: bytesToHex(bytes.subarray(1, 33)), record: bytes.subarray(33) }
  }
  if (bytes[0] === REFUSED) {
    const [code, message] = unpack(bytes.subarray(1), 'an admission refusal') as [number, string]
    if (code === UNEXPECTED) return { unexpected: Object.assign(new Error('admission failed on a verify worker'), { stack: message }) }
    return { refusal: new RpcError(code, message) }
  }
  return { unexpected: new Error(`an admission answer of ${bytes.length} bytes is neither admitted nor refused`) }
}
