/**
 * The `tx_` queries of discarded (invalid) transactions the official SDK calls: by block, counted,
 * paged and counted by time. A block's invalid transactions are in execution order; a position in
 * a page is (block, index among that block's invalid transactions).
 */
import type { TxHandlers } from '../../generated/handlers.ts'
import type { InvalidTransaction, PositionedInvalidTransaction } from '../../generated/types.ts'
import type { Hex, InvalidTx } from '../domain.ts'
import { formatInvalidTransaction, toHex, wireInteger } from '../wire/format.ts'
import { resolveBlockNumber, resolveBlockRange } from './block-number.ts'
import type { ChainReader } from './chain-reader.ts'
import { pagePositions } from './paging.ts'
import { blockByHash, blocksWritten } from './tx-records.ts'

export type InvalidTxHandlers = Pick<
  TxHandlers,
  | 'tx_getInvalidTransactionsByBlockHash'
  | 'tx_getInvalidTransactionsByBlockNumber'
  | 'tx_getInvalidTransactionsCount'
  | 'tx_getInvalidTransactionsWithLimit'
  | 'tx_getInvalidTransactionsCountByTime'
>

/** A discarded transaction with where its block recorded it (its index among the block's invalid transactions), so a page can be continued from it. */
export function positionedInvalid(
  chain: Pick<ChainReader, 'getInvalidTx'>,
  at: { block: number; index: number; hash: Hex },
): PositionedInvalidTransaction {
  const found = chain.getInvalidTx(at.hash)
  if (found === undefined) throw new Error(`block ${at.block} lists ${at.hash} as discarded, which the store does not hold`)
  return { ...formatInvalidTransaction(found), blockNumber: toHex(at.block), txIndex: toHex(at.index) }
}

export function createInvalidTxHandlers(modules: { chain: ChainReader }): InvalidTxHandlers {
  const { chain } = modules

  const formatted = (hash: Hex): InvalidTransaction => {
    const found = chain.getInvalidTx(hash)
    if (found === undefined) throw new Error(`the store lists ${hash} as discarded but does not hold it`)
    return formatInvalidTransaction(found as InvalidTx)
  }
  const ofBlock = (number: number): InvalidTransaction[] => chain.getBlockInvalidTxHashes(number).map(formatted)
  const countIn = (number: number): number => chain.getBlockInvalidTxHashes(number).length

  return {
    tx_getInvalidTransactionsByBlockHash: ([hash]) => ofBlock(blockByHash(chain, hash).number),
    tx_getInvalidTransactionsByBlockNumber: ([number]) => ofBlock(resolveBlockNumber(number, chain)),
    tx_getInvalidTransactionsCount: () => ({
      count: toHex(chain.countInvalidTxs()),
      timestamp: wireInteger(BigInt(Date.now()) * 1_000_000n),
    }),
    tx_getInvalidTransactionsWithLimit: ([query]) => {
      const { from, to } = resolveBlockRange(query, chain)
      const page = pagePositions(query.metadata, from, to, countIn)
      return {
        hasmore: page.hasMore,
        data: page.positions.map((position) =>
          positionedInvalid(chain, { ...position, hash: chain.getBlockInvalidTxHashes(position.block)[position.index] }),
        ),
      }
    },
    tx_getInvalidTransactionsCountByTime: ([window]) => {
      const blocks = blocksWritten(chain, window)
      let count = 0
      if (blocks !== undefined) for (let number = blocks.first; number <= blocks.last; number++) count += countIn(number)
      return toHex(count)
    },
  }
}
