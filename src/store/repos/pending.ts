/** Keyspaces 13 `pending` and 14 `pendingByHash`: txs accepted but not yet in a block, in arrival order. */
import { asBinary } from 'lmdb'
import type { SignedTx } from '../../domain.ts'
import type { Db } from '../db.ts'

export class PendingRepo {
  constructor(
    private readonly bySeq: Db,
    private readonly byHash: Db,
  ) {}

  /** next free sequence number (one past the highest stored) */
  nextSeq(): number {
    for (const key of this.bySeq.getKeys({ reverse: true, limit: 1 })) return (key as number) + 1
    return 1
  }

  /** msgpack bytes of a tx, made before the write transaction so an unencodable tx fails alone */
  encode(tx: SignedTx): Buffer {
    return Buffer.from((this.bySeq as unknown as { encoder: { encode(value: unknown): Uint8Array } }).encoder.encode(tx))
  }

  has(key: Buffer): boolean {
    return this.byHash.doesExist(key)
  }

  /** inside a write transaction */
  put(seq: number, key: Buffer, encoded: Buffer): void {
    this.bySeq.putSync(seq, asBinary(encoded))
    this.byHash.putSync(key, seq)
  }

  /** inside a write transaction; no-op for a tx that was never pending here */
  remove(key: Buffer): void {
    const seq: number | undefined = this.byHash.get(key)
    if (seq === undefined) return
    this.bySeq.removeSync(seq)
    this.byHash.removeSync(key)
  }

  all(): SignedTx[] {
    const out: SignedTx[] = []
    for (const { value } of this.bySeq.getRange({})) out.push(value)
    return out
  }

  count(): number {
    return (this.byHash.getStats() as { entryCount: number }).entryCount
  }
}
