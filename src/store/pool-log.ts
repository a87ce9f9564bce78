/**
 * The pool log: where an admitted transaction becomes durable before its hash is answered
 * (ARCHITECTURE.md decisions 8 and 11). Append-only segment files in `<ledger>/pool/`, one record
 * per transaction: `u32 length ‖ u32 CRC-32 ‖ payload`. Records appended while a write is in
 * flight are written together by the next one (group commit: one `writev` on libuv's thread pool
 * to a segment opened with O_DSYNC, which returns once the data is on disk as a `writev` and an
 * `fdatasync` would), so a submission waits for one sync of its own group, never for a block
 * commit or another group's work, and the thread that appends never blocks on the disk.
 *
 * O_DSYNC rather than a separate `fdatasync` (issue 27): one trip through libuv's pool and one
 * callback per group instead of two. At half load a group is one or two transactions, so that trip
 * was paid per transaction: writev + fdatasync cost 160–205 µs of process CPU per group on the
 * development machine, an O_DSYNC writev 124–128 µs (3,000 groups of 608 bytes, alternated).
 * Where the platform has no O_DSYNC the `fdatasync` is made as before.
 *
 * A segment is deleted once every record in it is released (its transaction reached a block) and
 * it is no longer the one appended to; a new segment starts past SEGMENT_BYTES. At open, `replay`
 * reads every segment in order and stops a segment at its first torn or damaged record (the tail a
 * kill -9 can leave; nothing after it was ever answered). The caller then rewrites what is still
 * pending with `compact` into a fresh segment and the old ones go.
 *
 * A write that fails (a full or failing disk) refuses its group, every record of it unanswered,
 * and ends its segment: the next group starts a new one, so admission resumes by itself once the
 * disk has room. A refused record may still be whole on disk (the data reached it, the sync
 * failed); replay then restores it and it may commit, though its client was told -32006: the
 * client's own signed transaction, never one it did not send, and a resend of it is a duplicate.
 */
import { closeSync, constants, fdatasync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writev } from 'node:fs'
import { join } from 'node:path'
import { syncDirectory } from '../fs-atomic.ts'

/** the pool log's directory inside the ledger's */
export const POOL_LOG_DIR = 'pool'
/** a segment past this size is closed and a new one started */
const SEGMENT_BYTES = 64 * 1024 * 1024
/** most bytes one group writes (a larger backlog is written by the next group) */
const GROUP_BYTES = 8 * 1024 * 1024
const HEADER_BYTES = 8
const SEGMENT_NAME = /^seg-(\d{10})\.log$/
/** a write to a segment returns once its data is durable (undefined: no such flag here, fdatasync after each write) */
const DSYNC: number | undefined = constants.O_DSYNC
const SEGMENT_FLAGS = DSYNC === undefined ? 'a' : constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | DSYNC

/** The pool log could not make a record durable (a full or failing disk): the transaction was not admitted. */
export class PoolLogError extends Error {
  override name = 'PoolLogError'
}

export interface PoolLogRecord {
  segment: number
  payload: Uint8Array
}

export interface PoolLog {
  /**
   * Appends one record; resolves with its segment once the record is on disk (fsynced). The
   * segment is what `release` takes when the record's transaction no longer needs it.
   */
  append(payload: Uint8Array): Promise<number>
  /** one record of `segment` is no longer needed */
  release(segment: number): void
  /** records of the segments found at open, in order (call once, before any append) */
  replay(): PoolLogRecord[]
  /**
   * Writes `payloads` (what is still pending of the replayed records) into a new segment, syncs it
   * and removes every segment found at open; resolves with the new segment.
   */
  compact(payloads: readonly Uint8Array[]): Promise<number>
  close(): Promise<void>
}

interface Segment {
  number: number
  fd: number
  bytes: number
  /** records not released yet */
  live: number
}

interface Waiting {
  record: Buffer[]
  bytes: number
  resolve(segment: number): void
  reject(error: Error): void
}

/**
 * Opens the pool log in `ledgerPath`.
 *
 * Long because: one group-commit state machine over the log's segments. append, release, replay
 * and compact all read and change the same active segment, waiting appends, write in flight and
 * per-segment live counts.
 */
