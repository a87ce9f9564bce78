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
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { ArchiveEvent, SnapshotManifest } from '../../generated/types.ts'
import type { CommittedBlock } from '../domain.ts'
import { SnapshotArchiveFailed } from '../errors.ts'
import { archiveStatus } from '../events/status.ts'
import type { StatusEvent } from '../events/types.ts'
import { syncDirectory, writeFileAtomically } from '../fs-atomic.ts'
import type { Logger } from '../log.ts'
import { type ArchivedBlock, type ArchivedRange, rootOfEntries, type Store, type WorldSnapshot } from '../store/index.ts'
import { Keyspace } from '../store/keyspace.ts'
import { DamagedFileError, readBlocks, readEntries, verifyEntryFile, writeEntryFile } from './file.ts'

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

/** A manifest as Keel writes it: heights are plain numbers (blocks are u32). */
export interface Manifest extends SnapshotManifest {
  height: number
  genesis: number
}

const fail = (message: string): SnapshotArchiveFailed => new SnapshotArchiveFailed(message)
const NOT_EXISTED = 'manifest not existed'

/** RFC 3339 to the second, UTC (the manifest's `date`, as the real node writes it). */
function manifestDate(ns: bigint): string {
  return `${new Date(Number(ns / 1_000_000n)).toISOString().slice(0, 19)}Z`
}

