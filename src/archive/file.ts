/**
 * The file format of snapshots (`<id>.snap`) and archives (`<id>.arc`): raw LMDB entries
 * (store/types.ts RawEntry), so a restore writes back exactly the bytes that were archived.
 *
 *   magic "KEELENT1"
 *   entry*:  u8 keyspace ‖ u32be key length ‖ key ‖ u32be value length ‖ value
 *   trailer: u8 0xff ‖ u64be entry count ‖ SHA-256 of every byte before the trailer
 *
 * An archive groups entries by block, each block starting with its `blocks` (2) entry. A file is
 * written through src/fs-atomic.ts (a temporary name, fsynced, renamed, its directory fsynced), so a
 * crash leaves either no file or a whole one; the trailer catches a file damaged afterwards.
 */
import { createHash, type Hash } from 'node:crypto'
import { type FileHandle, open } from 'node:fs/promises'
import { writeFileAtomicallyWith } from '../fs-atomic.ts'
import { Keyspace } from '../store/keyspace.ts'
import type { ArchivedBlock, RawEntry } from '../store/types.ts'

const MAGIC = Buffer.from('KEELENT1')
const END = 0xff
const TRAILER_BYTES = 1 + 8 + 32

/** Bytes written per write call: entries are buffered up to this much. */
const CHUNK_BYTES = 1 << 20

export class DamagedFileError extends Error {
  override readonly name = 'DamagedFileError'
}

/** Writes entries to `path` atomically and durably (see the header); returns how many were written. */
export async function writeEntryFile(path: string, entries: Iterable<RawEntry> | AsyncIterable<RawEntry>): Promise<number> {
  return writeFileAtomicallyWith(path, async (handle) => {
    const hash = createHash('sha256')
    let count = 0
    let pending: Buffer[] = [MAGIC]
    let pendingBytes = MAGIC.length
    const flush = async (): Promise<void> => {
      const chunk = Buffer.concat(pending, pendingBytes)
      hash.update(chunk)
      await handle.write(chunk)
      pending = []
      pendingBytes = 0
    }
    for await (const entry of entries) {
      const head = Buffer.alloc(5)
      head.writeUInt8(entry.space, 0)
      head.writeUInt32BE(entry.key.length, 1)
      const length = Buffer.alloc(4)
      length.writeUInt32BE(entry.value.length, 0)
      pending.push(head, entry.key, length, entry.value)
      pendingBytes += 9 + entry.key.length + entry.value.length
      count++
      if (pendingBytes >= CHUNK_BYTES) await flush()
    }
    await flush()
    const trailer = Buffer.alloc(9)
    trailer.writeUInt8(END, 0)
    trailer.writeBigUInt64BE(BigInt(count), 1)
    await handle.write(Buffer.concat([trailer, hash.digest()]))
    return count
  })
}

async function openExisting(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new DamagedFileError(`${path} is missing`)
    throw error
  }
}

/** What verifyEntryFile found: the entry count and, for an archive, the block numbers it holds (consecutive). */
export interface FileSummary {
  entries: number
  firstBlock?: number
  lastBlock?: number
}

/**
 * Reads the entries of [magic, trailer) in chunks of CHUNK_BYTES, so memory stays bounded
 * whatever the file's size; `hash` (when given) sees every byte before the trailer.
 */
async function* scan(path: string, hash?: Hash): AsyncGenerator<RawEntry> {
  const handle = await openExisting(path)
  try {
    const size = (await handle.stat()).size
    const damaged = (why: string): DamagedFileError => new DamagedFileError(`${path} is damaged: ${why}`)
    const body = size - TRAILER_BYTES
    const magic = Buffer.alloc(MAGIC.length)
    if (body < MAGIC.length || (await handle.read(magic, 0, MAGIC.length, 0)).bytesRead !== MAGIC.length || !magic.equals(MAGIC))
      throw damaged('not a Keel entry file')
    hash?.update(magic)
    let position = MAGIC.length
    let pending = Buffer.alloc(0)
    let index = 0
    while (position < body || pending.length > 0) {
      if (position < body) {
        const chunk = Buffer.alloc(Math.min(CHUNK_BYTES, body - position))
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, position)
        if (bytesRead !== chunk.length) throw damaged('shorter than its size')
        hash?.update(chunk)
        position += bytesRead
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      }
      let at = 0
      for (;;) {
        if (at + 5 > pending.length) break
        const keyLength = pending.readUInt32BE(at + 1)
        const valueAt = at + 5 + keyLength
        if (valueAt + 4 > pending.length) break
        const end = valueAt + 4 + pending.readUInt32BE(valueAt)
        if (end > pending.length) break
        // copies: the chunk buffer is dropped once parsed
        yield {
          space: pending.readUInt8(at),
          key: Buffer.from(pending.subarray(at + 5, valueAt)),
          value: Buffer.from(pending.subarray(valueAt + 4, end)),
        }
        index++
        at = end
      }
      pending = pending.subarray(at)
      if (position >= body && pending.length > 0) throw damaged(`entry ${index} is cut short`)
    }
  } finally {
    await handle.close()
  }
}

/**
 * Checks the whole file (structure, entry count, checksum) in one bounded-memory pass; for an
 * archive, also that its blocks are consecutive. Throws DamagedFileError.
 */
export async function verifyEntryFile(path: string): Promise<FileSummary> {
  const hash = createHash('sha256')
  const summary: FileSummary = { entries: 0 }
  for await (const entry of scan(path, hash)) {
    summary.entries++
    if (entry.space !== Keyspace.blocks) continue
    const number = entry.key.readUInt32BE(0)
    if (summary.lastBlock !== undefined && number !== summary.lastBlock + 1)
      throw new DamagedFileError(`${path} is damaged: block ${number} follows block ${summary.lastBlock}`)
    summary.firstBlock ??= number
    summary.lastBlock = number
  }
  const handle = await openExisting(path)
  try {
    const trailer = Buffer.alloc(TRAILER_BYTES)
    await handle.read(trailer, 0, TRAILER_BYTES, (await handle.stat()).size - TRAILER_BYTES)
    if (trailer.readUInt8(0) !== END) throw new DamagedFileError(`${path} is damaged: no trailer`)
    if (trailer.readBigUInt64BE(1) !== BigInt(summary.entries))
      throw new DamagedFileError(`${path} is damaged: entry count differs from the trailer`)
    if (!hash.digest().equals(trailer.subarray(9))) throw new DamagedFileError(`${path} is damaged: checksum mismatch`)
  } finally {
    await handle.close()
  }
  return summary
}

/** Every entry of the file, read in bounded memory; run verifyEntryFile first to trust them. */
export function readEntries(path: string): AsyncGenerator<RawEntry> {
  return scan(path)
}

/** An archive's blocks in file order (each starts at its `blocks` entry), read in bounded memory. */
export async function* readBlocks(path: string): AsyncGenerator<ArchivedBlock> {
  let current: ArchivedBlock | undefined
  for await (const entry of scan(path)) {
    if (entry.space === Keyspace.blocks) {
      if (current !== undefined) yield current
      current = { number: entry.key.readUInt32BE(0), entries: [] }
    }
    if (current === undefined) throw new DamagedFileError(`${path} is damaged: an entry comes before any block`)
    current.entries.push(entry)
  }
  if (current !== undefined) yield current
}