export function openPoolLog(ledgerPath: string, options: { segmentBytes?: number } = {}): PoolLog {
  const segmentBytes = options.segmentBytes ?? SEGMENT_BYTES
  const dir = join(ledgerPath, POOL_LOG_DIR)
  mkdirSync(dir, { recursive: true })
  const found = readdirSync(dir)
    .map((name) => SEGMENT_NAME.exec(name))
    .filter((match) => match !== null)
    .map((match) => Number(match[1]))
    .sort((a, b) => a - b)
  const segments = new Map<number, Segment>()
  let nextNumber = (found.at(-1) ?? 0) + 1
  let active: Segment | undefined
  let queue: Waiting[] = []
  let writing = false
  let closed = false
  let idle: (() => void) | undefined

  const pathOf = (number: number): string => join(dir, `seg-${String(number).padStart(10, '0')}.log`)

  const syncDir = (): void => syncDirectory(dir)

  const startSegment = (): Segment => {
    const number = nextNumber++
    const segment: Segment = { number, fd: openSync(pathOf(number), SEGMENT_FLAGS, 0o666), bytes: 0, live: 0 }
    segments.set(number, segment)
    // the new file's name must survive a power loss too, not only its bytes
    syncDir()
    return segment
  }

  const drop = (segment: Segment): void => {
    segments.delete(segment.number)
    closeSync(segment.fd)
    unlinkSync(pathOf(segment.number))
  }

  const retireIfDone = (segment: Segment): void => {
    if (segment !== active && segment.live <= 0 && segments.has(segment.number)) drop(segment)
  }

  /** every waiting append fails with `error` (a full or failing disk): none of them was answered */
  const refuseQueued = (error: unknown): void => {
    const failure = new PoolLogError(`pool log: ${(error as Error).message}`, { cause: error })
    for (const waiting of queue.splice(0)) waiting.reject(failure)
  }

  /** writes everything queued as one group; the next group starts when this one is on disk */
  const flush = (): void => {
    if (writing || queue.length === 0) return
    if (active === undefined || active.bytes >= segmentBytes) {
      const previous = active
      try {
        active = startSegment()
      } catch (error) {
        // no room even for a new file: these appends fail, a later one tries again
        active = undefined
        refuseQueued(error)
        return
      } finally {
        if (previous !== undefined && previous !== active) retireIfDone(previous)
      }
    }
    writing = true
    const segment = active as Segment
    let bytes = 0
    let count = 0
    while (count < queue.length && (count === 0 || bytes + queue[count].bytes <= GROUP_BYTES)) bytes += queue[count++].bytes
    const group = queue.slice(0, count)
    queue = queue.slice(count)
    segment.bytes += bytes
    segment.live += group.length
    const buffers = group.flatMap((waiting) => waiting.record)
    const done = (error: NodeJS.ErrnoException | null): void => {
      writing = false
      if (error !== null) {
        // What reached this segment's disk is unknown past its last whole group, so nothing more is
        // appended to it (replay stops it at the torn record); the next group starts a new segment,
        // so the node admits again once the disk has room, without a restart.
        const failure = new PoolLogError(`pool log: ${error.message}`, { cause: error })
        segment.live -= group.length
        if (active === segment) active = undefined
        retireIfDone(segment)
        for (const waiting of group) waiting.reject(failure)
      } else for (const waiting of group) waiting.resolve(segment.number)
      if (queue.length > 0) flush()
      else idle?.()
    }
    writeAll(segment.fd, buffers, (error) => {
      if (error !== null || DSYNC !== undefined) return done(error)
      fdatasync(segment.fd, done)
    })
  }

  const frame = (payload: Uint8Array): Buffer[] => {
    const header = Buffer.allocUnsafe(HEADER_BYTES)
    header.writeUInt32LE(payload.length, 0)
    header.writeUInt32LE(crc32(payload), 4)
    return [header, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)]
  }

  return {
    append(payload) {
      if (closed) return Promise.reject(new Error('pool log is closed'))
      return new Promise((resolve, reject) => {
        queue.push({ record: frame(payload), bytes: payload.length + HEADER_BYTES, resolve, reject })
        // records appended in the same run of this thread go out together
        if (queue.length === 1) queueMicrotask(flush)
      })
    },

    release(number) {
      const segment = segments.get(number)
      if (segment === undefined) return
      segment.live--
      retireIfDone(segment)
    },

    replay() {
      const records: PoolLogRecord[] = []
      for (const number of found) {
        const bytes = readFileSync(pathOf(number))
        let offset = 0
        while (offset + HEADER_BYTES <= bytes.length) {
          const length = bytes.readUInt32LE(offset)
          const end = offset + HEADER_BYTES + length
          if (end > bytes.length) break
          const payload = bytes.subarray(offset + HEADER_BYTES, end)
          if (crc32(payload) !== bytes.readUInt32LE(offset + 4)) break
          records.push({ segment: number, payload })
          offset = end
        }
      }
      return records
    },

    async compact(payloads) {
      const before = [...found]
      found.length = 0
      const segment = startSegment()
      active = segment
      if (payloads.length > 0) {
        await new Promise<void>((resolve, reject) => {
          const buffers = payloads.flatMap(frame)
          writeAll(segment.fd, buffers, (error) => {
            if (error !== null) return reject(error)
            fdatasync(segment.fd, (syncError) => (syncError === null ? resolve() : reject(syncError)))
          })
        })
        segment.bytes = payloads.reduce((sum, payload) => sum + payload.length + HEADER_BYTES, 0)
        segment.live = payloads.length
      }
      for (const number of before) unlinkSync(pathOf(number))
      if (before.length > 0) syncDir()
      return segment.number
    },

    async close() {
      if (closed) return
      closed = true
      if (writing || queue.length > 0)
        await new Promise<void>((resolve) => {
          idle = resolve
        })
      for (const segment of segments.values()) closeSync(segment.fd)
      segments.clear()
    },
  }
}

/**
 * writev until every byte of `buffers` is written: a write may take fewer bytes than asked (a
 * nearly full disk does that without an error), and a record answered as durable must be whole.
 * A write that takes nothing, or fails, ends it with the error.
 */
function writeAll(fd: number, buffers: Buffer[], callback: (error: NodeJS.ErrnoException | null) => void): void {
  writev(fd, buffers, (error, written) => {
    if (error !== null) return callback(error)
    let left = written
    let next = 0
    while (next < buffers.length && left >= buffers[next].length) left -= buffers[next++].length
    if (next === buffers.length) return callback(null)
    if (written === 0) {
      const stalled: NodeJS.ErrnoException = new Error('ENOSPC: the disk took no more bytes (short write)')
      stalled.code = 'ENOSPC'
      return callback(stalled)
    }
    writeAll(fd, [buffers[next].subarray(left), ...buffers.slice(next + 1)], callback)
  })
}

const CRC_TABLE = (() => {
  const table = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c
  }
  return table
})()

/** CRC-32 (IEEE), as zlib computes it (Node 20 has no zlib.crc32) */
export function crc32(bytes: Uint8Array): number {
  let crc = -1
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8)
  return (crc ^ -1) >>> 0
}
