/**
 * Operator methods (docs/governance.md "Operator methods"): the JSON-RPC methods that change the
 * node or the chain without being a signed transaction (openrpc.json `x-operator`: node_deleteVP,
 * node_deleteNVP, archive_snapshot, archive_deleteSnapshot, archive_archive, archive_restore,
 * archive_restoreAll) answer only a request signed by an administrator.
 *
 * The wire, in HTTP headers beside the body (the client side is sdk/src/operator.ts):
 * - `operator-timestamp`: decimal milliseconds since the Unix epoch, at most 5 minutes from the
 *   node's clock either way (tcert-check.ts MAX_CLOCK_SKEW_MS, checkTimestamp);
 * - `operator-signature`: hex (0x optional) of an account signature as a transaction carries one
 *   (secp256k1 `00‖r‖s‖v` over Keccak-256, SM2 `01‖pubkey‖DER` with SM3 and the default ID) over
 *   the bytes of `<operator-timestamp>\n` followed by the raw request body (tcert-check.ts
 *   signedBytes: the TCert check's layout, with the account key instead of a TCert's).
 *
 * Why headers and the raw body: the body is what names the method, its params and the namespace,
 * so signing its exact bytes binds all three with no canonical form to agree on; the official
 * SDK's `Request.addHeader` and keel-client's `headersFor` both carry headers, and the TCert check
 * already works this way. Names of their own (not `timestamp`/`signature`) because both checks may
 * be on at once, signing the same body with different keys. WebSocket messages carry no headers:
 * an operator method is accepted over HTTP only.
 *
 * Where the checks run: the transport (http.ts) verifies the signature and the time and recovers
 * the signer (readOperatorProof), because only it holds the body's bytes; the proof travels with
 * the call (CallContext.operator) to the handler, which runs on the chain thread (api/index.ts
 * isChainThreadMethod), where the guard (createOperatorGuard) asks whether the signer is an admin
 * and remembers what it accepted: the same signed call again within the window is refused, so a
 * captured request cannot be replayed on that node. The same signed body may be sent to each node
 * of the network (node_deleteVP is one vote per VP): each node accepts it once.
 *
 * Every refusal is -32008 INVALID_PERMISSION (the caller lacks the permission), with a message
 * naming what is missing.
 */
import { keccak256 } from '../crypto/hash.ts'
import { secp256k1, secp256k1Address } from '../crypto/secp256k1.ts'
import { parseSignature } from '../crypto/signature.ts'
import { sm2Address, sm2Verify } from '../crypto/sm2.ts'
import { InvalidPermission } from '../errors.ts'
import { stringifyJson } from '../wire/json.ts'
import type { CallContext, OperatorProof } from './context.ts'
import { checkTimestamp, type Headers, hexHeaderBytes, MAX_CLOCK_SKEW_MS, signedBytes } from './tcert-check.ts'

export const OPERATOR_TIMESTAMP_HEADER = 'operator-timestamp'
export const OPERATOR_SIGNATURE_HEADER = 'operator-signature'

const HOW_TO_SIGN =
  "sign the UTF-8 bytes of `<operator-timestamp>\\n` followed by the exact request body with an admin's account key, as a transaction is signed (secp256k1 00‖r‖s‖v or SM2 01‖pubkey‖DER), and send the hex in `operator-signature` (keel-client operatorSigner, or `keel operator`)"

