/**
 * The pool log (src/store/pool-log.ts): group commits, replay in order, a torn or damaged tail,
 * segments that go once every record in them is released, compaction at restart.
 */
import { appendFileSync, constants, readdirSync, readFileSync, readlinkSync, rmSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { crc32, openPoolLog, POOL_LOG_DIR } from '../../../src/store/pool-log.ts'
import { tempDir } from './fixtures.ts'

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const text = (payload: Uint8Array): string => new TextDecoder().decode(payload)
const segmentsIn = (dir: string): string[] => readdirSync(join(dir, POOL_LOG_DIR)).sort()

test("crc32 is zlib's CRC-32", () => {
  assert.is(crc32(bytes('123456789')), 0xcbf43926)
  assert.is(crc32(new Uint8Array(0)), 0)
})

test('appends of one turn share a group; a reopened log replays every record in order', async () => {
  const dir = tempDir('pool-log')
  const log = openPoolLog(dir)
  await log.compact([])
  const segments = await Promise.all(Array.from({ length: 100 }, (_, i) => log.append(bytes(`record ${i}`))))
  assert.ok(segments.every((segment) => segment === segments[0]))
  await log.append(bytes('later'))
  await log.close()
  const again = openPoolLog(dir)
  assert.equal(
    again.replay().map((record) => text(record.payload)),
    [...Array.from({ length: 100 }, (_, i) => `record ${i}`), 'later'],
  )
  await again.close()
  rmSync(dir, { recursive: true, force: true })
})

test('a segment is written with O_DSYNC: each group is durable when its write returns, with no fdatasync after it', async () => {
  // issue 27: one trip through libuv's pool per group instead of two (write, then fdatasync)
  if (process.platform !== 'linux' || constants.O_DSYNC === undefined) return
  const dir = tempDir('pool-log-dsync')
  const log = openPoolLog(dir)
  await log.compact([])
  await log.append(bytes('record'))
  const segment = join(dir, POOL_LOG_DIR, segmentsIn(dir)[0])
  const fd = readdirSync('/proc/self/fd').find((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === segment
    } catch {
      return false
    }
  })
  assert.ok(fd !== undefined, 'the segment is open')
  const flags = Number.parseInt(/flags:\s+([0-7]+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '0', 8)
  assert.ok((flags & constants.O_DSYNC) !== 0, `flags ${flags.toString(8)} lack O_DSYNC`)
  await log.close()
  rmSync(dir, { recursive: true, force: true })
})

test('replay stops a segment at a torn or damaged record (the tail a kill can leave)', async () => {
  const dir = tempDir('pool-log-torn')
  const log = openPoolLog(dir)
  await log.compact([])
  for (const word of ['one', 'two', 'three']) await log.append(bytes(word))
  await log.close()
  const [file] = segmentsIn(dir)
  const path = join(dir, POOL_LOG_DIR, file)
  // a header that promises more bytes than were written
  appendFileSync(path, Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 9]))
  assert.equal(
    openPoolLog(dir)
      .replay()
      .map((record) => text(record.payload)),
    ['one', 'two', 'three'],
  )
  // the last record cut short: its bytes no longer match its CRC
  truncateSync(path, 8 + 3 + 8 + 3 + 8 + 4)
  const damaged = openPoolLog(dir)
  assert.equal(
    damaged.replay().map((record) => text(record.payload)),
    ['one', 'two'],
  )
  await damaged.close()
  rmSync(dir, { recursive: true, force: true })
})

test('compaction keeps what is still pending in a new segment; released segments are deleted', async () => {
  const dir = tempDir('pool-log-segments')
  const log = openPoolLog(dir, { segmentBytes: 64 })
  await log.compact([])
  // each group of records past 64 bytes starts a new segment for the next group
  const first = await Promise.all(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8'].map((word) => log.append(bytes(word.repeat(4)))))
  const second = await log.append(bytes('b1'.repeat(4)))
  assert.is.not(second, first[0])
  for (const segment of first) log.release(segment)
  assert.equal(segmentsIn(dir).length, 1, 'the fully released segment is gone')
  await log.close()

  const reopened = openPoolLog(dir)
  const records = reopened.replay()
  assert.equal(
    records.map((record) => text(record.payload)),
    ['b1b1b1b1'],
  )
  const segment = await reopened.compact(records.map((record) => record.payload))
  assert.equal(segmentsIn(dir), [`seg-${String(segment).padStart(10, '0')}.log`])
  await reopened.close()
  assert.equal(
    openPoolLog(dir)
      .replay()
      .map((record) => text(record.payload)),
    ['b1b1b1b1'],
  )
  rmSync(dir, { recursive: true, force: true })
})

test.run()
