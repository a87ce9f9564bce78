/** Handlers of the `tx_` service. */
import type { TxHandlers } from '../../generated/handlers.ts'
import type { InvalidTransaction, Receipt as WireReceipt, Transaction as WireTransaction } from '../../generated/types.ts'
import type { Hex, InvalidTx, TxSubmitter } from '../domain.ts'
import { ZERO_HASH } from '../domain.ts'
import { DataNotFound, InvalidParams } from '../errors.ts'
import { formatInvalidTransaction, formatReceipt, formatTransaction, toHex, wireInteger } from '../wire/format.ts'
import type { JsonText } from '../wire/json.ts'
import type { AnswerCache } from './answers.ts'
import { resolveBlockNumber, resolveBlockRange, resolveTimeRange } from './block-number.ts'
import type { ChainReader } from './chain-reader.ts'
import { notFound } from './not-found.ts'
import { MAX_BATCH_ITEMS, pagePositions } from './paging.ts'
import type { FilterTxHandlers } from './tx-filter.ts'
import type { InvalidTxHandlers } from './tx-invalid.ts'
import type { PageTxHandlers } from './tx-pages.ts'
import { blockByHash, blocksWritten, type ReceiptSigner, receiptFailure, receiptOf } from './tx-records.ts'
import type { SyncTxHandlers } from './tx-sync.ts'

export interface ProtocolInfo {
  /** transaction format version reported to SDKs (sdk-wire.md §2: must start with a positive integer) */
  txVersion: string
  /** gas price reported to SDKs; a JSON integer, since the SDK signs `price=0x<value in hex>` */
  gasPrice: number
}

/** Most transactions one range or time query returns (reliability.md part B). */
export const MAX_RESULT_TXS = 5000

export interface TxModules {
  protocol: ProtocolInfo
  chain: ChainReader
  submitter: TxSubmitter
  /** committed records' texts, made once (answers.ts); one per thread, shared with the block handlers and WebSocket push */
  answers: AnswerCache
}

/** Handlers of this file: the tx_ methods other files do not serve. */
type CoreTxHandlers = Omit<TxHandlers, keyof InvalidTxHandlers | keyof SyncTxHandlers | keyof PageTxHandlers | keyof FilterTxHandlers>

/**
 * The tx_ methods other files do not serve.
 *
 * Long because: one handler per method (26), each a few lines over the same lookups (missing,
 * committed, txAt, the batch caps); the tx_ methods with more to them already have files of their
 * own (tx-invalid.ts, tx-sync.ts, tx-pages.ts, tx-filter.ts).
 */
