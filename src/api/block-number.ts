/**
 * Block-number arguments (protocol.md §4): a decimal integer, a decimal string, a 0x hex string or
 * `latest`, with the real node's messages. Blocks start at 1; archiving raises the genesis.
 *
 * -32011 answers only `latest` on a chain with no block (a question about the latest block itself);
 * a number past the head is -32602 `block number N is out of range, and now latest block number is
 * M` at every height, 0 included, as the real node answers on a fresh chain.
 */
import type { BlockNumber } from '../../generated/types.ts'
import { DataNotFound, InvalidParams, NoBlockGenerated } from '../errors.ts'
import { toHex } from '../wire/format.ts'

export interface ChainBounds {
  /** latest block number; 0 before the first block */
  height(): number
  /** lowest block still in the live store; 0 before the first block */
  genesisNumber(): number
}

/** Most blocks one range query may span (reliability.md part B). */
export const MAX_BLOCK_RANGE = 100

function given(raw: BlockNumber): string {
  return typeof raw === 'string' ? raw : raw.toString()
}

function numeric(raw: BlockNumber): bigint {
  if (typeof raw === 'string') return BigInt(raw)
  return BigInt(raw)
}

/** The block number a request names, checked against the chain; `allowZero` leaves 0 to the caller's own rule. */
export function resolveBlockNumber(raw: BlockNumber, chain: ChainBounds, allowZero = false): number {
  const height = chain.height()
  if (raw === 'latest') {
    if (height === 0) throw new NoBlockGenerated()
    return height
  }
  const value = numeric(raw)
  if (value > BigInt(height))
    throw new InvalidParams(`block number ${given(raw)} is out of range, and now latest block number is ${height}`)
  if (value <= 0n) {
    if (allowZero) return 0
    throw new InvalidParams(`block number can't be negative or zero, but get ${given(raw)}`)
  }
  const number = Number(value)
  if (number < chain.genesisNumber()) throw new DataNotFound(`Not found block number ${toHex(number)}`)
  return number
}

/**
 * A `{from, to}` range: each bound as above, then `from` ≤ `to`, both ≥ 1, and at most `maxSpan`
 * blocks; `null` for the methods without a cap (the averages read block headers only). `null`, not
 * `undefined`: an explicit `undefined` argument would take the default cap.
 */
export function resolveBlockRange(
  range: { from: BlockNumber; to: BlockNumber },
  chain: ChainBounds,
  maxSpan: number | null = MAX_BLOCK_RANGE,
): { from: number; to: number } {
  const from = resolveBlockNumber(range.from, chain, true)
  const to = resolveBlockNumber(range.to, chain, true)
  if (from > to || from < 1) throw new InvalidParams(`invalid params, from = ${from}, to = ${to}`)
  if (maxSpan !== null && to - from + 1 > maxSpan) {
    throw new InvalidParams(`range too large: at most ${maxSpan} blocks per call, asked for ${to - from + 1}`)
  }
  return { from, to }
}

/** A `{startTime, endTime}` window in ns (protocol.md §7). */
export function resolveTimeRange(range: { startTime: number | bigint; endTime: number | bigint }): { start: bigint; end: bigint } {
  const start = BigInt(range.startTime)
  const end = BigInt(range.endTime)
  if (start < 0n || end < 0n || start > end) {
    throw new InvalidParams('invalid params, both startTime and endTime must be positive, startTime must be less than endTime')
  }
  return { start, end }
}
