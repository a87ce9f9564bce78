/** Keyspaces 6 `txs` and 10 `txTime`: committed valid txs and their timestamp index. */
import type { CommittedTx, Hex } from '../../domain.ts'
import { bytesToHex, EMPTY, tryFixedBytes } from '../codec.ts'
import { type Db, encodeFor, type Write } from '../db.ts'
import { keysInTime, timeKey } from './time-index.ts'

export class TxsRepo {
  constructor(
    private readonly txs: Db,
    private readonly byTime: Db,
  ) {}

  get(hash: Hex): CommittedTx | undefined {
    const key = tryFixedBytes(hash, 32)
    return key === undefined ? undefined : this.txs.get(key)
  }

  has(key: Buffer): boolean {
    return this.txs.doesExist(key)
  }

  count(): number {
    return (this.txs.getStats() as { entryCount: number }).entryCount
  }

  /** the stored bytes of a record, made before the write transaction */
  encode(tx: CommittedTx): Buffer {
    return encodeFor(this.txs, tx)
  }

  /** the writes that store `tx` under `key`; `encoded` from encode(tx) */
  writes(out: Write[], key: Buffer, tx: CommittedTx, encoded = this.encode(tx)): void {
    out.push({ db: this.txs, key, value: encoded }, { db: this.byTime, key: timeKey(tx.tx.timestamp, 'tx.timestamp', key), value: EMPTY })
  }

  hashesByTime(startNs: bigint, endNs: bigint, limit: number): Hex[] {
    return keysInTime(this.byTime, startNs, endNs, limit).map((key) => bytesToHex(key.subarray(8)))
  }
}
