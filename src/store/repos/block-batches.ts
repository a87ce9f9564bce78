/**
 * Keyspace 24 `blockBatches`: for a block ordered by consensus, the batch it executed (every tx
 * hash the batch named, in order: the block's valid and invalid txs interleaved as executed, plus
 * any that were skipped because they were already committed) and the proof that a quorum
 * committed it: the proof signs the batch as named. Another node replays the block from this (state transfer, NVP sync) and checks
 * the proof; solo blocks have no entry.
 */
import type { Hex } from '../../domain.ts'
import { isBlockNumber, unpackHex } from '../codec.ts'
import { type Db, encodeFor, type Write } from '../db.ts'

export interface BlockBatch {
  /** consensus view the batch was committed in */
  view: number
  /** every tx hash the batch named, in order (the proof covers exactly this list) */
  txHashes: Hex[]
  /** the commit certificate, as the consensus codec writes it */
  proof: Uint8Array
  /**
   * the batch's own time, ns, which the proof signs; the block's time differs when the producer
   * moved it past its parent's (a view change's empty batch has time 0). Undefined in records
   * written before it was kept.
   */
  timestamp?: bigint
}

interface StoredBatch {
  view: number
  txHashes: Uint8Array
  proof: Uint8Array
  /** u64 big-endian: bigints do not survive the store's own msgpack beyond 2^53 */
  timestamp?: Uint8Array
}

export class BlockBatchesRepo {
  constructor(private readonly db: Db) {}

  get(number: number): BlockBatch | undefined {
    if (!isBlockNumber(number)) return undefined
    const stored: StoredBatch | undefined = this.db.get(number)
    if (stored === undefined) return undefined
    const batch: BlockBatch = { view: stored.view, txHashes: unpackHex(stored.txHashes, 32), proof: new Uint8Array(stored.proof) }
    if (stored.timestamp !== undefined && stored.timestamp.length === 8) {
      batch.timestamp = Buffer.from(stored.timestamp.buffer, stored.timestamp.byteOffset, 8).readBigUInt64BE()
    }
    return batch
  }

  /** the write that stores block `number`'s batch; hash keys are 32 raw bytes each */
  writes(out: Write[], number: number, batch: { view: number; txKeys: Buffer[]; proof: Uint8Array; timestamp?: bigint }): void {
    const stored: StoredBatch = { view: batch.view, txHashes: Buffer.concat(batch.txKeys), proof: batch.proof }
    if (batch.timestamp !== undefined) {
      const time = Buffer.alloc(8)
      time.writeBigUInt64BE(batch.timestamp)
      stored.timestamp = time
    }
    out.push({ db: this.db, key: number, value: encodeFor(this.db, stored) })
  }
}
