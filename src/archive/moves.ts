/**
 * The block-moving half of the archive service (service.ts): archiving the blocks below a
 * snapshot into an archive file and restoring them, one operation at a time, each resumable after
 * a crash (service.ts "Crash consistency").
 */
import { readdirSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { ArchiveEvent } from '../../generated/types.ts'
import { archiveStatus } from '../events/status.ts'
import type { StatusEvent } from '../events/types.ts'
import { syncDirectory } from '../fs-atomic.ts'
import type { Logger } from '../log.ts'
import type { ArchivedBlock, ArchivedRange, Store } from '../store/index.ts'
import { Keyspace } from '../store/keyspace.ts'
import { DamagedFileError, readBlocks, verifyEntryFile, writeEntryFile } from './file.ts'
import { type ArchiveFiles, type Background, fail, type Manifest, NOT_EXISTED, removeFile } from './shared.ts'

export interface BlockMoveModules {
  store: Store
  files: ArchiveFiles
  background: Background
  /** the snapshots the blocks move with */
  snapshots: { has(id: string): boolean; manifestOf(id: string): Manifest }
  publish: (event: ArchiveEvent) => void
  /** progress of long operations as system-status events (module `archive`, subType `progress`) */
  publishStatus: (event: StatusEvent) => void
  log: Logger
  /** blocks per LMDB transaction when archiving or restoring */
  batchBlocks: number
  /** tests only: pause after each batch (0 = off) */
  testBatchDelayMs: number
}

export interface BlockMoves {
  archive(id: string, sync: boolean): Promise<void>
  restore(id: string, sync: boolean): Promise<void>
  restoreAll(sync: boolean): Promise<void>
  queryArchiveExist(id: string): boolean
  /** the archive or restore running in this process, by what it does */
  running(): string | undefined
  /** at start: finishes an interrupted archive or restore, removes the archive files nothing refers to */
  recover(): Promise<void>
}

export function createBlockMoves(modules: BlockMoveModules): BlockMoves {
  const { store, files, publish, log } = modules
  const { archive: archiveSteps, restore: restoreSteps, archivedBlocks } = createMoveSteps(modules)
  /** the archive or restore running in this process */
  let running: string | undefined

  const idle = (): void => {
    if (running !== undefined) throw fail(`${running} is running; try again when it has finished`)
    const op = store.archiveRecord().op
    if (op !== undefined)
      throw fail(`an interrupted ${op.kind} of snapshot ${op.range.snapshotId} is pending; restarting the node completes it`)
  }

  /** Runs an archive or restore, reporting its outcome; `sync` waits for it and fails with its reason. */
  const run = async (what: string, sync: boolean, work: () => Promise<void>): Promise<void> => {
    running = what
    const job = work().finally(() => {
      running = undefined
    })
    modules.background.track(job.catch(() => {}))
    if (!sync) return
    try {
      await job
    } catch (error) {
      throw fail((error as Error).message)
    }
  }

  /** One archive or restore step with its event: success, or failure with the reason. */
  const reported = async (type: ArchiveEvent['type'], id: string, step: () => Promise<void>): Promise<void> => {
    try {
      await step()
      publish({ type, filterId: id, success: true, message: '' })
    } catch (error) {
      const message = error instanceof DamagedFileError ? error.message : `${type} of snapshot ${id} failed: ${(error as Error).message}`
      log.error(message, error)
      publish({ type, filterId: id, success: false, message })
      throw new Error(message)
    }
  }

  const restoreLatest = (): Promise<void> => {
    const range = store.archiveRecord().ranges.at(-1)
    if (range === undefined) return Promise.resolve()
    return reported('do_restore', range.snapshotId, () => restoreSteps.whole(range)).then(restoreLatest)
  }

  return {
    async archive(id, sync) {
      const manifest = modules.snapshots.manifestOf(id)
      idle()
      const genesis = store.archiveRecord().genesis
      if (manifest.height <= genesis)
        throw fail(
          `nothing to archive: snapshot ${id} is at block ${manifest.height}, and no live block is below it (the genesis is block ${genesis})`,
        )
      const range = { snapshotId: id, from: genesis, to: manifest.height - 1 }
      await run(`the archive of snapshot ${id}`, sync, () => reported('do_archive', id, () => archiveSteps.whole(range)))
    },
    async restore(id, sync) {
      const ranges = store.archiveRecord().ranges
      const range = ranges.find((r) => r.snapshotId === id)
      if (range === undefined && !modules.snapshots.has(id)) throw fail(NOT_EXISTED)
      idle()
      if (range === undefined) throw fail(`snapshot ${id} has no archived blocks to restore`)
      const latest = ranges.at(-1)!
      if (latest.snapshotId !== id)
        throw fail(
          `restore snapshot ${latest.snapshotId} first: it archived the later blocks ${latest.from}-${latest.to} (archive_restoreAll restores every archive)`,
        )
      await run(`the restore of snapshot ${id}`, sync, () => reported('do_restore', id, () => restoreSteps.whole(range)))
    },
    async restoreAll(sync) {
      idle()
      await run('a restore of every archive', sync, restoreLatest)
    },
    queryArchiveExist(id) {
      modules.snapshots.manifestOf(id)
      return store.archiveRecord().ranges.some((r) => r.snapshotId === id)
    },
    running: () => running,
    async recover() {
      const op = store.archiveRecord().op
      if (op !== undefined) {
        log.warn(`completing the interrupted ${op.kind} of snapshot ${op.range.snapshotId} (blocks ${op.range.from}-${op.range.to})`)
        if (op.kind === 'archive') await archiveSteps.removeRange(op.range)
        else await restoreSteps.putBack(op.range, await archivedBlocks(op.range))
      }
      const referenced = new Set(store.archiveRecord().ranges.map((r) => `${r.snapshotId}.arc`))
      for (const name of readdirSync(files.archiveDir)) {
        if (referenced.has(name)) continue
        log.warn(`removing ${join(files.archiveDir, name)}: left by an archive or restore that did not complete`)
        unlinkSync(join(files.archiveDir, name))
      }
    },
  }
}

/**
 * The steps of an archive and of a restore over the store and the archive files, each half also
 * what recovery runs to finish an interrupted one.
 */
function createMoveSteps(modules: Omit<BlockMoveModules, 'snapshots' | 'publish' | 'background'>) {
  const { store, files, log } = modules
  /** one line per batch of a long operation: in the log and to system-status subscribers */
  const progress = (message: string): void => {
    log.info(message)
    modules.publishStatus(archiveStatus.progress(message))
  }
  const pause = (): Promise<void> =>
    modules.testBatchDelayMs > 0 ? new Promise((resolve) => setTimeout(resolve, modules.testBatchDelayMs)) : Promise.resolve()
  const txCount = (blocks: ArchivedBlock[]): number =>
    blocks.reduce((sum, b) => sum + b.entries.filter((e) => e.space === Keyspace.txs || e.space === Keyspace.invalidTxs).length, 0)

  /** The archived blocks of `range`, streamed from its file once the whole file is verified. */
  const archivedBlocks = async (range: ArchivedRange): Promise<AsyncIterable<ArchivedBlock>> => {
    const path = files.archivePath(range.snapshotId)
    const summary = await verifyEntryFile(path)
    if (summary.firstBlock !== range.from || summary.lastBlock !== range.to)
      throw new DamagedFileError(`${path} does not hold blocks ${range.from}-${range.to}`)
    return readBlocks(path)
  }

  /** Applies `step` to the blocks of `range` in batches of `batchBlocks`, logging progress. */
  const inBatches = async (
    verb: string,
    range: ArchivedRange,
    blocks: AsyncIterable<ArchivedBlock>,
    step: (batch: ArchivedBlock[]) => Promise<void>,
  ): Promise<void> => {
    const total = range.to - range.from + 1
    let done = 0
    let txs = 0
    let batch: ArchivedBlock[] = []
    const flush = async (): Promise<void> => {
      await step(batch)
      done += batch.length
      txs += txCount(batch)
      progress(`${verb}: ${done} of ${total} blocks (${txs} transactions), up to block ${batch.at(-1)!.number}`)
      batch = []
      await pause()
    }
    for await (const block of blocks) {
      batch.push(block)
      if (batch.length === modules.batchBlocks) await flush()
    }
    if (batch.length > 0) await flush()
  }

  /** The removal half of an archive (also run by recovery), from the archive file. */
  const removeRange = async (range: ArchivedRange): Promise<void> => {
    await inBatches(`archive ${range.snapshotId}`, range, await archivedBlocks(range), (batch) => store.removeArchived(batch))
    await store.finishArchiveOp()
  }

  const archiveRange = async (range: ArchivedRange): Promise<void> => {
    const file = files.archivePath(range.snapshotId)
    log.info(`archive ${range.snapshotId}: writing blocks ${range.from}-${range.to} to ${file}`)
    try {
      const entries = async function* () {
        for (let number = range.from; number <= range.to; number++) {
          yield* store.blockEntries(number).entries
          if ((number - range.from + 1) % modules.batchBlocks === 0) {
            progress(`archive ${range.snapshotId}: ${number - range.from + 1} of ${range.to - range.from + 1} blocks written to the file`)
            await pause()
          }
        }
      }
      await writeEntryFile(file, entries())
      await store.startArchive(range)
    } catch (error) {
      // nothing in the store changed: the file is all there is to undo (its temporary file went with the failed write)
      removeFile(file)
      throw error
    }
    await removeRange(range)
    log.info(`archive ${range.snapshotId}: blocks ${range.from}-${range.to} archived; the genesis is block ${range.to + 1}`)
  }

  /** The write-back half of a restore (also run by recovery), then the file goes. */
  const putBack = async (range: ArchivedRange, blocks: AsyncIterable<ArchivedBlock>): Promise<void> => {
    await inBatches(`restore ${range.snapshotId}`, range, blocks, (batch) => store.putRestored(batch))
    await store.finishArchiveOp()
    removeFile(files.archivePath(range.snapshotId))
    syncDirectory(files.archiveDir)
    log.info(`restore ${range.snapshotId}: blocks ${range.from}-${range.to} restored; the genesis is block ${range.from}`)
  }

  const restoreRange = async (range: ArchivedRange): Promise<void> => {
    // read and verified before anything changes: a damaged file fails the restore cleanly
    const blocks = await archivedBlocks(range)
    await store.startRestore(range)
    await putBack(range, blocks)
  }

  return {
    archivedBlocks,
    archive: { whole: archiveRange, removeRange },
    restore: { whole: restoreRange, putBack },
  }
}
