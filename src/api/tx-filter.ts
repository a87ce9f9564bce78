/**
 * tx_getTransactionsByExtraID and tx_getTransactionsByFilter (Hyperchain's data index queries):
 * each walks one index (or merges several) in chain order from the latest block down, or from the
 * genesis up with `backward`, checks each candidate against the whole filter, and returns a page
 * of summaries or whole transactions. Candidates come from keyspaces 30–32 (sender, receiver,
 * extra id) or from one block's list, so a selective filter reads little; a walk that examines
 * MAX_EXAMINED candidates stops, so no call holds the node for long.
 */
import type { TxHandlers } from '../../generated/handlers.ts'
import type { ExtraIdItem, IndexPageMetadata, PagedIndexResult, TransactionSummary } from '../../generated/types.ts'
import { type CommittedTx, type ExtraId, extraIdsOf, type Hex, ZERO_ADDRESS } from '../domain.ts'
import { InvalidParams } from '../errors.ts'
import { extraIdKey, type IndexedTx } from '../store/index.ts'
import { extraIdField, formatTransaction } from '../wire/format.ts'
import { resolveBlockNumber } from './block-number.ts'
import type { ChainReader } from './chain-reader.ts'
import { bookmarkOf } from './paging.ts'
import { blockOrder, indexedAddress } from './tx-pages.ts'

export type FilterTxHandlers = Pick<TxHandlers, 'tx_getTransactionsByExtraID' | 'tx_getTransactionsByFilter'>

/** Hyperchain's page size for these queries: the default and the most. */
export const MAX_INDEX_PAGE = 5000
/** candidates one call may examine before it answers with what it has */
export const MAX_EXAMINED = 100_000

type Stream = Iterable<IndexedTx>
type Position = { block: number; index: number }
type Check = (tx: CommittedTx, at: IndexedTx) => boolean

const earlier = (a: Position, b: Position): boolean => a.block < b.block || (a.block === b.block && a.index < b.index)

/** Several streams in the same order as one, each position once. */
function* merged(streams: Stream[], descending: boolean): Generator<IndexedTx> {
  const iterators = streams.map((stream) => stream[Symbol.iterator]())
  const heads = iterators.map((iterator) => iterator.next())
  let last: IndexedTx | undefined
  for (;;) {
    let pick = -1
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]
      if (head.done) continue
      if (pick < 0) pick = i
      else {
        const best = heads[pick].value as IndexedTx
        if (descending ? earlier(best, head.value) : earlier(head.value, best)) pick = i
      }
    }
    if (pick < 0) return
    const next = heads[pick].value as IndexedTx
    heads[pick] = iterators[pick].next()
    if (last !== undefined && last.block === next.block && last.index === next.index) continue
    last = next
    yield next
  }
}

function sameIds(a: readonly ExtraId[], b: readonly ExtraId[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i])
}

/** A filter's extra ids as the index holds them: integers as bigint. */
function wantedIds(items: readonly ExtraIdItem[]): ExtraId[] {
  return items.map((item) => (typeof item === 'string' ? item : BigInt(item)))
}

/**
 * tx_getTransactionsByExtraID and tx_getTransactionsByFilter.
 *
 * Long because: both methods walk the same index streams with the same page bookmark; the walk's
 * pieces (scan, byHash, inBlock, atIndex, collect) are closures over the chain reader and one another.
 */
