/** Keyspace 7 `receipts`. */
import type { Hex, Receipt } from '../../domain.ts'
import { tryFixedBytes } from '../codec.ts'
import { type Db, encodeFor, type Write } from '../db.ts'

export class ReceiptsRepo {
  constructor(private readonly db: Db) {}

  get(hash: Hex): Receipt | undefined {
    const key = tryFixedBytes(hash, 32)
    return key === undefined ? undefined : this.db.get(key)
  }

  /** the stored bytes of a receipt, made before the write transaction */
  encode(receipt: Receipt): Buffer {
    return encodeFor(this.db, receipt)
  }

  /** the write that stores `receipt` under `key`; `encoded` from encode(receipt) */
  writes(out: Write[], key: Buffer, receipt: Receipt, encoded = this.encode(receipt)): void {
    out.push({ db: this.db, key, value: encoded })
  }
}
