/**
 * The lookups the tx_ handler files share: a receipt or the error tx_getTransactionReceipt answers,
 * a block by hash, the blocks of a time window; and the signer of signed receipts.
 */
import type { Receipt as WireReceipt } from '../../generated/types.ts'
import { type BlockHeader, type Hex, InvalidReason, type InvalidTx } from '../domain.ts'
import { RpcError } from '../errors.ts'
import { formatReceipt } from '../wire/format.ts'
import { resolveTimeRange } from './block-number.ts'
import type { ChainReader } from './chain-reader.ts'
import { notFound } from './not-found.ts'

/**
 * The receipt error of a discarded transaction: its failure name is the message (spec
 * "tx_getTransactionReceipt"), and its reason (a contract's exception, the limit it hit) is the
 * reply's `data`, where the SDK's RequestError keeps it (`error.response.data`).
 */
export function receiptFailure(invalid: InvalidTx): RpcError {
  return new RpcError(InvalidReason[invalid.invalidMsg], invalid.invalidMsg, { data: invalid.detail })
}

/** The receipt of `hash`, or the error tx_getTransactionReceipt answers: its failure, or -32001 (archived: where it went). */
export function receiptOf(chain: ChainReader, hash: Hex): WireReceipt {
  const key = hash.toLowerCase()
  const receipt = chain.getReceipt(key)
  if (receipt !== undefined) return formatReceipt(receipt)
  const invalid = chain.getInvalidTx(key)
  if (invalid !== undefined) throw receiptFailure(invalid)
  throw notFound(chain, 'receipt', hash, chain.archivedBlockOf(key))
}

/** The block with this hash, or -32001 (archived: where it went). */
export function blockByHash(chain: ChainReader, hash: Hex): BlockHeader {
  const block = chain.getBlockByHash(hash.toLowerCase())
  if (block === undefined) throw notFound(chain, 'block hash', hash, chain.archivedBlockOfHash(hash.toLowerCase()))
  return block
}

/**
 * The blocks whose writeTime lies in the window (protocol.md §7: the time queries select blocks,
 * not transaction timestamps). Block times strictly increase with the number, so they are the
 * consecutive numbers first..last; undefined when none.
 */
export function blocksWritten(
  chain: ChainReader,
  window: { startTime: number | bigint; endTime: number | bigint },
): { first: number; last: number } | undefined {
  const { start, end } = resolveTimeRange(window)
  const found = chain.blocksByTime(start, end)
  return found.first === undefined || found.last === undefined ? undefined : { first: found.first, last: found.last }
}

/** Signs what tx_getTransactionReceiptWithSignature returns, with the node's own key. */
export interface ReceiptSigner {
  hostname: string
  /** ECDSA P-256 / SHA-256, r‖s (64 bytes) */
  sign(bytes: Uint8Array): Promise<Uint8Array>
}
