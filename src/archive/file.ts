/**
 * The file format of snapshots (`<id>.snap`) and archives (`<id>.arc`): raw LMDB entries
 * (store/types.ts RawEntry), so a restore writes back exactly the bytes that were archived.
 *
 *   magic "KEELENT1"
 *   entry*:  u8 keyspace ‖ u32be key length ‖ key ‖ u32be value length ‖ value
 *   trailer: u8 0xff ‖ u64be entry count ‖ SHA-256 of every byte before the trailer
 *
 * An archive groups entries by block, each block starting with its `blocks` (2) entry. A file is
 * written under a temporary name, fsynced, renamed, and its directory fsynced, so a crash leaves
 * either no file or a whole one; the trailer catches a file damaged afterwards.
 */
import { createHash } from 'node:crypto'
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname } from 'node:path'
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
  const temporary = `${path}.tmp`
  const handle = await open(temporary, 'w')
  const hash = createHash('sha256')
  let count = 0
  try {
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
    await handle.sync()
  } finally {
    await handle.close()
  }
  renameSync(temporary, path)
  syncDirectory(dirname(path))
  return count
}

/** Writes a small text file (a manifest) atomically and durably. */
export function writeTextFile(path: string, text: string): void {
  const temporary = `${path}.tmp`
  const fd = openSync(temporary, 'w')
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temporary, path)
  syncDirectory(dirname(path))
}

/** A rename is durable only once its directory is fsynced. */
export function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Every entry of the file. Throws DamagedFileError when the structure or the checksum is wrong,
 * unless `ignoreChecksum` (checkSnapshot recomputes the root of whatever entries it can read).
 */
export function readEntryFile(path: string, options: { ignoreChecksum?: boolean } = {}): RawEntry[] {
  const bytes = readFileSync(path)
  const damaged = (why: string): DamagedFileError => new DamagedFileError(`${path} is damaged: ${why}`)
  if (bytes.length < MAGIC.length + TRAILER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw damaged('not a Keel entry file')
  const body = bytes.length - TRAILER_BYTES
  const entries: RawEntry[] = []
  let at = MAGIC.length
  while (at < body) {
    if (at + 5 > body) throw damaged(`entry ${entries.length} is cut short`)
    const space = bytes.readUInt8(at)
    const keyLength = bytes.readUInt32BE(at + 1)
    const valueAt = at + 5 + keyLength
    if (valueAt + 4 > body) throw damaged(`entry ${entries.length} is cut short`)
    const valueLength = bytes.readUInt32BE(valueAt)
    const end = valueAt + 4 + valueLength
    if (end > body) throw damaged(`entry ${entries.length} is cut short`)
    entries.push({ space, key: bytes.subarray(at + 5, valueAt), value: bytes.subarray(valueAt + 4, end) })
    at = end
  }
  if (bytes.readUInt8(body) !== END) throw damaged('no trailer')
  if (!options.ignoreChecksum) {
    if (bytes.readBigUInt64BE(body + 1) !== BigInt(entries.length)) throw damaged('entry count differs from the trailer')
    const digest = createHash('sha256').update(bytes.subarray(0, body)).digest()
    if (!digest.equals(bytes.subarray(body + 9))) throw damaged('checksum mismatch')
  }
  return entries
}

/** An archive's entries split back into blocks (each starts at its `blocks` entry). */
export function blocksOf(entries: RawEntry[]): ArchivedBlock[] {
  const blocks: ArchivedBlock[] = []
  for (const entry of entries) {
    if (entry.space === Keyspace.blocks) blocks.push({ number: entry.key.readUInt32BE(0), entries: [] })
    const current = blocks.at(-1)
    if (current === undefined) throw new DamagedFileError('archive file: an entry comes before any block')
    current.entries.push(entry)
  }
  return blocks
}
