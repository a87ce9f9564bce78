/**
 * The snapshot half of the archive service (service.ts): snapshots of the world state, made now or
 * when a requested block is written, their manifests, their check and deletion, and the debris of
 * a snapshot a crash interrupted.
 */
import { readdirSync, readFileSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { ArchiveEvent } from '../../generated/types.ts'
import type { CommittedBlock } from '../domain.ts'
import { syncDirectory, writeFileAtomically } from '../fs-atomic.ts'
import type { Logger } from '../log.ts'
import { rootOfEntries, type Store, type WorldSnapshot } from '../store/index.ts'
import { DamagedFileError, readEntries, verifyEntryFile, writeEntryFile } from './file.ts'
import { type ArchiveFiles, type Background, fail, type Manifest, NOT_EXISTED, removeFile } from './shared.ts'

export interface SnapshotModules {
  store: Store
  files: ArchiveFiles
  background: Background
  publish: (event: ArchiveEvent) => void
  log: Logger
  nowNs: () => bigint
  namespace: string
  newId: () => string
  /** the archive or restore running, which a snapshot it moves blocks for must outlive */
  running(): string | undefined
}

export interface Snapshots {
  /** the snapshot id; the snapshot itself is made at once (0 or the current height) or when block `blockNumber` is written */
  snapshot(blockNumber: number): string
  has(id: string): boolean
  /** the manifest of a made snapshot; fails saying why when it is not (yet) made */
  manifestOf(id: string): Manifest
  list(): Manifest[]
  delete(id: string): void
  check(id: string): Promise<boolean>
  /** takes a snapshot requested for this block */
  onBlock(block: CommittedBlock): void
  /** at start: removes what an interrupted snapshot left, takes a snapshot due now, forgets one that can no longer be made */
  recover(): Promise<void>
}

/** RFC 3339 to the second, UTC (the manifest's `date`, as the real node writes it). */
function manifestDate(ns: bigint): string {
  return `${new Date(Number(ns / 1_000_000n)).toISOString().slice(0, 19)}Z`
}

/** What the service knows of its snapshots: those made, those requested for a later block, those being written. */
interface SnapshotBook {
  /** made snapshots, oldest first */
  manifests: Map<string, Manifest>
  /** height -> id of snapshots waiting for their block */
  requests: Map<number, string>
  /** id -> height of snapshots being written */
  making: Map<string, number>
}

/** The book as earlier runs left it: the manifests on disk, the requests in the store. */
function loadSnapshotBook(store: Store, files: ArchiveFiles, log: Logger): SnapshotBook {
  const found: Manifest[] = []
  for (const name of readdirSync(files.snapshotDir).sort()) {
    if (!name.endsWith('.json')) continue
    try {
      found.push(JSON.parse(readFileSync(join(files.snapshotDir, name), 'utf8')) as Manifest)
    } catch (error) {
      log.error(`snapshot manifest ${name} is unreadable; ignoring it`, error)
    }
  }
  // one manifest per id (the last file read wins), oldest first
  const byId = new Map(found.map((manifest) => [manifest.filterId, manifest]))
  const ordered = [...byId.values()].sort((a, b) => a.date.localeCompare(b.date) || a.height - b.height)
  return {
    manifests: new Map(ordered.map((manifest) => [manifest.filterId, manifest])),
    requests: new Map(store.snapshotRequests().map(({ height, snapshotId }) => [height, snapshotId])),
    making: new Map(),
  }
}

/** Requesting, taking and writing snapshots into the book. */
function createSnapshotWriter(book: SnapshotBook, modules: Omit<SnapshotModules, 'running' | 'newId'>) {
  const { store, files, background, publish, log } = modules
  const { manifests, requests, making } = book

  /** Records a snapshot to take when block `height` is written (kept across restarts). */
  const request = (height: number, id: string): void => {
    requests.set(height, id)
    background.track(
      store.putSnapshotRequest(height, id).catch((error: unknown) => log.error(`snapshot ${id}: recording the request failed`, error)),
    )
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
      background.track(store.removeSnapshotRequest(height))
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
      date: manifestDate(modules.nowNs()),
      namespace: modules.namespace,
    }
    making.set(id, height)
    const work = (async () => {
      let count: number
      try {
        count = await writeEntryFile(files.snapPath(id), world.entries())
        writeFileAtomically(files.manifestPath(id), `${JSON.stringify(manifest)}\n`)
        manifests.set(id, manifest)
      } catch (error) {
        // a temporary file is removed by the write that failed (fs-atomic.ts)
        removeFile(files.snapPath(id))
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
    background.track(work)
  }

  return { request, take, write }
}

export function createSnapshots(modules: SnapshotModules): Snapshots {
  const { store, files, background, publish, log } = modules
  const book = loadSnapshotBook(store, files, log)
  const { manifests, requests, making } = book
  const { request, take, write } = createSnapshotWriter(book, modules)

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
        const id = modules.newId()
        request(blockNumber, id)
        return id
      }
      // now: the state is read here, before the id is returned, so the snapshot is of this moment
      const world = store.worldAt(height)
      if (world === undefined) {
        // block height+1 is being committed: its state is already in LMDB but its listener has not
        // run yet, so it is the current state; the snapshot is taken there
        duplicate(height + 1)
        const id = modules.newId()
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
      const id = modules.newId()
      write(world, id, false)
      return id
    },
    has: (id) => manifests.has(id),
    manifestOf,
    list: () => [...manifests.values()],
    delete(id) {
      for (const [height, requested] of requests) {
        if (requested !== id) continue
        requests.delete(height)
        background.track(store.removeSnapshotRequest(height))
        publish({ type: 'delete_snapshot', filterId: id, success: true, message: '' })
        return
      }
      manifestOf(id)
      const record = store.archiveRecord()
      const range = record.ranges.find((r) => r.snapshotId === id) ?? (record.op?.range.snapshotId === id ? record.op.range : undefined)
      if (range !== undefined)
        throw fail(`snapshot ${id} holds archived blocks ${range.from}-${range.to}; restore them first (archive_restore)`)
      const running = modules.running()
      if (running?.includes(id)) throw fail(`${running} is running; try again when it has finished`)
      manifests.delete(id)
      // the manifest goes first: without it the snapshot no longer exists, whatever happens next
      removeFile(files.manifestPath(id))
      syncDirectory(files.snapshotDir)
      removeFile(files.snapPath(id))
      publish({ type: 'delete_snapshot', filterId: id, success: true, message: '' })
    },
    async check(id) {
      const manifest = manifestOf(id)
      let root: string | undefined
      try {
        await verifyEntryFile(files.snapPath(id))
        root = await rootOfEntries(readEntries(files.snapPath(id)))
      } catch (error) {
        if (!(error instanceof DamagedFileError)) throw error
        log.warn(`check of snapshot ${id}: ${error.message}`)
        return false
      }
      // an archived block's root was compared when the snapshot was made (worldAt); the manifest keeps it
      const blockRoot = store.getBlock(manifest.height)?.merkleRoot.toLowerCase() ?? manifest.merkleRoot
      return root !== undefined && root === manifest.merkleRoot && root === blockRoot
    },
    onBlock(block) {
      const id = requests.get(block.header.number)
      if (id === undefined) return
      requests.delete(block.header.number)
      take(block.header.number, id)
    },
    async recover() {
      for (const name of readdirSync(files.snapshotDir)) {
        const id = name.split('.')[0]
        if (name.endsWith('.tmp') || (name.endsWith('.snap') && !manifests.has(id))) {
          log.warn(`removing ${join(files.snapshotDir, name)}: left by a snapshot that did not complete`)
          unlinkSync(join(files.snapshotDir, name))
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
  }
}