export function createFilterTxHandlers(modules: { chain: ChainReader }): FilterTxHandlers {
  const { chain } = modules

  /** The walk a page makes: its direction, block range and bookmark (excluded). */
  const walkOf = (metadata: IndexPageMetadata | undefined) => {
    // Hyperchain's index queries: backward false (the default) walks from the latest block down
    const descending = metadata?.backward !== true
    // a bookmark without txIndex stands for its whole block (paging.ts): the walk starts past it
    const mark = bookmarkOf(metadata === undefined ? undefined : { ...metadata, backward: descending })
    const tip = chain.height()
    const low = Math.max(1, chain.genesisNumber())
    const range = descending ? { low, high: Math.min(tip, mark?.block ?? tip) } : { low: Math.max(low, mark?.block ?? low), high: tip }
    const after = (at: Position): boolean => mark === undefined || (descending ? earlier(at, mark) : earlier(mark, at))
    const size = Math.min(Math.max(1, Number(metadata?.pageSize ?? MAX_INDEX_PAGE)), MAX_INDEX_PAGE)
    return { descending, range, after, size }
  }

  type Walk = ReturnType<typeof walkOf>

  const scan = (walk: Walk, index: 'from' | 'receiver' | 'extraId', prefix: Buffer): Stream =>
    chain.scanTxIndex(index, prefix, walk.range.low, walk.range.high, walk.descending)

  /** the one transaction with this hash, when it is live and in the walk's range */
  const byHash = (walk: Walk, hash: Hex): Stream => {
    const found = chain.getTx(hash.toLowerCase())
    return found === undefined || found.blockNumber < walk.range.low || found.blockNumber > walk.range.high
      ? []
      : [{ block: found.blockNumber, index: found.txIndex, hash: found.tx.hash }]
  }

  const inBlock = (walk: Walk, block: number): Stream =>
    block < walk.range.low || block > walk.range.high ? [] : blockOrder((n) => chain.getBlockTxHashes(n), block, block, walk.descending)

  /** the transaction at `index` of every block of the walk; each block visited counts as examined */
  function* atIndex(walk: Walk, index: number, examined: { count: number }): Generator<IndexedTx> {
    const { low, high } = walk.range
    for (let block = walk.descending ? high : low; walk.descending ? block >= low : block <= high; block += walk.descending ? -1 : 1) {
      if (++examined.count > MAX_EXAMINED) return
      const hashes = chain.getBlockTxHashes(block)
      if (index < hashes.length) yield { block, index, hash: hashes[index] }
    }
  }

  const receiverOf = (committed: CommittedTx): Hex => {
    if (committed.tx.to !== null) return committed.tx.to
    const created = chain.getReceipt(committed.tx.hash)?.contractAddress
    return typeof created === 'string' ? created : ZERO_ADDRESS
  }

  const summary = (committed: CommittedTx): TransactionSummary => ({
    txHash: committed.tx.hash,
    blkNum: committed.blockNumber,
    txIndex: committed.txIndex,
    from: committed.tx.from,
    to: committed.tx.to ?? ZERO_ADDRESS,
    ...extraIdField(committed.tx),
  })

  /** Runs a walk: candidates from `stream`, kept when `check` holds, a page of them and whether more match. */
  const collect = (
    walk: Walk,
    stream: Stream,
    check: Check,
    detail: boolean | undefined,
    examined: { count: number },
  ): PagedIndexResult => {
    const data: PagedIndexResult['data'] = []
    for (const at of stream) {
      if (!walk.after(at)) continue
      if (++examined.count > MAX_EXAMINED) break
      const committed = chain.getTx(at.hash)
      if (committed === undefined || !check(committed, at)) continue
      if (data.length === walk.size) return { hasmore: true, data }
      data.push(detail === true ? formatTransaction(committed) : summary(committed))
    }
    if (examined.count > MAX_EXAMINED) {
      if (data.length === 0) throw new InvalidParams(`the filter examined ${MAX_EXAMINED} transactions without filling the page; narrow it`)
      return { hasmore: true, data }
    }
    return { hasmore: false, data }
  }

  return {
    tx_getTransactionsByExtraID: ([query]) => {
      const mode = query.mode ?? 0
      if (mode !== 0 && mode !== 1 && mode !== 2)
        throw new InvalidParams(`invalid mode ${mode}: 0 (the same ids in order), 1 (all of them) or 2 (any of them)`)
      const walk = walkOf(query.metadata)
      const wanted = wantedIds(query.filter.extraId)
      const keys = wanted.map((id) => extraIdKey(id).toString('hex'))
      const to = query.filter.txTo === undefined ? undefined : `0x${indexedAddress(query.filter.txTo).toString('hex')}`
      const matches = (ids: ExtraId[]): boolean => {
        if (mode === 0) return sameIds(ids, wanted)
        const held = new Set(ids.map((id) => extraIdKey(id).toString('hex')))
        return mode === 1 ? keys.every((key) => held.has(key)) : keys.some((key) => held.has(key))
      }
      const stream =
        mode === 2
          ? merged(
              [...new Set(keys)].map((key) => scan(walk, 'extraId', Buffer.from(key, 'hex'))),
              walk.descending,
            )
          : scan(walk, 'extraId', Buffer.from(keys[0], 'hex'))
      const check: Check = (committed) => matches(extraIdsOf(committed.tx)) && (to === undefined || receiverOf(committed) === to)
      return collect(walk, stream, check, query.detail, { count: 0 })
    },
    tx_getTransactionsByFilter: ([query]) => {
      const mode = query.mode ?? 0
      if (mode !== 0 && mode !== 1) throw new InvalidParams(`invalid mode ${mode}: 0 (every field matches) or 1 (any field matches)`)
      const { filter } = query
      const walk = walkOf(query.metadata)
      const examined = { count: 0 }
      const checks: Check[] = []
      const streams: Stream[] = []
      if (filter.txHash !== undefined) {
        const hash = filter.txHash.toLowerCase()
        checks.push((committed) => committed.tx.hash === hash)
        streams.push(byHash(walk, hash))
      }
      if (filter.blkNumber !== undefined) {
        const block = resolveBlockNumber(filter.blkNumber, chain)
        checks.push((_committed, at) => at.block === block)
        streams.push(inBlock(walk, block))
      }
      if (filter.extraId !== undefined) {
        const wanted = wantedIds(filter.extraId)
        checks.push((committed) => sameIds(extraIdsOf(committed.tx), wanted))
        streams.push(scan(walk, 'extraId', extraIdKey(wanted[0])))
      }
      if (filter.txFrom !== undefined) {
        const key = indexedAddress(filter.txFrom)
        const from = `0x${key.toString('hex')}`
        checks.push((committed) => committed.tx.from === from)
        streams.push(scan(walk, 'from', key))
      }
      if (filter.txTo !== undefined) {
        const key = indexedAddress(filter.txTo)
        const to = `0x${key.toString('hex')}`
        checks.push((committed) => receiverOf(committed) === to)
        streams.push(scan(walk, 'receiver', key))
      }
      if (filter.txIndex !== undefined) {
        const index = Number(BigInt(filter.txIndex))
        checks.push((_committed, at) => at.index === index)
        // lazy: walked only when it is the sole field, or one of several alternatives
        streams.push(atIndex(walk, index, examined))
      }
      if (checks.length === 0)
        throw new InvalidParams('the filter names no field: give txHash, blkNumber, txIndex, txFrom, txTo or extraId')
      // every field: the candidates of the first field suffice (the most selective come first); any field: all of them
      const stream = mode === 0 ? streams[0] : merged(streams, walk.descending)
      const check: Check = mode === 0 ? (c, at) => checks.every((one) => one(c, at)) : (c, at) => checks.some((one) => one(c, at))
      return collect(walk, stream, check, query.detail, examined)
    },
  }
}