export function createArchiveService(options: ArchiveServiceOptions): ArchiveService {
  const { store, log, publish } = options
  /** one line per batch of a long operation: in the log and to system-status subscribers */
  const progress = (message: string): void => {
    log.info(message)
    options.publishStatus(archiveStatus.progress(message))
  }
  const snapshotDir = join(options.dataDir, 'snapshots')
  const archiveDir = join(options.dataDir, 'archive')
  mkdirSync(snapshotDir, { recursive: true })
  mkdirSync(archiveDir, { recursive: true })
  const snapPath = (id: string): string => join(snapshotDir, `${id}.snap`)
  const manifestPath = (id: string): string => join(snapshotDir, `${id}.json`)
  const archivePath = (id: string): string => join(archiveDir, `${id}.arc`)

  /** made snapshots, oldest first */
  const manifests = new Map<string, Manifest>()
  /** height -> id of snapshots waiting for their block */
  const requests = new Map<number, string>()
  /** id -> height of snapshots being written */
  const making = new Map<string, number>()
  const background = new Set<Promise<unknown>>()
  /** the archive or restore running in this process */
  let running: string | undefined

  const track = (work: Promise<unknown>): void => {
    background.add(work)
    void work.finally(() => background.delete(work))
  }
  const pause = (): Promise<void> =>
    options.testBatchDelayMs > 0 ? new Promise((resolve) => setTimeout(resolve, options.testBatchDelayMs)) : Promise.resolve()
  const removeFile = (path: string): void => {
    if (existsSync(path)) unlinkSync(path)
  }

  const manifestOf = (id: string): Manifest => {
    const manifest = manifests.get(id)
    if (manifest !== undefined) return manifest
    for (const [height, requested] of requests)
      if (requested === id) throw fail(`snapshot ${id} is not made yet: it waits for block ${height} (chain height ${store.height()})`)
    if (making.has(id)) throw fail(`snapshot ${id} is not made yet: it is being written`)
    throw fail(NOT_EXISTED)
  }

  const heightTaken = (height: number): boolean =>
    requests.has(height) || [...making.values()].includes(height) || [...manifests.values()].some((m) => m.height === height)

  /** Records a snapshot to take when block `height` is written (kept across restarts). */
  const request = (height: number, id: string): void => {
    requests.set(height, id)
    track(store.putSnapshotRequest(height, id).catch((error: unknown) => log.error(`snapshot ${id}: recording the request failed`, error)))
  }

  /**
   * Takes the snapshot requested for block `height`, just written (onBlock) or the latest at start
   * (recover); reports the outcome through an event.
   */
  const take = (height: number, id: string): void => {
    const world = store.worldAt(height)
    if (world === undefined) {
      const message = `cannot snapshot block ${height}: the state has moved on to block ${store.height()}; request a snapshot again`
      log.warn(`snapshot ${id}: ${message}`)
      track(store.removeSnapshotRequest(height))
      publish({ type: 'make_snapshot', filterId: id, success: false, message })
      return
    }
    write(world, id, true)
  }

  /** Writes the snapshot file and then its manifest, in the background; reports through an event. */
  const write = (world: WorldSnapshot, id: string, requested: boolean): void => {
    const report = (success: boolean, message: string): void => publish({ type: 'make_snapshot', filterId: id, success, message })
    const height = world.height
    const manifest: Manifest = {
      height,
      genesis: store.genesisNumber(),
      hash: world.hash,
      filterId: id,
      merkleRoot: world.root,
      date: manifestDate(options.nowNs()),
      namespace: options.namespace,
    }
    making.set(id, height)
    const work = (async () => {
      let count: number
      try {
        count = await writeEntryFile(snapPath(id), world.entries())
        writeFileAtomically(manifestPath(id), `${JSON.stringify(manifest)}\n`)
        manifests.set(id, manifest)
      } catch (error) {
        // a temporary file is removed by the write that failed (fs-atomic.ts)
        removeFile(snapPath(id))
        log.error(`snapshot ${id} of block ${height} failed`, error)
        report(false, `snapshot of block ${height} failed: ${(error as Error).message}`)
        return
      } finally {
        world.close()
        making.delete(id)
      }
      log.info(`snapshot ${id} of block ${height}: ${count} state entries`)
      report(true, '')
      // a request left behind is cleared at the next start (recover)
      if (requested)
        await store.removeSnapshotRequest(height).catch((error: unknown) => log.error(`snapshot ${id}: clearing its request failed`, error))
    })()
    track(work)
  }

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
    track(job.catch(() => {}))
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

  const txCount = (blocks: ArchivedBlock[]): number =>
    blocks.reduce((sum, b) => sum + b.entries.filter((e) => e.space === Keyspace.txs || e.space === Keyspace.invalidTxs).length, 0)

  /** The archived blocks of `range`, streamed from its file once the whole file is verified. */
  const archivedBlocks = async (range: ArchivedRange): Promise<AsyncIterable<ArchivedBlock>> => {
    const path = archivePath(range.snapshotId)
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
      if (batch.length === options.batchBlocks) await flush()
    }
    if (batch.length > 0) await flush()
  }

  /** The removal half of an archive (also run by recovery), from the archive file. */
  const removeRange = async (range: ArchivedRange): Promise<void> => {
    await inBatches(`archive ${range.snapshotId}`, range, await archivedBlocks(range), (batch) => store.removeArchived(batch))
    await store.finishArchiveOp()
  }

  const archiveRange = async (range: ArchivedRange): Promise<void> => {
    const file = archivePath(range.snapshotId)
    log.info(`archive ${range.snapshotId}: writing blocks ${range.from}-${range.to} to ${file}`)
    try {
      const entries = async function* () {
        for (let number = range.from; number <= range.to; number++) {
          yield* store.blockEntries(number).entries
          if ((number - range.from + 1) % options.batchBlocks === 0) {
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
    removeFile(archivePath(range.snapshotId))
    syncDirectory(archiveDir)
    log.info(`restore ${range.snapshotId}: blocks ${range.from}-${range.to} restored; the genesis is block ${range.from}`)
  }

  const restoreRange = async (range: ArchivedRange): Promise<void> => {
    // read and verified before anything changes: a damaged file fails the restore cleanly
    const blocks = await archivedBlocks(range)
    await store.startRestore(range)
    await putBack(range, blocks)
  }

  const restoreLatest = (): Promise<void> => {
    const range = store.archiveRecord().ranges.at(-1)
    if (range === undefined) return Promise.resolve()
    return reported('do_restore', range.snapshotId, () => restoreRange(range)).then(restoreLatest)
  }

  // load what earlier runs left
  for (const name of readdirSync(snapshotDir).sort()) {
    if (!name.endsWith('.json')) continue
    try {
      const manifest = JSON.parse(readFileSync(join(snapshotDir, name), 'utf8')) as Manifest
      manifests.set(manifest.filterId, manifest)
    } catch (error) {
      log.error(`snapshot manifest ${name} is unreadable; ignoring it`, error)
    }
  }
  const ordered = [...manifests.values()].sort((a, b) => a.date.localeCompare(b.date) || a.height - b.height)
  manifests.clear()
  for (const manifest of ordered) manifests.set(manifest.filterId, manifest)
  for (const { height, snapshotId } of store.snapshotRequests()) requests.set(height, snapshotId)

  return {
    snapshot(blockNumber) {
      const height = store.height()
      if (blockNumber === 0 && height === 0) throw fail('there is no block yet: snapshot a block once one is written')
      if (blockNumber !== 0 && blockNumber < height) throw fail('trigger block number is less than chain height')
      if (!Number.isSafeInteger(blockNumber) || blockNumber > 0xffffffff)
        throw fail(`trigger block number ${blockNumber} is beyond the largest block number ${0xffffffff}`)
      const duplicate = (at: number): void => {
        if (heightTaken(at)) throw fail('duplicate snapshot requirement for same height')
      }
      if (blockNumber > height) {
        duplicate(blockNumber)
        const id = options.newId()
        request(blockNumber, id)
        return id
      }
      // now: the state is read here, before the id is returned, so the snapshot is of this moment
      const world = store.worldAt(height)
      if (world === undefined) {
        // block height+1 is being committed: its state is already in LMDB but its listener has not
        // run yet, so it is the current state; the snapshot is taken there
        duplicate(height + 1)
        const id = options.newId()
        log.info(`snapshot ${id}: block ${height + 1} is being written; the snapshot is taken at it`)
        request(height + 1, id)
        return id
      }
      try {
        duplicate(height)
      } catch (error) {
        world.close()
        throw error
      }
      const id = options.newId()
      write(world, id, false)
      return id
    },
    querySnapshotExist: (id) => manifests.has(id),
    readSnapshot: (id) => manifestOf(id),
    listSnapshot: () => [...manifests.values()],
    deleteSnapshot(id) {
      for (const [height, requested] of requests) {
        if (requested !== id) continue
        requests.delete(height)
        track(store.removeSnapshotRequest(height))
        publish({ type: 'delete_snapshot', filterId: id, success: true, message: '' })
        return
      }
      manifestOf(id)
      const record = store.archiveRecord()
      const range = record.ranges.find((r) => r.snapshotId === id) ?? (record.op?.range.snapshotId === id ? record.op.range : undefined)
      if (range !== undefined)
        throw fail(`snapshot ${id} holds archived blocks ${range.from}-${range.to}; restore them first (archive_restore)`)
      if (running?.includes(id)) throw fail(`${running} is running; try again when it has finished`)
      manifests.delete(id)
      // the manifest goes first: without it the snapshot no longer exists, whatever happens next
      removeFile(manifestPath(id))
      syncDirectory(snapshotDir)
      removeFile(snapPath(id))
      publish({ type: 'delete_snapshot', filterId: id, success: true, message: '' })
    },
    async checkSnapshot(id) {
      const manifest = manifestOf(id)
      let root: string | undefined
      try {
        await verifyEntryFile(snapPath(id))
        root = await rootOfEntries(readEntries(snapPath(id)))
      } catch (error) {
        if (!(error instanceof DamagedFileError)) throw error
        log.warn(`check of snapshot ${id}: ${error.message}`)
        return false
      }
      // an archived block's root was compared when the snapshot was made (worldAt); the manifest keeps it
      const blockRoot = store.getBlock(manifest.height)?.merkleRoot.toLowerCase() ?? manifest.merkleRoot
      return root !== undefined && root === manifest.merkleRoot && root === blockRoot
    },
    async archive(id, sync) {
      const manifest = manifestOf(id)
      idle()
      const genesis = store.archiveRecord().genesis
      if (manifest.height <= genesis)
        throw fail(
          `nothing to archive: snapshot ${id} is at block ${manifest.height}, and no live block is below it (the genesis is block ${genesis})`,
        )
      const range = { snapshotId: id, from: genesis, to: manifest.height - 1 }
      await run(`the archive of snapshot ${id}`, sync, () => reported('do_archive', id, () => archiveRange(range)))
    },
    async restore(id, sync) {
      const ranges = store.archiveRecord().ranges
      const range = ranges.find((r) => r.snapshotId === id)
      if (range === undefined && !manifests.has(id)) throw fail(NOT_EXISTED)
      idle()
      if (range === undefined) throw fail(`snapshot ${id} has no archived blocks to restore`)
      const latest = ranges.at(-1)!
      if (latest.snapshotId !== id)
        throw fail(
          `restore snapshot ${latest.snapshotId} first: it archived the later blocks ${latest.from}-${latest.to} (archive_restoreAll restores every archive)`,
        )
      await run(`the restore of snapshot ${id}`, sync, () => reported('do_restore', id, () => restoreRange(range)))
    },
    async restoreAll(sync) {
      idle()
      await run('a restore of every archive', sync, restoreLatest)
    },
    queryArchiveExist(id) {
      manifestOf(id)
      return store.archiveRecord().ranges.some((r) => r.snapshotId === id)
    },
    onBlock(block) {
      const id = requests.get(block.header.number)
      if (id === undefined) return
      requests.delete(block.header.number)
      take(block.header.number, id)
    },
    async recover() {
      const op = store.archiveRecord().op
      if (op !== undefined) {
        log.warn(`completing the interrupted ${op.kind} of snapshot ${op.range.snapshotId} (blocks ${op.range.from}-${op.range.to})`)
        if (op.kind === 'archive') await removeRange(op.range)
        else await putBack(op.range, await archivedBlocks(op.range))
      }
      const referenced = new Set(store.archiveRecord().ranges.map((r) => `${r.snapshotId}.arc`))
      for (const name of readdirSync(archiveDir)) {
        if (referenced.has(name)) continue
        log.warn(`removing ${join(archiveDir, name)}: left by an archive or restore that did not complete`)
        unlinkSync(join(archiveDir, name))
      }
      for (const name of readdirSync(snapshotDir)) {
        const id = name.split('.')[0]
        if (name.endsWith('.tmp') || (name.endsWith('.snap') && !manifests.has(id))) {
          log.warn(`removing ${join(snapshotDir, name)}: left by a snapshot that did not complete`)
          unlinkSync(join(snapshotDir, name))
        }
      }
      const height = store.height()
      for (const [at, id] of [...requests]) {
        if (at > height && !manifests.has(id)) continue
        requests.delete(at)
        if (manifests.has(id)) await store.removeSnapshotRequest(at)
        else if (at === height) take(at, id)
        else {
          log.warn(`snapshot ${id} for block ${at} was not made before the node stopped, and that state is gone; request it again`)
          await store.removeSnapshotRequest(at)
        }
      }
    },
    async close() {
      while (background.size > 0) await Promise.allSettled([...background])
    },
  }
}
