/**
 * The one way Keel writes a file that a crash or a power loss must never leave half-written (keys,
 * certificates, configuration, snapshot and archive files, their manifests, the network state
 * file): write a temporary file beside it, fsync the file, rename it over the target, fsync the
 * directory. The rename makes the switch atomic (the old content or the new, never a mix); the
 * directory fsync makes the rename itself survive a power loss, which an fsync of the file alone
 * does not (ext4, XFS: the new name may be lost while the old one comes back).
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { dirname } from 'node:path'
import { threadId } from 'node:worker_threads'
import { failpoint } from './failpoints.ts'

let nextTemporary = 0

/** beside the target (a rename cannot cross file systems), unique to this thread and write */
const temporaryOf = (file: string): string => `${file}.${process.pid}-${threadId}-${nextTemporary++}.tmp`

/** A rename (or a new or removed name) is durable only once its directory is fsynced. */
export function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** The temporary file is in place of `file`: the rename, then the directory's fsync. */
function publish(temporary: string, file: string): void {
  renameSync(temporary, file)
  // the name is switched but not yet durable: a failpoint here is a crash at the worst moment
  failpoint('fs.renamed')
  syncDirectory(dirname(file))
}

/** Writes `data` to `file` atomically and durably (see the header). */
export function writeFileAtomically(file: string, data: string | Uint8Array, mode = 0o644): void {
  const temporary = temporaryOf(file)
  try {
    const fd = openSync(temporary, 'w', mode)
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data
      // a write may take fewer bytes than given
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
  publish(temporary, file)
}

/** The same for a file written piece by piece: `write` fills the handle; it is synced, closed and renamed after. */
export async function writeFileAtomicallyWith<T>(file: string, write: (handle: FileHandle) => Promise<T>): Promise<T> {
  const temporary = temporaryOf(file)
  let result: T
  try {
    const handle = await open(temporary, 'w')
    try {
      result = await write(handle)
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
  publish(temporary, file)
  return result
}
