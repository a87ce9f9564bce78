/**
 * The archive service (protocol.md §5 "archive"): snapshots of the world state, and moving old
 * blocks out of the live store into archive files and back.
 *
 * Files, under the namespace's data directory:
 * - `snapshots/<id>.snap`: the world state at the snapshot's height (file.ts format), then
 *   `snapshots/<id>.json`: its manifest. The manifest is written last, so it exists only for a
 *   whole snapshot; a `.snap` without one is the debris of a crash and is removed at start.
 * - `archive/<id>.arc`: the blocks archived with snapshot `<id>` (file.ts format).
 *
 * Archiving snapshot S at height h moves blocks genesis..h-1; block h stays and becomes the
 * genesis (protocol.md: archive_queryArchiveExist is "genesis == manifest height"), so the live
 * chain still starts at a block whose state S holds. Archives stack: a later one continues where
 * the previous stopped, and restores go newest first. What moves and what stays: store/types.ts
 * ArchivedBlock; the world state never moves (it is the state of the live tip).
 *
 * Crash consistency (reliability.md F2): each operation is resumable and idempotent.
 * - archive: write and fsync the archive file; one LMDB transaction records the operation and
 *   raises the genesis (readers see the range gone at once); remove the entries in transactions
 *   of `batchBlocks` blocks; one transaction records the range as archived. A crash before the
 *   marker leaves an unreferenced file (removed at start); after it, start-up finishes the
 *   removal from the file.
 * - restore: read and verify the file; record the operation; write the entries back in batches
 *   (readers do not see them: they are below the genesis); one transaction lowers the genesis and
 *   drops the range; delete the file. Start-up finishes a recorded restore the same way.
 *
 * Events (sub_newArchiveSubscription): make_snapshot, delete_snapshot, do_archive and, a Keel
 * addition, do_restore (one per restored snapshot, archive_restoreAll included). Progress of long
 * operations goes to the log with block and transaction counts.
 *
 * Two halves: snapshots.ts makes, lists, checks and deletes snapshots; moves.ts archives and
 * restores the blocks below one. shared.ts holds their files and background work.
 */
import type { ArchiveEvent } from '../../generated/types.ts'
import type { CommittedBlock } from '../domain.ts'
import type { StatusEvent } from '../events/types.ts'
import type { Logger } from '../log.ts'
import type { Store } from '../store/index.ts'
import { createBlockMoves } from './moves.ts'
import { archiveFiles, createBackground, type Manifest } from './shared.ts'
import { createSnapshots } from './snapshots.ts'

export type { Manifest } from './shared.ts'

export interface ArchiveServiceOptions {
  store: Store
  /** the namespace's data directory */
  dataDir: string
  namespace: string
  publish: (event: ArchiveEvent) => void
  /** progress of long operations as system-status events (module `archive`, subType `progress`) */
  publishStatus: (event: StatusEvent) => void
  nowNs: () => bigint
  log: Logger
  /** blocks per LMDB transaction when archiving or restoring */
  batchBlocks: number
  /** tests only: pause after each batch (0 = off) */
  testBatchDelayMs: number
  newId: () => string
}

export interface ArchiveService {
  /** the snapshot id; the snapshot itself is made at once (0 or the current height) or when block `blockNumber` is written */
  snapshot(blockNumber: number): string
  querySnapshotExist(id: string): boolean
  readSnapshot(id: string): Manifest
  listSnapshot(): Manifest[]
  deleteSnapshot(id: string): void
  checkSnapshot(id: string): Promise<boolean>
  archive(id: string, sync: boolean): Promise<void>
  restore(id: string, sync: boolean): Promise<void>
  restoreAll(sync: boolean): Promise<void>
  queryArchiveExist(id: string): boolean
  /** called for each written block before the next one is produced: takes a snapshot requested for it */
  onBlock(block: CommittedBlock): void
  /** at start: finishes an interrupted archive or restore, removes crash debris, takes a snapshot due now */
  recover(): Promise<void>
  /** waits for the work in the background */
  close(): Promise<void>
}

export function createArchiveService(options: ArchiveServiceOptions): ArchiveService {
  const files = archiveFiles(options.dataDir)
  const background = createBackground()
  const snapshots = createSnapshots({
    ...options,
    files,
    background,
    // a snapshot whose blocks are moving cannot be deleted; the moves are made below, before any call
    running: () => moves.running(),
  })
  const moves = createBlockMoves({ ...options, files, background, snapshots })
  return {
    snapshot: snapshots.snapshot,
    querySnapshotExist: snapshots.has,
    readSnapshot: snapshots.manifestOf,
    listSnapshot: snapshots.list,
    deleteSnapshot: snapshots.delete,
    checkSnapshot: snapshots.check,
    archive: moves.archive,
    restore: moves.restore,
    restoreAll: moves.restoreAll,
    queryArchiveExist: moves.queryArchiveExist,
    onBlock: snapshots.onBlock,
    async recover() {
      // the blocks first: an interrupted archive or restore finishes before the snapshots' debris goes
      await moves.recover()
      await snapshots.recover()
    },
    close: () => background.settle(),
  }
}
