/**
 * src/fs-atomic.ts, the one atomic and durable write: a failpoint between the rename and the
 * directory's fsync (`fs.renamed`) shows the order (temporary file, fsync, rename, directory fsync)
 * and that every writer of a file a crash must not tear goes through it: the genesis key, the
 * TCert CA, snapshot and archive files and their manifests.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { writeEntryFile } from '../../src/archive/file.ts'
import { loadOrCreateNodeCa } from '../../src/cert/ca.ts'
import { devAccount } from '../../src/chain/genesis.ts'
import { writeFileAtomically, writeFileAtomicallyWith } from '../../src/fs-atomic.ts'

const FAILED = /failpoint fs\.renamed/

function armed<T>(work: () => T): T {
  process.env.KEEL_FAILPOINTS = 'fs.renamed=throw'
  try {
    return work()
  } finally {
    delete process.env.KEEL_FAILPOINTS
  }
}

const fresh = (): string => mkdtempSync(join(tmpdir(), 'keel-atomic-'))

test('a write replaces the file whole, with its mode, and leaves no temporary file', async () => {
  const dir = fresh()
  const file = join(dir, 'a.txt')
  writeFileSync(file, 'old')
  writeFileAtomically(file, 'new text', 0o600)
  assert.is(readFileSync(file, 'utf8'), 'new text')
  assert.is(statSync(file).mode & 0o777, 0o600)
  writeFileAtomically(file, Buffer.alloc(3 << 20, 7))
  assert.is(readFileSync(file).length, 3 << 20)
  assert.is(await writeFileAtomicallyWith(join(dir, 'b.bin'), async (handle) => (await handle.write(Buffer.from('xyz'))).bytesWritten), 3)
  assert.equal(readdirSync(dir).sort(), ['a.txt', 'b.bin'])
})

test('a failed write before the rename leaves the old file and no temporary file', async () => {
  const dir = fresh()
  const file = join(dir, 'a.txt')
  writeFileSync(file, 'old')
  try {
    await writeFileAtomicallyWith(file, async (handle) => {
      await handle.write('half')
      throw new Error('disk gone')
    })
    assert.unreachable()
  } catch (error) {
    assert.match((error as Error).message, 'disk gone')
  }
  assert.is(readFileSync(file, 'utf8'), 'old')
  assert.equal(readdirSync(dir), ['a.txt'])
})

test('fs.renamed: the failure comes after the rename (the new content is whole in place) and before the directory sync', async () => {
  const dir = fresh()
  const file = join(dir, 'a.txt')
  writeFileSync(file, 'old')
  assert.throws(() => armed(() => writeFileAtomically(file, 'new')), FAILED)
  assert.is(readFileSync(file, 'utf8'), 'new', 'renamed: the reader sees the old or the new, never a mix')
  assert.equal(readdirSync(dir), ['a.txt'], 'the temporary name is gone with the rename')
  process.env.KEEL_FAILPOINTS = 'fs.renamed=throw'
  try {
    await writeFileAtomicallyWith(join(dir, 'b.bin'), async (handle) => void (await handle.write('b')))
    assert.unreachable('the streamed write passes the same point')
  } catch (error) {
    assert.match((error as Error).message, FAILED)
  } finally {
    delete process.env.KEEL_FAILPOINTS
  }
})

test('every writer of a file a crash must not tear goes through it', async () => {
  const dir = fresh()
  assert.throws(() => armed(() => devAccount(join(dir, 'genesis-account.json'))), FAILED, 'the genesis key')
  assert.ok(existsSync(join(dir, 'genesis-account.json')))

  process.env.KEEL_FAILPOINTS = 'fs.renamed=throw'
  try {
    await loadOrCreateNodeCa(join(dir, 'ca'), { hostname: 'node1' })
    assert.unreachable('the TCert CA key')
  } catch (error) {
    assert.match((error as Error).message, FAILED)
  }
  try {
    await writeEntryFile(join(dir, 'x.snap'), [])
    assert.unreachable('a snapshot or archive file')
  } catch (error) {
    assert.match((error as Error).message, FAILED)
  } finally {
    delete process.env.KEEL_FAILPOINTS
  }
})

test.run()
