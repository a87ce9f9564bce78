import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openStore } from '../../../src/store/index.ts'
import { decodeAdmitted } from '../../../src/wire/tx-codec.ts'
import { addr, makeTx, tempDir } from './fixtures.ts'

const addrOf = (i: number) => addr(`acct${i}`)

test('every hash whose pool-log append resolved survives a SIGKILL of the writer', async () => {
  const dir = tempDir('durability')
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'pending-writer.ts'), dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const reported: string[] = []
  let buffered = ''
  let ready = false
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`writer reported only ${reported.length} hashes in 60 s`)), 60_000)
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      for (const line of lines) {
        if (line === 'ready') ready = true
        else reported.push(line)
      }
      // kill while writes are in full flow: many more puts are queued or mid-commit at this moment
      if (reported.length >= 3000 && child.exitCode === null && !child.killed) {
        clearTimeout(timer)
        child.kill('SIGKILL')
        resolve()
      }
    })
    child.on('exit', () => reject(new Error(`writer exited by itself after ${reported.length} hashes`)))
  })
  assert.is(await exited, 'SIGKILL')
  assert.ok(ready)

  const store = await openStore(dir)
  try {
    const records = store.poolLog.replay()
    const stored = new Set(records.map((record) => decodeAdmitted(record.payload).tx.hash))
    const missing = reported.filter((hash) => !stored.has(hash))
    assert.equal(missing, [], `${missing.length} of ${reported.length} reported hashes lost`)
    assert.ok(stored.size >= reported.length)
    assert.is(records.length, stored.size, 'each record once')
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a SIGKILL during block commits leaves whole blocks: every reported block complete, no trace of a partial one', async () => {
  const dir = tempDir('kill-commit')
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'block-writer.ts'), dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let reported = 0
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`writer reported only ${reported} blocks in 60 s`)), 60_000)
    child.stdout.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line) reported = Number(line)
      if (reported >= 15 && !child.killed) {
        clearTimeout(timer)
        child.kill('SIGKILL')
        resolve()
      }
    })
    child.on('exit', () => reject(new Error(`writer exited by itself after ${reported} blocks`)))
  })
  assert.is(await exited, 'SIGKILL')

  // openStore itself checks that the saved state root equals the last block's merkleRoot
  const store = await openStore(dir)
  try {
    const height = store.height()
    assert.ok(height >= reported, `height ${height} < reported ${reported}`)
    for (let n = 1; n <= height; n++) {
      const hashes = store.getBlockTxHashes(n)
      assert.is(hashes.length, 200)
      for (const hash of hashes) assert.ok(store.getTx(hash) && store.getReceipt(hash), `block ${n} tx ${hash} incomplete`)
      assert.is(store.getBlock(n)!.txCount, 200)
    }
    assert.is(store.countTxs(), height * 200)
    assert.is(store.stateRoot(), store.getBlock(height)!.merkleRoot)
    assert.equal(store.state.getAccount(addrOf(399)), { balance: BigInt(height * 1000 + 399), nonce: BigInt(height) })
    for (let i = 0; i < 200; i++) assert.is(store.getTx(makeTx(`b${height + 1}:${i}`).hash), undefined, 'a tx of the unfinished block')
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