function headerOf(headers: Headers, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** The address whose key made `signature` over `message`, or undefined when it verifies for none. */
export function signerOf(message: Uint8Array, signature: Uint8Array): string | undefined {
  try {
    const parsed = parseSignature(signature)
    if (parsed.scheme === 'sm2') return sm2Verify(parsed.publicKey, parsed.der, message) ? sm2Address(parsed.publicKey) : undefined
    const publicKey = secp256k1.recover(keccak256(message), parsed.r, parsed.s, parsed.recovery)
    return publicKey === undefined ? undefined : secp256k1Address(publicKey)
  } catch {
    return undefined
  }
}

/**
 * The proof a request's operator headers give for its body, or undefined when it sends neither
 * header (most requests: nothing is verified then).
 */
export function readOperatorProof(headers: Headers, body: Uint8Array, now: Date = new Date()): OperatorProof | undefined {
  const timestampHeader = headerOf(headers, OPERATOR_TIMESTAMP_HEADER)
  const signatureHeader = headerOf(headers, OPERATOR_SIGNATURE_HEADER)
  if (timestampHeader === undefined && signatureHeader === undefined) return undefined
  const timestamp = checkTimestamp(timestampHeader, now, OPERATOR_TIMESTAMP_HEADER)
  if ('refusal' in timestamp) return { refusal: timestamp.refusal }
  if (signatureHeader === undefined || signatureHeader.trim() === '')
    return { refusal: `missing HTTP header \`${OPERATOR_SIGNATURE_HEADER}\`; ${HOW_TO_SIGN}` }
  const signature = hexHeaderBytes(signatureHeader)
  if (signature === undefined) return { refusal: `header \`${OPERATOR_SIGNATURE_HEADER}\` is not hex bytes (0x optional)` }
  // a recoverable secp256k1 signature always yields some address: over another body, the wrong one
  const address = signerOf(signedBytes(timestampHeader as string, body), signature)
  if (address === undefined)
    return {
      refusal: `header \`${OPERATOR_SIGNATURE_HEADER}\` is no valid secp256k1 or SM2 signature over \`<operator-timestamp>\\n\` followed by the request body; ${HOW_TO_SIGN}`,
    }
  return { address, timestampMs: timestamp.ms, signature: signature.toString('hex') }
}

export interface OperatorGuardOptions {
  /** whether `address` (0x + 40 lower-case hex digits) is an administrator of the chain */
  isAdmin(address: string): boolean
  /** wall-clock milliseconds (the replay memory forgets a request once its timestamp is out of the window) */
  nowMs?: () => number
}

export interface OperatorGuard {
  /** `handler`, answering only calls an admin signed: others get -32008 and never reach it */
  guard<H extends (params: never, context: CallContext) => unknown>(handler: H): H
}

/**
 * The admin check and the replay memory of one node. Keep one per node, where the operator
 * methods run (the chain thread): a request thread's memory would let a replay through another.
 */
export function createOperatorGuard(options: OperatorGuardOptions): OperatorGuard {
  const nowMs = options.nowMs ?? Date.now
  /** calls accepted, by signature, method and params → when they leave the window (ms) */
  const accepted = new Map<string, number>()

  const authorise = (context: CallContext, params: unknown): void => {
    const proof = context.operator
    const what = `${context.method} is an operator method (it changes the node or the chain): only an administrator may call it`
    if (proof === undefined)
      throw new InvalidPermission(
        `${what}, over HTTP, with headers \`${OPERATOR_TIMESTAMP_HEADER}\` (decimal milliseconds since the Unix epoch) and \`${OPERATOR_SIGNATURE_HEADER}\`: ${HOW_TO_SIGN}`,
      )
    if ('refusal' in proof) throw new InvalidPermission(`${what}: ${proof.refusal}`)
    if (!options.isAdmin(proof.address))
      throw new InvalidPermission(
        `${what}, and ${proof.address}, whose key signed this request, is not one (account_getAccountsByRole ["admin"] lists them: the genesis admins and whoever PERMISSION proposals added)`,
      )
    const now = nowMs()
    for (const [key, until] of accepted) if (until < now) accepted.delete(key)
    const key = `${proof.signature} ${context.method} ${stringifyJson(params)}`
    if (accepted.has(key))
      throw new InvalidPermission(
        `${what}: this signed request was already accepted by this node; a signature authorises one call per node, so sign the request again (a new \`${OPERATOR_TIMESTAMP_HEADER}\`)`,
      )
    // a minute past the window: the transport's clock check ran a moment before this one
    accepted.set(key, proof.timestampMs + MAX_CLOCK_SKEW_MS + 60_000)
  }

  return {
    guard: <H extends (params: never, context: CallContext) => unknown>(handler: H): H =>
      ((params: never, context: CallContext) => {
        authorise(context, params)
        return handler(params, context)
      }) as H,
  }
}
