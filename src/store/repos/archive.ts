/**
 * Meta 'archive', keyspaces 21 `snapshotRequests` and 22 `archivedTxs`: what archive_archive moved
 * out of the live store, the operation in progress, and the snapshots still waiting for their block.
 */
import type { Hex } from '../../domain.ts'
import { tryFixedBytes, u32be } from '../codec.ts'
import { type Db, ledgerWrite } from '../db.ts'

/** Blocks `from`..`to` (inclusive), moved to the archive file of snapshot `snapshotId`. */
export interface ArchivedRange {
  snapshotId: string
  from: number
  to: number
}

export interface ArchiveRecord {
  /** lowest block still in the live store (1 when nothing is archived) */
  genesis: number
  /** archived ranges, oldest first; they are contiguous: ranges[0].from = 1, each next one starts after the previous */
  ranges: ArchivedRange[]
  /**
   * An archive or restore that started and has not finished: recovery at open completes it from
   * its archive file. `genesis` already tells readers the outcome (an archive raises it when it
   * starts, a restore lowers it when it ends), so a half-moved range is never visible.
   */
  op?: { kind: 'archive' | 'restore'; range: ArchivedRange }
}

const EMPTY_RECORD: ArchiveRecord = { genesis: 1, ranges: [] }

export class ArchiveRepo {
  constructor(
    private readonly meta: Db,
    private readonly requests: Db,
    private readonly archivedTxs: Db,
  ) {}

  record(): ArchiveRecord {
    return this.meta.get('archive') ?? EMPTY_RECORD
  }

  /** inside a write transaction */
  putRecord(record: ArchiveRecord): void {
    this.meta.putSync('archive', record)
  }

  /** block number of an archived tx */
  archivedBlockOf(hash: Hex): number | undefined {
    const key = tryFixedBytes(hash, 32)
    const value: Buffer | undefined = key && this.archivedTxs.get(key)
    return value === undefined ? undefined : value.readUInt32BE(0)
  }

  hasArchivedTx(key: Buffer): boolean {
    return this.archivedTxs.doesExist(key)
  }

  /** inside a write transaction */
  markArchived(key: Buffer, blockNumber: number): void {
    this.archivedTxs.putSync(key, u32be(blockNumber))
  }

  /** inside a write transaction */
  unmarkArchived(key: Buffer): void {
    this.archivedTxs.removeSync(key)
  }

  snapshotRequests(): { height: number; snapshotId: string }[] {
    const out: { height: number; snapshotId: string }[] = []
    for (const { key, value } of this.requests.getRange({})) out.push({ height: key as number, snapshotId: value })
    return out
  }

  async putSnapshotRequest(height: number, snapshotId: string): Promise<void> {
    await ledgerWrite(this.requests.put(height, snapshotId))
  }

  async removeSnapshotRequest(height: number): Promise<void> {
    await ledgerWrite(this.requests.remove(height))
  }
}
