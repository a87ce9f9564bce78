/** Keyspace 7 `receipts`. */
import type { Hex, Receipt } from '../../domain.ts'
import { tryFixedBytes } from '../codec.ts'
import type { Db } from '../db.ts'

export class ReceiptsRepo {
  constructor(private readonly db: Db) {}

  get(hash: Hex): Receipt | undefined {
    const key = tryFixedBytes(hash, 32)
    return key === undefined ? undefined : this.db.get(key)
  }

  /** inside a write transaction */
  put(key: Buffer, receipt: Receipt): void {
    this.db.putSync(key, receipt)
  }
}
