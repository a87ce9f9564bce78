/** Paging of the SDK's *WithLimit methods: pageSize (default 10, at most 100), a bookmark, a direction. */
import type { BlockNumber, PageMetadata, TxIndex } from '../../generated/types.ts'

/** Most hashes or numbers one batch query may list (reliability.md part B). */
export const MAX_BATCH_ITEMS = 100
export const DEFAULT_PAGE_SIZE = 10
export const MAX_PAGE_SIZE = 100

export function pageSizeOf(metadata: PageMetadata | undefined): number {
  const size = metadata?.pageSize === undefined ? DEFAULT_PAGE_SIZE : Number(metadata.pageSize)
  return Math.min(Math.max(1, size), MAX_PAGE_SIZE)
}

function asNumber(raw: BlockNumber | TxIndex | undefined): number | undefined {
  if (raw === undefined || raw === 'latest') return undefined
  return Number(BigInt(raw))
}

/** A position in the chain: block number, then index within the block. */
export interface Position {
  block: number
  index: number
}

/**
 * The bookmark as a position. Without `txIndex` it stands for its whole block, as a block page's
 * bookmark does: the page starts in the next block in either direction (past the block's last
 * index going forward, before its first going backward).
 */
export function bookmarkOf(metadata: PageMetadata | undefined): Position | undefined {
  const block = asNumber(metadata?.bookmark?.blkNum)
  if (block === undefined) return undefined
  const index = asNumber(metadata?.bookmark?.txIndex)
  return { block, index: index ?? (metadata?.backward === true ? -1 : Number.MAX_SAFE_INTEGER) }
}

/** Block numbers of one page of blocks `from`..`to`, starting after the bookmark. */
export function pageOf(metadata: PageMetadata | undefined, from: number, to: number): { numbers: number[]; hasMore: boolean } {
  const size = pageSizeOf(metadata)
  const backward = metadata?.backward === true
  const mark = bookmarkOf(metadata)?.block
  const numbers: number[] = []
  if (backward) {
    let number = mark === undefined ? to : Math.min(to, mark - 1)
    for (; number >= from && numbers.length < size; number--) numbers.push(number)
    return { numbers, hasMore: number >= from }
  }
  let number = mark === undefined ? from : Math.max(from, mark + 1)
  for (; number <= to && numbers.length < size; number++) numbers.push(number)
  return { numbers, hasMore: number <= to }
}

/**
 * One page of items laid out by position (blocks `from`..`to`, `countIn(block)` items each),
 * starting right after the bookmark.
 */
export function pagePositions(
  metadata: PageMetadata | undefined,
  from: number,
  to: number,
  countIn: (block: number) => number,
): { positions: Position[]; hasMore: boolean } {
  const size = pageSizeOf(metadata)
  const backward = metadata?.backward === true
  const mark = bookmarkOf(metadata)
  const positions: Position[] = []
  const after = (p: Position): boolean =>
    mark === undefined ||
    (backward
      ? p.block < mark.block || (p.block === mark.block && p.index < mark.index)
      : p.block > mark.block || (p.block === mark.block && p.index > mark.index))
  const step = backward ? -1 : 1
  // blocks before the bookmark hold nothing to return: start at the bookmark's block (a time window may span many blocks)
  let start = backward ? to : from
  if (mark !== undefined) start = backward ? Math.min(to, mark.block) : Math.max(from, mark.block)
  for (let block = start; backward ? block >= from : block <= to; block += step) {
    const count = countIn(block)
    for (let i = 0; i < count; i++) {
      const index = backward ? count - 1 - i : i
      const position = { block, index }
      if (!after(position)) continue
      if (positions.length === size) return { positions, hasMore: true }
      positions.push(position)
    }
  }
  return { positions, hasMore: false }
}
