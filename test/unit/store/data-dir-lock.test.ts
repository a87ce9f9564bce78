/**
 * store/data-dir-lock.ts: one holder per directory; a holder that is gone (dead pid, another boot,
 * a pid reused by a process started later) leaves a stale lock that never blocks the next start;
 * a holder on another host is not second-guessed; and of many processes starting at once on a
 * stale lock exactly one wins.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { DataDirLocked, holderAlive, type LockHolder, lockDataDir, ownRecord } from '../../../src/store/data-dir-lock.ts'

const freshDir = (): string => mkdtempSync(join(tmpdir(), 'keel-lock-'))
const lockFiles = (dir: string): string[] => readdirSync(dir).filter((name) => name.startsWith('keel.lock'))

/** the pid of a process that has exited */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid as number
}

function refused(run: () => unknown): DataDirLocked {
  try {
    run()
  } catch (error) {
    assert.instance(error, DataDirLocked)
    return error as DataDirLocked
  }
  throw new Error('the lock was taken twice')
}

test('one holder at a time, in this process too; released, the directory can be locked again', () => {
  const dir = freshDir()
  const lock = lockDataDir(dir)
  assert.equal(lockFiles(dir), ['keel.lock.1'])
  const second = refused(() => lockDataDir(dir))
  assert.is(second.holder.pid, process.pid)
  assert.ok(second.message.includes(dir), second.message)
  assert.ok(second.message.includes(`PID ${process.pid}`), second.message)
  lock.release()
  lock.release()
  assert.equal(lockFiles(dir), [])
  lockDataDir(dir).release()
})

test('a lock left by a dead process is taken over at once, its file removed', async () => {
  const dir = freshDir()
  writeFileSync(join(dir, 'keel.lock.7'), JSON.stringify({ ...ownRecord(), pid: await deadPid() }))
  const lock = lockDataDir(dir)
  assert.equal(lockFiles(dir), ['keel.lock.8'])
  assert.is((JSON.parse(readFileSync(lock.file, 'utf8')) as LockHolder).pid, process.pid)
  lock.release()
})

test('a live pid is not enough: another boot id, or another start time (the pid reused), makes the lock stale', () => {
  // this test's own pid is certainly alive
  const live = ownRecord()
  assert.ok(holderAlive(live))
  assert.not.ok(holderAlive({ ...live, bootId: 'a-boot-before-the-last-reboot' }), 'written before a reboot')
  if (live.startTime !== undefined) assert.not.ok(holderAlive({ ...live, startTime: String(Number(live.startTime) + 1) }), 'pid reused')
  const dir = freshDir()
  writeFileSync(join(dir, 'keel.lock.1'), JSON.stringify({ ...live, pid: 1, bootId: 'a-boot-before-the-last-reboot' }))
  lockDataDir(dir).release()
})

test('a holder on another host counts as alive: the message says which file to delete', async () => {
  const dir = freshDir()
  writeFileSync(join(dir, 'keel.lock.3'), JSON.stringify({ ...ownRecord(), hostname: `not-${hostname()}`, pid: await deadPid() }))
  const error = refused(() => lockDataDir(dir))
  assert.match(error.message, new RegExp(`on host not-${hostname()}`))
  assert.ok(error.message.includes(`delete ${join(dir, 'keel.lock.3')}`), error.message)
})

test('eight processes starting at once on a stale lock: exactly one holds it, the others name it', async () => {
  const dir = freshDir()
  writeFileSync(join(dir, 'keel.lock.1'), JSON.stringify({ ...ownRecord(), pid: await deadPid() }))
  // each says "ready", waits for "go" (all at once), tries, says how it went, and holds until its stdin ends
  const script = `
    import { lockDataDir } from ${JSON.stringify(join(import.meta.dirname, '../../../src/store/data-dir-lock.ts'))}
    console.log('ready')
    process.stdin.once('data', () => {
      try {
        const lock = lockDataDir(${JSON.stringify(dir)})
        console.log('held')
        process.stdin.once('end', () => lock.release())
      } catch (error) {
        console.log('refused ' + error.holder?.pid)
      }
      process.stdin.resume()
    })`
  const children = Array.from({ length: 8 }, () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
    const lines: string[] = []
    const waiters: (() => void)[] = []
    child.stdout.on('data', (chunk: Buffer) => {
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter((line) => line !== ''),
      )
      for (const wake of waiters.splice(0)) wake()
    })
    const line = async (n: number): Promise<string> => {
      while (lines.length <= n) await new Promise<void>((resolve) => waiters.push(resolve))
      return lines[n]
    }
    return { child, line, exited: new Promise((resolve) => child.once('exit', resolve)) }
  })
  for (const { line } of children) assert.is(await line(0), 'ready')
  for (const { child } of children) child.stdin.write('go\n')
  const outcomes = await Promise.all(children.map(({ line }) => line(1)))
  for (const { child } of children) child.stdin.end()
  await Promise.all(children.map(({ exited }) => exited))
  const holders = children.filter((_, i) => outcomes[i] === 'held')
  assert.is(holders.length, 1, outcomes.join(', '))
  for (const outcome of outcomes) if (outcome !== 'held') assert.is(outcome, `refused ${holders[0].child.pid}`)
  assert.equal(lockFiles(dir), [], 'the holder gave it up')
})

test.run()
