/**
 * The SDK's position-based paging (getNextPageTransactions, getPrevPageTransactions,
 * getNextPageInvalidTransactions) and getTransactionsCountByContractAddr, as Hyperchain defines
 * them: a page starts at a transaction (or just after / before it), skips `separated` matching
 * transactions, and holds up to `pageSize`. Filtering by address walks the receiver index
 * (keyspace 31: `to`, or the contract a deployment created) or, for invalid transactions, their
 * `to` (keyspace 33), so no block outside the matches is read.
 */
import type { TxHandlers } from '../../generated/handlers.ts'
import type { PagingQuery, Transaction as WireTransaction } from '../../generated/types.ts'
import type { Hex } from '../domain.ts'
import { InvalidParams } from '../errors.ts'
import { addressKey, type IndexedTx, type TxIndexName } from '../store/index.ts'
import { formatTransaction, toHex } from '../wire/format.ts'
import { resolveBlockNumber, resolveBlockRange } from './block-number.ts'
import type { ChainReader } from './chain-reader.ts'
import { MAX_PAGE_SIZE } from './paging.ts'
import { positionedInvalid } from './tx-invalid.ts'

export type PageTxHandlers = Pick<
  TxHandlers,
  | 'tx_getTransactionsCountByContractAddr'
  | 'tx_getNextPageTransactions'
  | 'tx_getPrevPageTransactions'
  | 'tx_getNextPageInvalidTransactions'
>

/** A position in the chain: a block and an index in it (among its valid, or its invalid, transactions). */
interface Position {
  block: number
  index: number
}

const before = (a: Position, b: Position): boolean => a.block < b.block || (a.block === b.block && a.index < b.index)

/** The address an index is searched by; -32602 for one that is not 20 bytes. */
export function indexedAddress(raw: string): Buffer {
  const key = addressKey(raw)
  if (key === undefined) throw new InvalidParams(`invalid address ${raw}: 20 bytes of hex, 0x optional`)
  return key
}

/**
 * The transactions of blocks `low`..`high` in chain order (reversed when `backward`), read from
 * the blocks' lists: `list(block)` gives a block's hashes.
 */
export function* blockOrder(list: (block: number) => Hex[], low: number, high: number, backward: boolean): Generator<IndexedTx> {
  for (let block = backward ? high : low; backward ? block >= low : block <= high; block += backward ? -1 : 1) {
    const hashes = list(block)
    for (let i = 0; i < hashes.length; i++) {
      const index = backward ? hashes.length - 1 - i : i
      yield { block, index, hash: hashes[index] }
    }
  }
}

function count(raw: number | bigint | string, name: string): number {
  const value = BigInt(raw)
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidParams(`invalid params: ${name} ${raw} is too large`)
  return Number(value)
}

export function createPageTxHandlers(modules: { chain: ChainReader }): PageTxHandlers {
  const { chain } = modules

  /**
   * One page as Hyperchain's paging defines it, over valid (`invalid` false) or invalid
   * transactions: positions of the matching transactions from the query's start, forward (next)
   * or backward (previous).
   */
  const page = (query: PagingQuery, backward: boolean, invalid: boolean): IndexedTx[] => {
    if (query.cName !== undefined)
      throw new InvalidParams('cName needs the contract name service, which Keel does not have: send the contract address as `address`')
    const current = resolveBlockNumber(query.blkNumber, chain)
    const min = resolveBlockNumber(query.minBlkNumber, chain)
    const max = resolveBlockNumber(query.maxBlkNumber, chain)
    if (current < min || current > max)
      throw new InvalidParams(`Invalid params. 'blkNumber' ${current} is out of range, it must be in the range ${min} to ${max}`)
    const list = (block: number): Hex[] => (invalid ? chain.getBlockInvalidTxHashes(block) : chain.getBlockTxHashes(block))
    const index = count(query.txIndex, 'txIndex')
    const inBlock = list(current).length
    // an empty block has no transaction to stand on: its index 0 stands for the gap it leaves
    if (index >= Math.max(inBlock, 1))
      throw new InvalidParams(
        `Invalid params. 'txIndex' ${index} is out of range, and now the number of transactions of block ${current} is ${inBlock}`,
      )
    const pageSize = count(query.pageSize, 'pageSize')
    if (pageSize < 1) throw new InvalidParams('invalid params: pageSize must be at least 1')
    const size = Math.min(pageSize, MAX_PAGE_SIZE)
    let skip = count(query.separated, 'separated')
    const start: Position = { block: current, index }
    const included = (at: Position): boolean => {
      if (at.block === start.block && at.index === start.index) return query.containCurrent === true
      return backward ? before(at, start) : before(start, at)
    }
    const [low, high] = backward ? [min, current] : [current, max]
    const byAddress: TxIndexName = invalid ? 'invalidTo' : 'receiver'
    const candidates =
      query.address === undefined
        ? blockOrder(list, low, high, backward)
        : chain.scanTxIndex(byAddress, indexedAddress(query.address), low, high, backward)
    const found: IndexedTx[] = []
    for (const candidate of candidates) {
      if (!included(candidate)) continue
      if (skip > 0) {
        skip--
        continue
      }
      found.push(candidate)
      if (found.length === size) break
    }
    return found
  }

  const committed = (hash: Hex): WireTransaction => {
    const found = chain.getTx(hash)
    if (found === undefined) throw new Error(`an index lists ${hash}, which the store does not hold`)
    return formatTransaction(found)
  }

  return {
    tx_getTransactionsCountByContractAddr: ([query]) => {
      if (query.txExtra === true) throw new InvalidParams('txExtra: true is not supported: Keel counts transactions, send false')
      const { from, to } = resolveBlockRange(query, chain, null)
      let total = 0
      let last: IndexedTx | undefined
      for (const found of chain.scanTxIndex('receiver', indexedAddress(query.address), from, to, false)) {
        total++
        last = found
      }
      return { count: toHex(total), lastIndex: toHex(last?.index ?? 0), lastBlockNum: toHex(last?.block ?? 0) }
    },
    tx_getNextPageTransactions: ([query]) => page(query, false, false).map((at) => committed(at.hash)),
    tx_getPrevPageTransactions: ([query]) => page(query, true, false).map((at) => committed(at.hash)),
    tx_getNextPageInvalidTransactions: ([query]) => page(query, false, true).map((at) => positionedInvalid(chain, at)),
  }
}
