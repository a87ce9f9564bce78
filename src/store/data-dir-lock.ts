/**
 * One process per data directory: a node locks `<dataDir>/<namespace>` (the ledger, the consensus
 * log under it, the CA, snapshots and archives) before it opens anything there, and a second
 * process on the same directory stops at once with DataDirLocked, naming the directory and the
 * PID that holds it. Two processes writing one LMDB environment fork the chain under each other.
 *
 * Why a lock file checked for liveness: Node.js has no flock or fcntl lock, and LMDB's own lock
 * file coordinates many processes (readers and one writer at a time) rather than excluding a
 * second one. The lock file names its holder: pid, the process's start time (field 22 of
 * /proc/<pid>/stat), the boot id (/proc/sys/kernel/random/boot_id) and the host name. A holder is
 * alive when it ran on this host, in this boot, and a process with its pid and start time exists.
 * So a lock left by kill -9 or a crash is stale at once; after a reboot too, even when its pid now
 * belongs to another process (another boot id); a pid reused within one boot has another start
 * time.
 *
 * Taking over a stale lock without a race: lock files are numbered generations `keel.lock.<n>`,
 * the highest one current. A starter that finds generation n stale (or none) claims n + 1 with
 * link(2), which fails when the name exists: of two starters that both found n stale exactly one
 * wins, and the other then finds n + 1 alive. The winner deletes the older generations. A record
 * is written under a private name and linked whole, so a reader never sees half of one.
 *
 * Limits: processes sharing a directory must share a host and a PID namespace. A holder recorded
 * on another host cannot be checked and counts as alive (the message says which file to delete
 * once that host no longer runs it). Without /proc (not Linux) only the pid is checked.
 */
import { randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'

export interface LockHolder {
  pid: number
  /** clock ticks after boot at which the process started (Linux) */
  startTime?: string
  bootId?: string
  hostname: string
  /** when it took the lock (ISO 8601) */
  since: string
}

export interface DataDirLock {
  /** the lock file this process holds */
  readonly file: string
  /** gives the directory up (a no-op once given up) */
  release(): void
}

export class DataDirLocked extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
    readonly file: string,
  ) {
    const self = holder.pid === process.pid && holder.hostname === hostname() ? ' (this very process: a node already runs on it here)' : ''
    super(
      holder.hostname === hostname()
        ? `the data directory ${dir} is in use by another Keel process: PID ${holder.pid}${self}, holding it since ${holder.since} (${file}). Stop that process first, or give this node another data directory (--data-dir or [node] dataDir)`
        : `the data directory ${dir} is in use by a Keel process on host ${holder.hostname}: PID ${holder.pid}, holding it since ${holder.since} (${file}). Stop it there first; if that host no longer runs it, delete ${file}`,
    )
  }
}

const GENERATION = /^keel\.lock\.(\d+)$/

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/** the start time of process `pid` in clock ticks after boot; undefined without /proc */
function startTimeOf(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`)
  if (stat === undefined) return undefined
  // the command name (field 2) is in parentheses and may hold spaces: count from after it
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
}

const bootId = (): string | undefined => readText('/proc/sys/kernel/random/boot_id')?.trim()

/** whether the process a lock record names still runs (see the file comment) */
export function holderAlive(holder: LockHolder): boolean {
  if (holder.hostname !== hostname()) return true
  const boot = bootId()
  if (holder.bootId !== undefined && boot !== undefined && holder.bootId !== boot) return false
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    // EPERM: it exists, under another user
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
  }
  if (holder.startTime !== undefined) {
    const now = startTimeOf(holder.pid)
    if (now !== undefined && now !== holder.startTime) return false
  }
  return true
}

/** the record of this process */
export function ownRecord(): LockHolder {
  return { pid: process.pid, startTime: startTimeOf(process.pid), bootId: bootId(), hostname: hostname(), since: new Date().toISOString() }
}

const generations = (dir: string): number[] =>
  readdirSync(dir)
    .map((name) => GENERATION.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b)

const removeQuietly = (path: string): void => {
  try {
    unlinkSync(path)
  } catch {
    // gone already
  }
}

/** Locks `dir` (creating it) for this process, or throws DataDirLocked naming the live holder. */
export function lockDataDir(dir: string): DataDirLock {
  mkdirSync(dir, { recursive: true })
  const record = JSON.stringify(ownRecord())
  for (let attempt = 0; attempt < 100; attempt++) {
    const existing = generations(dir)
    const top = existing.at(-1)
    if (top !== undefined) {
      const file = join(dir, `keel.lock.${top}`)
      const text = readText(file)
      // deleted between the listing and the read: a holder just gave it up, look again
      if (text === undefined) continue
      let holder: LockHolder | undefined
      try {
        holder = JSON.parse(text) as LockHolder
      } catch {
        // records are linked whole, so an unreadable one was damaged on disk: stale
      }
      if (holder !== undefined && typeof holder.pid === 'number' && holderAlive(holder)) throw new DataDirLocked(dir, holder, file)
    }
    const mine = join(dir, `keel.lock.${(top ?? 0) + 1}`)
    const draft = join(dir, `keel.lock-draft-${process.pid}-${randomBytes(4).toString('hex')}`)
    writeFileSync(draft, record)
    try {
      linkSync(draft, mine)
    } catch (error) {
      // another starter claimed this generation first: look again (it is alive, or gone by then)
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue
      throw new Error(`cannot lock the data directory ${dir}: ${(error as Error).message} (it needs a file system with hard links)`)
    } finally {
      removeQuietly(draft)
    }
    for (const older of existing) removeQuietly(join(dir, `keel.lock.${older}`))
    let held = true
    return {
      file: mine,
      release() {
        if (!held) return
        held = false
        // only this process's own record: never another's
        if (readText(mine) === record) removeQuietly(mine)
      },
    }
  }
  throw new Error(`cannot lock the data directory ${dir}: its lock files keep changing (other Keel processes starting at this moment?)`)
}
