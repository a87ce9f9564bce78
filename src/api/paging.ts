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

export function bookmarkOf(metadata: PageMetadata | undefined): Position | undefined {
  const block = asNumber(metadata?.bookmark?.blkNum)
  if (block === undefined) return undefined
  return { block, index: asNumber(metadata?.bookmark?.txIndex) ?? Number.MAX_SAFE_INTEGER }
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
  for (let block = backward ? to : from; backward ? block >= from : block <= to; block += step) {
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
