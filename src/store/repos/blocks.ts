/** Keyspaces 2 `blocks`, 3 `blockByHash`, 12 `blockTime`: block headers and their lookups, written together. */
import type { BlockHeader, Hex } from '../../domain.ts'
import { EMPTY, fixedBytes, isBlockNumber, tryFixedBytes, u32be } from '../codec.ts'
import { type Db, encodeFor, type Write } from '../db.ts'
import type { BlocksByTime } from '../types.ts'
import { keysInTime, timeKey } from './time-index.ts'

export class BlocksRepo {
  constructor(
    private readonly blocks: Db,
    private readonly byHash: Db,
    private readonly byTime: Db,
  ) {}

  get(number: number): BlockHeader | undefined {
    return isBlockNumber(number) ? this.blocks.get(number) : undefined
  }

  numberOf(hash: Hex): number | undefined {
    const key = tryFixedBytes(hash, 32)
    return key === undefined ? undefined : this.byHash.get(key)
  }

  /** highest stored block number, 0 when none */
  lastNumber(): number {
    for (const key of this.blocks.getKeys({ reverse: true, limit: 1 })) return key as number
    return 0
  }

  /** the stored bytes of a header, made before the write transaction */
  encode(header: BlockHeader): Buffer {
    return encodeFor(this.blocks, header)
  }

  /** the writes that store `header`; the caller validated it; `encoded` from encode(header) */
  writes(out: Write[], header: BlockHeader, encoded = this.encode(header)): void {
    out.push(
      { db: this.blocks, key: header.number, value: encoded },
      { db: this.byHash, key: fixedBytes(header.hash, 32, 'header.hash'), value: encodeFor(this.byHash, header.number) },
      { db: this.byTime, key: timeKey(header.writeTime, 'header.writeTime', u32be(header.number)), value: EMPTY },
    )
  }

  /** blocks written in [startNs, endNs], from block `minNumber` up to block `maxNumber` */
  byWriteTime(startNs: bigint, endNs: bigint, maxNumber: number, minNumber: number): BlocksByTime {
    const keys = keysInTime(this.byTime, startNs, endNs).filter((key) => {
      const number = key.readUInt32BE(8)
      return number <= maxNumber && number >= minNumber
    })
    if (keys.length === 0) return { count: 0 }
    let first = Number.POSITIVE_INFINITY
    let last = 0
    for (const key of keys) {
      const number = key.readUInt32BE(8)
      if (number < first) first = number
      if (number > last) last = number
    }
    return { count: keys.length, first, last }
  }
}
