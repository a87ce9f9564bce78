/**
 * One process per ledger (issue 17), with real node processes (src/main.ts): a second node on the
 * same data directory exits at once, naming the directory and the PID that holds it, and the first
 * goes on undisturbed; after kill -9 the stale lock does not block a restart, nor does a lock whose
 * PID now belongs to a live process of another boot (a reboot reused it).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startNodeProcess, writeNodeConfig } from '../src/devnet/node-process.ts'
import { commit, ok, SUBMIT, type WireTx } from './helpers/chain.ts'
import { wallet } from './helpers/wallet.ts'

const alice = wallet()
const dataDir = mkdtempSync(join(tmpdir(), 'keel-data-dir-'))
const ledgerDir = join(dataDir, 'global')
const configFile = join(dataDir, 'keel.toml')
writeNodeConfig(configFile, { dataDir, batchTimeoutMs: 5, genesis: [{ address: alice.address, balance: '1000000' }] })
const lockFile = (): string => {
  const [name] = readdirSync(ledgerDir).filter((file) => /^keel\.lock\.\d+$/.test(file))
  return join(ledgerDir, name)
}

test.after(() => rmSync(dataDir, { recursive: true, force: true }))

test('a second process on the same data directory exits at once naming the directory and the PID; the first serves on; kill -9 leaves no block', async () => {
  const first = await startNodeProcess({ configFile })
  try {
    const receipt = await commit(first.url, SUBMIT.transfer, alice.transfer(`0x${'11'.repeat(20)}`, 5))
    const committed = await ok<WireTx>(first.url, 'tx_getTransactionByHash', [receipt.hash])
    const started = Date.now()
    const second = await startNodeProcess({ configFile }).then(
      async (started) => {
        await started.kill('SIGKILL')
        return undefined
      },
      (error: Error) => error.message,
    )
    const seconds = (Date.now() - started) / 1000
    assert.ok(second !== undefined, 'the second node started')
    assert.match(second, /node exited \(code 1, signal null\) before listening/)
    assert.ok(second.includes(`the data directory ${ledgerDir} is in use by another Keel process: PID ${first.pid}`), second)
    assert.ok(seconds < 20, `the second process took ${seconds} s to exit`)
    console.log(`    the second process exited after ${seconds.toFixed(1)} s (process start included)`)
    // the first is undisturbed
    assert.equal(await ok<WireTx>(first.url, 'tx_getTransactionByHash', [receipt.hash]), committed)
    await commit(first.url, SUBMIT.transfer, alice.transfer(`0x${'11'.repeat(20)}`, 6))

    await first.kill('SIGKILL')
    assert.is((JSON.parse(readFileSync(lockFile(), 'utf8')) as { pid: number }).pid, first.pid, 'the dead holder left its lock')
    const again = await startNodeProcess({ configFile })
    try {
      assert.equal(await ok<WireTx>(again.url, 'tx_getTransactionByHash', [receipt.hash]), committed)
      assert.is((JSON.parse(readFileSync(lockFile(), 'utf8')) as { pid: number }).pid, again.pid, 'the lock names the new holder')
    } finally {
      await again.kill('SIGKILL')
    }
  } finally {
    await first.kill('SIGKILL')
  }
})

test('a lock naming a live PID of another boot (the PID reused after a reboot) does not block a restart', async () => {
  // after the last test's kill -9: point the stale record at a live process, this one, as a reboot would
  const file = lockFile()
  const record = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  writeFileSync(file, JSON.stringify({ ...record, pid: process.pid, bootId: 'a-boot-before-the-last-reboot' }))
  const node = await startNodeProcess({ configFile })
  try {
    assert.ok(await ok(node.url, 'block_getChainHeight'))
  } finally {
    await node.kill('SIGTERM')
  }
  assert.equal(
    readdirSync(ledgerDir).filter((name) => name.startsWith('keel.lock')),
    [],
    'a clean stop gives the directory up',
  )
})

test.run()
