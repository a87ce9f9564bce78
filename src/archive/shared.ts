/**
 * What the two halves of the archive service (snapshots.ts, moves.ts) share: where their files
 * live, the work they leave running in the background, and how they fail.
 */
import { existsSync, mkdirSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { SnapshotManifest } from '../../generated/types.ts'
import { SnapshotArchiveFailed } from '../errors.ts'

/** A manifest as Keel writes it: heights are plain numbers (blocks are u32). */
export interface Manifest extends SnapshotManifest {
  height: number
  genesis: number
}

export const fail = (message: string): SnapshotArchiveFailed => new SnapshotArchiveFailed(message)
export const NOT_EXISTED = 'manifest not existed'

export const removeFile = (path: string): void => {
  if (existsSync(path)) unlinkSync(path)
}

/** the service's files under the namespace's data directory (service.ts says what each holds) */
export interface ArchiveFiles {
  snapshotDir: string
  archiveDir: string
  snapPath(id: string): string
  manifestPath(id: string): string
  archivePath(id: string): string
}

/** makes the two folders when absent */
export function archiveFiles(dataDir: string): ArchiveFiles {
  const snapshotDir = join(dataDir, 'snapshots')
  const archiveDir = join(dataDir, 'archive')
  mkdirSync(snapshotDir, { recursive: true })
  mkdirSync(archiveDir, { recursive: true })
  return {
    snapshotDir,
    archiveDir,
    snapPath: (id) => join(snapshotDir, `${id}.snap`),
    manifestPath: (id) => join(snapshotDir, `${id}.json`),
    archivePath: (id) => join(archiveDir, `${id}.arc`),
  }
}

/** work left running after the call that started it returned: `close` waits for all of it */
export interface Background {
  track(work: Promise<unknown>): void
  settle(): Promise<void>
}

export function createBackground(): Background {
  const running = new Set<Promise<unknown>>()
  return {
    track(work) {
      running.add(work)
      void work.finally(() => running.delete(work))
    },
    async settle() {
      while (running.size > 0) await Promise.allSettled([...running])
    },
  }
}
