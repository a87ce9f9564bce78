/** Keyspaces 6 `txs` and 10 `txTime`: committed valid txs and their timestamp index. */
import type { CommittedTx, Hex } from '../../domain.ts'
import { bytesToHex, EMPTY, tryFixedBytes } from '../codec.ts'
import type { Db } from '../db.ts'
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

  /** inside a write transaction */
  put(key: Buffer, tx: CommittedTx): void {
    this.txs.putSync(key, tx)
    this.byTime.putSync(timeKey(tx.tx.timestamp, 'tx.timestamp', key), EMPTY)
  }

  hashesByTime(startNs: bigint, endNs: bigint, limit: number): Hex[] {
    return keysInTime(this.byTime, startNs, endNs, limit).map((key) => bytesToHex(key.subarray(8)))
  }
}
