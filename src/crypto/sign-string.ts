/**
 * Sign strings. The builders live once, in the client package's sources (sdk/src/sign-string.ts),
 * since a client signs the very text the node rebuilds to verify; this module adds what only the
 * node needs: the 2017 sign hash with the node's (native when available) Keccak.
 */
import { signString2017, type TxFields } from '../../sdk/src/sign-string.ts'
import { keccak256 } from './hash.ts'

export * from '../../sdk/src/sign-string.ts'

/** Keccak-256 of the 2017 sign string: what tx_getSignHash returns. */
export function signHash2017(tx: TxFields): Uint8Array {
  return keccak256(signString2017(tx))
}
