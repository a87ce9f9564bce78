/** The snapshot/archive file format (src/archive/file.ts): round trip in bounded chunks, and every kind of damage caught. */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { DamagedFileError, readBlocks, readEntries, verifyEntryFile, writeEntryFile } from '../../../src/archive/file.ts'
import { u32be } from '../../../src/store/codec.ts'
import { Keyspace } from '../../../src/store/keyspace.ts'
import type { RawEntry } from '../../../src/store/types.ts'

const dir = mkdtempSync(join(tmpdir(), 'keel-archive-file-'))
test.after(() => rmSync(dir, { recursive: true, force: true }))

/** blocks 5..9, each with a header, a tx and a receipt; block 7's receipt is larger than a read chunk (1 MiB) */
function archiveEntries(): RawEntry[] {
  const entries: RawEntry[] = []
  for (let n = 5; n <= 9; n++) {
    const tx = randomBytes(32)
    entries.push({ space: Keyspace.blocks, key: u32be(n), value: randomBytes(100) })
    entries.push({ space: Keyspace.txs, key: tx, value: randomBytes(300) })
    entries.push({ space: Keyspace.receipts, key: tx, value: randomBytes(n === 7 ? 1_500_000 : 50) })
    entries.push({ space: Keyspace.txTime, key: Buffer.concat([randomBytes(8), tx]), value: Buffer.alloc(0) })
  }
  return entries
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

const damaged = async (path: string, why: RegExp): Promise<void> => {
  try {
    await verifyEntryFile(path)
  } catch (error) {
    assert.instance(error, DamagedFileError)
    assert.match((error as Error).message, why)
    return
  }
  assert.unreachable(`${path} passed verification`)
}

test('entries round-trip byte for byte, grouped back into blocks; no temporary file is left', async () => {
  const path = join(dir, 'a.arc')
  const entries = archiveEntries()
  assert.is(await writeEntryFile(path, entries), entries.length)
  assert.not.ok(existsSync(`${path}.tmp`))
  assert.equal(await verifyEntryFile(path), { entries: entries.length, firstBlock: 5, lastBlock: 9 })
  assert.equal(await all(readEntries(path)), entries)
  const blocks = await all(readBlocks(path))
  assert.equal(
    blocks.map((b) => b.number),
    [5, 6, 7, 8, 9],
  )
  assert.equal(
    blocks.flatMap((b) => b.entries),
    entries,
  )
})

test('a flipped byte, a cut file, a missing file, a gap between blocks are all DamagedFileError', async () => {
  const path = join(dir, 'b.arc')
  await writeEntryFile(path, archiveEntries())
  const bytes = readFileSync(path)

  const flipped = join(dir, 'flipped.arc')
  const copy = Buffer.from(bytes)
  copy[copy.length >> 1] ^= 0x80
  writeFileSync(flipped, copy)
  await damaged(flipped, /checksum mismatch|cut short|follows block/)

  const cut = join(dir, 'cut.arc')
  writeFileSync(cut, bytes)
  truncateSync(cut, bytes.length - 100)
  await damaged(cut, /cut short|no trailer|checksum/)

  await damaged(join(dir, 'nothing.arc'), /is missing/)

  const gap = join(dir, 'gap.arc')
  await writeEntryFile(
    gap,
    archiveEntries().filter((e) => !(e.space === Keyspace.blocks && e.key.readUInt32BE(0) === 7)),
  )
  await damaged(gap, /block 8 follows block 6/)

  const notOurs = join(dir, 'text.arc')
  writeFileSync(notOurs, 'x'.repeat(100))
  await damaged(notOurs, /not a Keel entry file/)
})

test.run()