export function createTxHandlers(modules: TxModules & { signer: ReceiptSigner }): CoreTxHandlers {
  const { protocol, chain, submitter, signer, answers } = modules

  const missing = (what: string, hash: Hex) => notFound(chain, what, hash, chain.archivedBlockOf(hash.toLowerCase()))

  const committed = (hash: Hex): WireTransaction => {
    const found = chain.getTx(hash)
    if (found === undefined) throw new Error(`the store lists ${hash} in a block but does not hold it`)
    return formatTransaction(found)
  }

  const blockTxHashes = (number: number): Hex[] => chain.getBlockTxHashes(number)

  const txAt = (hashes: Hex[], rawIndex: number | bigint | string): WireTransaction => {
    const index = Number(BigInt(rawIndex))
    if (index < 0 || index >= hashes.length) {
      throw new InvalidParams(`Invalid params. This block contains ${hashes.length} transactions, but the index ${index} is out of range`)
    }
    return committed(hashes[index])
  }

  const checkBatch = (count: number): void => {
    if (count > MAX_BATCH_ITEMS) throw new InvalidParams(`too many items: at most ${MAX_BATCH_ITEMS} per call, got ${count}`)
  }

  const capped = (count: number): void => {
    if (count > MAX_RESULT_TXS)
      throw new InvalidParams(`result too large: at most ${MAX_RESULT_TXS} transactions per call; narrow the range`)
  }

  return {
    tx_getTransactions: ([range]) => {
      const { from, to } = resolveBlockRange(range, chain)
      const txs: WireTransaction[] = []
      for (let number = to; number >= from; number--) {
        const hashes = blockTxHashes(number)
        capped(txs.length + hashes.length)
        for (const hash of hashes) txs.push(committed(hash))
      }
      return txs
    },
    tx_getDiscardTransactions: () => {
      const hashes = chain.listInvalidTxHashes(MAX_RESULT_TXS + 1)
      if (hashes.length === 0) throw new DataNotFound('Not found discard transactions')
      capped(hashes.length)
      return hashes.map((hash) => formatInvalidTransaction(chain.getInvalidTx(hash) as InvalidTx))
    },
    tx_getTransactionByHash: ([hash]) => {
      const key = hash.toLowerCase()
      const kept = answers.kept('tx', key) as JsonText<WireTransaction> | undefined
      if (kept !== undefined) return kept
      const found = chain.getTx(key)
      if (found !== undefined) return answers.transaction(found)
      const invalid = chain.getInvalidTx(key)
      if (invalid !== undefined) return formatInvalidTransaction(invalid)
      throw missing('transaction', hash)
    },
    tx_getTransactionByBlockHashAndIndex: ([hash, index]) => txAt(blockTxHashes(blockByHash(chain, hash).number), index),
    tx_getTransactionByBlockNumberAndIndex: ([number, index]) => txAt(blockTxHashes(resolveBlockNumber(number, chain)), index),
    tx_getTransactionsCount: () => ({ count: toHex(chain.countTxs()), timestamp: wireInteger(BigInt(Date.now()) * 1_000_000n) }),
    tx_getTxAvgTimeByBlockNumber: ([range]) => {
      const { from, to } = resolveBlockRange(range, chain, null)
      let totalMs = 0
      let count = 0
      for (let number = from; number <= to; number++) {
        const block = chain.getBlock(number)
        if (block === undefined) continue
        totalMs += block.avgTimeMs * block.txCount
        count += block.txCount
      }
      return toHex(count === 0 ? 0 : Math.round(totalMs / count))
    },
    tx_getTransactionReceipt: ([hash]) => {
      const key = hash.toLowerCase()
      const kept = answers.kept('receipt', key) as JsonText<WireReceipt> | undefined
      if (kept !== undefined) return kept
      const receipt = chain.getReceipt(key)
      // a simulation's receipt names no block: it is answered, never kept
      return receipt === undefined || receipt.blockHash === ZERO_HASH ? receiptOf(chain, hash) : answers.receipt(receipt)
    },
    // a receipt's gasUsed is the gas of its transaction, and a written block is final (BFT or solo)
    tx_getTransactionReceiptWithGas: ([hash]) => receiptOf(chain, hash),
    tx_getConfirmedTransactionReceipt: ([hash]) => receiptOf(chain, hash),
    tx_getTransactionReceiptWithSignature: async ([hash]) => {
      const result = receiptOf(chain, hash)
      // compact JSON in the key order written: a client that parses the reply and writes
      // JSON.stringify(result) gets these bytes back (a receipt holds no integer past 2^53)
      const signature = await signer.sign(Buffer.from(JSON.stringify(result), 'utf8'))
      return { hostname: signer.hostname, signature: `0x${Buffer.from(signature).toString('hex')}`, result }
    },
    tx_getBlockTransactionCountByHash: ([hash]) => toHex(blockByHash(chain, hash).txCount),
    tx_getBlockTransactionCountByNumber: ([number]) => {
      const block = chain.getBlock(resolveBlockNumber(number, chain))
      if (block === undefined) throw new DataNotFound(`Not found block number ${toHex(Number(number))}`)
      return toHex(block.txCount)
    },
    tx_getSignHash: ([query]) => submitter.signHash(query),
    tx_getTransactionsByTime: ([window]) => {
      const blocks = blocksWritten(chain, window)
      const txs: WireTransaction[] = []
      if (blocks === undefined) return txs
      for (let number = blocks.last; number >= blocks.first; number--) {
        const hashes = blockTxHashes(number)
        capped(txs.length + hashes.length)
        for (const hash of hashes) txs.push(committed(hash))
      }
      return txs
    },
    tx_getDiscardTransactionsByTime: ([window]) => {
      const { start, end } = resolveTimeRange(window)
      const hashes = chain.invalidTxHashesByTime(start, end, MAX_RESULT_TXS + 1)
      capped(hashes.length)
      return hashes.map((hash): InvalidTransaction => formatInvalidTransaction(chain.getInvalidTx(hash) as InvalidTx))
    },
    tx_getBatchTransactions: ([query]) => {
      checkBatch(query.hashes.length)
      const found: (WireTransaction | InvalidTransaction)[] = []
      for (const hash of query.hashes) {
        const key = hash.toLowerCase()
        const tx = chain.getTx(key)
        if (tx !== undefined) found.push(formatTransaction(tx))
        else {
          const invalid = chain.getInvalidTx(key)
          if (invalid !== undefined) found.push(formatInvalidTransaction(invalid))
        }
      }
      return found as WireTransaction[]
    },
    tx_getBatchReceipt: ([query]) => {
      checkBatch(query.hashes.length)
      const receipts: WireReceipt[] = []
      for (const hash of query.hashes) {
        const key = hash.toLowerCase()
        const receipt = chain.getReceipt(key)
        if (receipt !== undefined) {
          receipts.push(formatReceipt(receipt))
          continue
        }
        const invalid = chain.getInvalidTx(key)
        if (invalid !== undefined) throw receiptFailure(invalid)
      }
      return receipts
    },
    tx_sendTransaction: ([tx]) => submitter.submit('transfer', tx),
    tx_getGasPrice: () => protocol.gasPrice,
    tx_getTransactionsVersion: () => protocol.txVersion,
    tx_getTransactionsWithLimit: ([query]) => {
      const { from, to } = resolveBlockRange(query, chain)
      const page = pagePositions(query.metadata, from, to, (number) => chain.getBlock(number)?.txCount ?? 0)
      return {
        hasmore: page.hasMore,
        data: page.positions.map((position) => committed(blockTxHashes(position.block)[position.index])),
      }
    },
    tx_getTransactionsByTimeWithLimit: ([query]) => {
      const blocks = blocksWritten(chain, query)
      if (blocks === undefined) return { hasmore: false, data: [] }
      const page = pagePositions(query.metadata, blocks.first, blocks.last, (number) => chain.getBlock(number)?.txCount ?? 0)
      return {
        hasmore: page.hasMore,
        data: page.positions.map((position) => committed(blockTxHashes(position.block)[position.index])),
      }
    },
    tx_getTransactionsCountByTime: ([window]) => {
      const blocks = blocksWritten(chain, window)
      let count = 0
      if (blocks !== undefined)
        for (let number = blocks.first; number <= blocks.last; number++) count += chain.getBlock(number)?.txCount ?? 0
      return toHex(count)
    },
  }
}
