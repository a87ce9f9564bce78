/**
 * Immutable answers made once (ARCHITECTURE.md decision 11). A committed block, transaction or
 * receipt never changes, so its JSON text is made the first time a thread answers it and kept:
 * later reads (explorers polling block_latestBlock, SDKs polling receipts, WebSocket push of the
 * same block to every subscriber) are a lookup, not a record decode and a JSON.stringify of up to
 * 500 transactions. Bounded by the bytes of text kept; the oldest entries go first.
 *
 * Each entry remembers its block: an answer is given only while that block is live (archive_archive
 * moves old blocks out, and their answers must then be "archived" errors, not the kept text).
 */
import type { Block, Receipt as WireReceipt, Transaction as WireTransaction } from '../../generated/types.ts'
import type { BlockHeader, CommittedTx, Receipt } from '../domain.ts'
import { formatBlock, formatReceipt, formatTransaction } from '../wire/format.ts'
import { CHUNK_TEXT_CHARS, JsonText, stringifyJson } from '../wire/json.ts'

/** text kept per thread, in UTF-16 code units ≈ bytes (the texts are ASCII) */
export const DEFAULT_ANSWER_BYTES = 64 * 1024 * 1024

/** a text's share of the bound: a large one is also kept as UTF-8 bytes once an HTTP reply wrote it (stringifyJsonChunks) */
const keptSize = (kept: JsonText<unknown>): number => kept.text.length * (kept.text.length >= CHUNK_TEXT_CHARS ? 2 : 1)

interface Kept {
  text: JsonText<unknown>
  blockNumber: number
}

/** what the cache asks of the chain: the live block numbers */
export interface LiveBlocks {
  height(): number
  genesisNumber(): number
}

export interface AnswerCache {
  /** a committed transaction's text */
  transaction(tx: CommittedTx): JsonText<WireTransaction>
  /** a committed receipt's text */
  receipt(receipt: Receipt): JsonText<WireReceipt>
  /** a block's text, full (with its transactions, given by `txs` on a miss) or plain */
  block(header: BlockHeader, full: boolean, txs: () => CommittedTx[]): JsonText<Block>
  /** the kept text of a transaction's record or receipt, without reading the store; undefined unless kept and live */
  kept(kind: 'tx' | 'receipt', hash: string): JsonText<unknown> | undefined
}

export function createAnswerCache(chain: LiveBlocks, maxBytes = DEFAULT_ANSWER_BYTES): AnswerCache {
  const entries = new Map<string, Kept>()
  let bytes = 0

  const live = (kept: Kept): boolean => kept.blockNumber <= chain.height() && kept.blockNumber >= chain.genesisNumber()

  const keep = <T>(key: string, blockNumber: number, make: () => unknown): JsonText<T> => {
    const found = entries.get(key)
    if (found !== undefined) return found.text as JsonText<T>
    const text = new JsonText<T>(stringifyJson(make()))
    entries.set(key, { text, blockNumber })
    bytes += keptSize(text)
    while (bytes > maxBytes && entries.size > 1) {
      const [oldest, entry] = entries.entries().next().value as [string, Kept]
      entries.delete(oldest)
      bytes -= keptSize(entry.text)
    }
    return text
  }

  return {
    transaction: (tx) => keep(`tx:${tx.tx.hash}`, tx.blockNumber, () => formatTransaction(tx)),
    receipt: (receipt) => keep(`receipt:${receipt.txHash}`, receipt.blockNumber, () => formatReceipt(receipt)),
    block: (header, full, txs) =>
      keep(`block:${header.number}:${header.hash}:${full ? 'full' : 'plain'}`, header.number, () =>
        formatBlock(header, full ? txs() : undefined),
      ),
    kept(kind, hash) {
      const found = entries.get(`${kind}:${hash}`)
      return found !== undefined && live(found) ? found.text : undefined
    },
  }
}
