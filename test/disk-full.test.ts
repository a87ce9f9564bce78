/**
 * A full disk (reliability battery F11), on a real small filesystem: a tmpfs of a few MiB mounted
 * for the test (root only; the test says so and is skipped elsewhere).
 *
 * - The pool log: an append whose group did not fully reach the disk is refused, never answered;
 *   every append it answered is read back after a restart (a nearly full disk takes short writes
 *   without an error, which once left answered records torn); with room again it appends anew.
 * - A node whose disk fills while 100 answered transfers wait for their block: it keeps running
 *   and answering; ordering stops with the cause named (node_getConsensusStatus, /ready 503), new
 *   transactions get -32006, never an HTTP error or -32603; after a restart with room again,
 *   every answered transaction commits.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type NodeProcess, startNodeProcess, writeNodeConfig } from '../src/devnet/node-process.ts'
import { openPoolLog, PoolLogError } from '../src/store/pool-log.ts'
import { call, ok, receiptOf, SUBMIT, sleep } from './helpers/chain.ts'
import { rawRequest } from './helpers/node.ts'
import { wallet } from './helpers/wallet.ts'

const isRoot = process.getuid?.() === 0

/** bytes still free on the filesystem of `dir` */
const freeBytes = (dir: string): number => {
  const stats = statfsSync(dir)
  return stats.bavail * stats.bsize
}

/** a tmpfs of `mib` MiB at a new directory */
function smallDisk(mib: number): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'keel-full-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', dir])
  return {
    dir,
    remove() {
      execFileSync('umount', ['-l', dir])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

if (!isRoot) test.skip('a full disk (needs root to mount a small tmpfs)', () => {})
else {
  test('pool log: an append that did not fully reach the disk is refused; every answered one is replayed', async () => {
    const disk = smallDisk(2)
    try {
      // most of the disk taken, so that a group of records finds only part of the room it needs
      writeFileSync(join(disk.dir, 'ballast'), Buffer.alloc(2 * 1024 * 1024 - 300 * 1024))
      const log = openPoolLog(disk.dir)
      await log.compact([])
      const answered: string[] = []
      let refused = 0
      for (let group = 0; group < 200 && refused === 0; group++) {
        const payloads = Array.from({ length: 16 }, (_, i) => `${group}/${i}/${'x'.repeat(1000 + ((group * 16 + i) % 97))}`)
        const outcomes = await Promise.allSettled(payloads.map((text) => log.append(new TextEncoder().encode(text))))
        outcomes.forEach((outcome, i) => {
          if (outcome.status === 'fulfilled') answered.push(payloads[i])
          else {
            assert.instance(outcome.reason, PoolLogError)
            assert.match((outcome.reason as Error).message, /ENOSPC/)
            refused++
          }
        })
      }
      assert.ok(refused > 0, 'the disk filled up')
      assert.ok(answered.length > 100, `${answered.length} appends answered first`)
      // room again: the next append starts a new segment, no restart needed
      rmSync(join(disk.dir, 'ballast'))
      await log.append(new TextEncoder().encode('after the disk had room'))
      answered.push('after the disk had room')
      await log.close()
      const replayed = openPoolLog(disk.dir)
        .replay()
        .map((record) => new TextDecoder().decode(record.payload))
      const answeredSet = new Set(answered)
      assert.equal(
        replayed.filter((text) => answeredSet.has(text)),
        answered,
        'every answered record is replayed, whole, in order',
      )
    } finally {
      disk.remove()
    }
  })

  test('a node whose disk fills up keeps answering, stops ordering with the cause, and commits every answered transaction after a restart', async () => {
    const disk = smallDisk(32)
    const work = mkdtempSync(join(tmpdir(), 'keel-full-config-'))
    let node: NodeProcess | undefined
    try {
      const configFile = join(work, 'keel.toml')
      // a block is cut 3 s after its first transaction: the disk fills while 100 answered ones wait
      writeNodeConfig(configFile, { dataDir: join(disk.dir, 'data'), batchTimeoutMs: 3000 })
      node = await startNodeProcess({ configFile })
      const url = node.url
      const key = JSON.parse(readFileSync(join(disk.dir, 'data', 'global', 'genesis-account.json'), 'utf8')) as { privateKey: string }
      const dev = wallet(key.privateKey)
      const transfers = (count: number) =>
        Promise.all(
          Array.from({ length: count }, () =>
            call<string>(url, SUBMIT.transfer, [dev.transfer(wallet().address, 1, { extra: 'x'.repeat(1000) })]),
          ),
        )
      const answered = (await transfers(100)).map((reply) => {
        assert.is(reply.code, 0, reply.message)
        return reply.result as string
      })
      // the rest of the disk taken at once, before the block of those 100 is written
      execFileSync('fallocate', ['-l', `${freeBytes(disk.dir)}`, join(disk.dir, 'ballast')])
      let status = await ok<{ state: string; reason?: string }>(url, 'node_getConsensusStatus')
      for (let waited = 0; status.state !== 'stopped' && waited < 100; waited++) {
        await sleep(100)
        status = await ok<{ state: string; reason?: string }>(url, 'node_getConsensusStatus')
      }
      assert.is(status.state, 'stopped', 'ordering stops when the block cannot be written')
      assert.match(String(status.reason), /full or failing disk/)
      assert.not.ok(node.hasExited(), `the node is still running:\n${node.output().slice(-2000)}`)
      const ready = await rawRequest(url, undefined, { method: 'GET', path: '/ready' })
      assert.is(ready.status, 503)
      assert.match(ready.text, /full or failing disk/)
      for (const reply of await transfers(20)) {
        assert.is(reply.code, -32006, `a submission on a full disk is refused with -32006: ${reply.message}`)
        assert.match(reply.message, /stopped ordering|could not make the transaction durable/)
      }
      await ok(url, 'account_getBalance', [dev.address])

      await node.kill('SIGTERM')
      rmSync(join(disk.dir, 'ballast'))
      node = await startNodeProcess({ configFile })
      for (const hash of answered) assert.is((await receiptOf(node.url, hash, 30_000)).code, 0, `${hash} commits after the restart`)
      const after = await call<string>(node.url, SUBMIT.transfer, [dev.transfer(wallet().address, 1)])
      assert.is(after.code, 0, 'with room again the node admits')
    } finally {
      await node?.kill('SIGTERM')
      disk.remove()
      rmSync(work, { recursive: true, force: true })
    }
  })
}

test.run()
