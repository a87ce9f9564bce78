/**
 * The client side of operator methods (docs/governance.md "Operator methods"): the HTTP headers
 * that prove an administrator's authority for node_deleteVP, node_deleteNVP and the archive_
 * methods that change the node (archive_snapshot, archive_deleteSnapshot, archive_archive,
 * archive_restore, archive_restoreAll).
 *
 * - `operator-timestamp`: the time of signing, decimal milliseconds since the Unix epoch (the node
 *   refuses one more than 5 minutes from its clock, either way);
 * - `operator-signature`: an account signature, made as a transaction's is (secp256k1: Keccak-256,
 *   hex `00‖r‖s‖v`; SM2: SM3 with the default ID, hex `01‖pubkey‖DER`), over the UTF-8 bytes of
 *   `<operator-timestamp>\n` followed by the exact request body.
 *
 * The node recovers the signer's address and accepts the call when it is an admin's; a signed
 * request is accepted once per node (a replay within the 5 minutes is refused).
 *
 * ```ts
 * const operator = operatorSigner(accountFromPrivateKey(adminKey))
 * const client = createClient({ transport: httpTransport(url, { headersFor: operator }) })
 * await client.request('node_deleteVP', [{ nodehash }])
 * ```
 * With the TCert check on too, send both sets: `headersFor: (body) => ({ ...tcert(body), ...operator(body) })`.
 */
import type { Account } from './account.ts'

export const OPERATOR_TIMESTAMP_HEADER = 'operator-timestamp'
export const OPERATOR_SIGNATURE_HEADER = 'operator-signature'

export interface OperatorHeaders {
  'operator-timestamp': string
  'operator-signature': string
  [name: string]: string
}

/** Headers for one request: `body` is the exact body sent. */
export type OperatorSigner = (body: string) => OperatorHeaders

/** What an operator signs: `<timestamp>\n` followed by the request body (the TCert check's layout). */
export function operatorSignedText(timestamp: string, body: string): string {
  return `${timestamp}\n${body}`
}

/** The headers for `body` signed by `account` at `nowMs` (default: now). */
export function operatorHeaders(account: Pick<Account, 'sign'>, body: string, nowMs: number = Date.now()): OperatorHeaders {
  const timestamp = String(Math.floor(nowMs))
  return { [OPERATOR_TIMESTAMP_HEADER]: timestamp, [OPERATOR_SIGNATURE_HEADER]: account.sign(operatorSignedText(timestamp, body)) }
}

/** A signer that makes fresh headers for each request (for httpTransport's `headersFor`). */
export function operatorSigner(account: Pick<Account, 'sign'>, options: { now?: () => number } = {}): OperatorSigner {
  const now = options.now ?? Date.now
  return (body) => operatorHeaders(account, body, now())
}
