/** Keyspaces 8 `invalidTxs` and 11 `invalidTxTime`: discarded txs and their timestamp index. */
import type { Hex, InvalidTx } from '../../domain.ts'
import { bytesToHex, EMPTY, tryFixedBytes } from '../codec.ts'
import { type Db, encodeFor, type Write } from '../db.ts'
import { keysInTime, timeKey } from './time-index.ts'

export class InvalidTxsRepo {
  constructor(
    private readonly invalid: Db,
    private readonly byTime: Db,
  ) {}

  get(hash: Hex): InvalidTx | undefined {
    const key = tryFixedBytes(hash, 32)
    return key === undefined ? undefined : this.invalid.get(key)
  }

  has(key: Buffer): boolean {
    return this.invalid.doesExist(key)
  }

  count(): number {
    return (this.invalid.getStats() as { entryCount: number }).entryCount
  }

  /** the stored bytes of a record, made before the write transaction */
  encode(tx: InvalidTx): Buffer {
    return encodeFor(this.invalid, tx)
  }

  /** the writes that store `tx` under `key`; `encoded` from encode(tx) */
  writes(out: Write[], key: Buffer, tx: InvalidTx, encoded = this.encode(tx)): void {
    out.push(
      { db: this.invalid, key, value: encoded },
      { db: this.byTime, key: timeKey(tx.tx.timestamp, 'invalid tx.timestamp', key), value: EMPTY },
    )
  }

  hashesByTime(startNs: bigint, endNs: bigint, limit: number): Hex[] {
    return keysInTime(this.byTime, startNs, endNs, limit).map((key) => bytesToHex(key.subarray(8)))
  }

  /** in timestamp order */
  list(limit: number): Hex[] {
    if (!(limit > 0)) return []
    const out: Hex[] = []
    for (const key of this.byTime.getKeys({ limit })) out.push(bytesToHex((key as Buffer).subarray(8)))
    return out
  }
}
