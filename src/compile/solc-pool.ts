/**
 * contract_compileContract off the request path (ARCHITECTURE.md decision 6). Each solc release
 * lives in a worker thread of its own (solc-worker.ts), started the first time a source needs it
 * and stopped after a while without work, so the node holds at most one soljson per release in
 * use. At most `maxConcurrent` compilations run at once (one per release); up to `maxWaiting` more
 * wait in arrival order, and past that a request answers -32006 so a flood of compiles cannot
 * grow memory or delay other clients. A compile that runs past `timeoutMs` is stopped with its
 * worker (the next source reloads the release).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import semver from 'semver'
import type { CompileResult } from '../../generated/types.ts'
import { NodeError, SystemBusy } from '../errors.ts'
import type { Logger } from '../log.ts'
import { startWorker } from '../workers/start.ts'
import { chooseRelease } from './pragma.ts'

export interface Compiler {
  compile(source: string): Promise<CompileResult>
  /** the releases this node can compile with, newest first */
  releases(): string[]
  /** the releases whose compiler is in memory now */
  loaded(): string[]
  /** stops every compiler; waiting and running compiles answer -32000 */
  close(): Promise<void>
}

export const NO_COMPILER = 'the node has no Solidity compiler installed'

/**
 * The npm packages holding each release: `solc` itself (the 0.8 line) and npm aliases of `solc`
 * at the last release of each older line (package.json), installed from the registry by `npm ci`.
 */
export const SOLC_PACKAGES: readonly string[] = ['solc-0.4.26', 'solc-0.5.17', 'solc-0.6.12', 'solc-0.7.6', 'solc']

export interface SolcPoolOptions {
  /** packages to compile with: npm names or absolute paths (default SOLC_PACKAGES); [] makes a node without a compiler */
  packages?: readonly string[]
  /** compilations running at once; default one core less than the machine has, 1 to 3 */
  maxConcurrent?: number
  /** compilations waiting for a free compiler; one more answers -32006 */
  maxWaiting?: number
  /** a compile running longer is stopped (-32000) */
  timeoutMs?: number
  /** a release unused this long is unloaded */
  idleMs?: number
  /** how long a release may take to load */
  startTimeoutMs?: number
  log?: Logger
}

export const DEFAULT_MAX_WAITING = 32
const DEFAULT_TIMEOUT_MS = 60_000
const DEFAULT_IDLE_MS = 10 * 60_000
const DEFAULT_START_TIMEOUT_MS = 60_000

interface Job {
  release: string
  source: string
  resolve(result: CompileResult): void
  reject(error: Error): void
}

/** One release: its package and, while loaded, its worker. */
interface Slot {
  release: string
  packageName: string
  worker?: Worker
  busy: boolean
  idleTimer?: NodeJS.Timeout
}

interface WorkerReady {
  ready: true
  version?: string
  loadError?: string
}

type WorkerReply = { id: number; result: CompileResult } | { id: number; error: string }

/** The installed packages by release number (read from their package.json; a missing one is left out). */
function installedReleases(packages: readonly string[]): Map<string, string> {
  const require = createRequire(import.meta.url)
  const found = new Map<string, string>()
  for (const packageName of packages) {
    try {
      const manifest = JSON.parse(readFileSync(require.resolve(`${packageName}/package.json`), 'utf8')) as { version: string }
      found.set(manifest.version, packageName)
    } catch {
      // not installed: sources that need it are told which releases the node has
    }
  }
  return found
}

/**
 * contract_compileContract's compilers: one worker thread per solc release, loaded when needed.
 *
 * Long because: one scheduler. Loading a release's worker, compiling on it, unloading an idle one
 * and the bounded waiting queue all read and change the same release slots, queue and running count.
 */
export function createSolcPool(options: SolcPoolOptions = {}): Compiler {
  const installed = installedReleases(options.packages ?? SOLC_PACKAGES)
  const releases = [...installed.keys()]
  const maxConcurrent = Math.max(1, options.maxConcurrent ?? Math.min(3, Math.max(1, availableParallelism() - 1)))
  const maxWaiting = Math.max(0, options.maxWaiting ?? DEFAULT_MAX_WAITING)
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS
  const log = options.log
  const workerFile = new URL('./solc-worker.ts', import.meta.url)
  const slots = new Map<string, Slot>([...installed].map(([release, packageName]) => [release, { release, packageName, busy: false }]))
  const waiting: Job[] = []
  let running = 0
  let nextId = 1
  let closed = false

  const unload = (slot: Slot): void => {
    clearTimeout(slot.idleTimer)
    const worker = slot.worker
    slot.worker = undefined
    if (worker !== undefined) void worker.terminate()
  }

  const loaded = async (slot: Slot): Promise<Worker> => {
    if (slot.worker !== undefined) return slot.worker
    const started = await startWorker<WorkerReady>(workerFile, { packageName: slot.packageName }, startTimeoutMs, `solc ${slot.release}`)
    if (started === undefined)
      throw new NodeError(`solc ${slot.release} could not be started on this node within ${startTimeoutMs / 1000} s`)
    if (started.ready.loadError !== undefined) {
      void started.worker.terminate()
      throw new NodeError(`solc ${slot.release} cannot be loaded on this node: ${started.ready.loadError}`)
    }
    if (closed) {
      void started.worker.terminate()
      throw new NodeError('the node is stopping')
    }
    const worker = started.worker
    worker.unref()
    // an 'error' event with no listener would be thrown in this thread and take the node down
    worker.on('error', (error) => log?.error(`solc ${slot.release} worker failed`, error))
    worker.once('exit', (code) => {
      if (slot.worker !== worker) return
      // not unloaded on purpose: it died; the next source that needs this release starts a new one
      slot.worker = undefined
      log?.warn(`solc ${slot.release} worker stopped unexpectedly (exit code ${code}); the next compile starts a new one`)
    })
    slot.worker = worker
    log?.info(`solc ${started.ready.version ?? slot.release} loaded (${slot.packageName})`)
    return worker
  }

  /** Sends one source to the release's worker and waits for its answer, the timeout or its end. */
  const compileOn = (slot: Slot, worker: Worker, source: string): Promise<CompileResult> => {
    const id = nextId++
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer)
        worker.off('message', onMessage)
        worker.off('exit', onExit)
      }
      const onMessage = (reply: WorkerReply): void => {
        if (reply.id !== id) return
        done()
        if ('error' in reply) reject(new NodeError(reply.error))
        else resolve(reply.result)
      }
      const onExit = (): void => {
        done()
        reject(new NodeError(closed ? 'the node is stopping' : `solc ${slot.release} stopped while compiling; send the source again`))
      }
      const timer = setTimeout(() => {
        done()
        unload(slot)
        reject(
          new NodeError(
            `compile stopped: solc ${slot.release} took longer than ${timeoutMs / 1000} s on this source (the node's compile time limit)`,
          ),
        )
      }, timeoutMs)
      worker.on('message', onMessage)
      worker.once('exit', onExit)
      worker.postMessage({ id, source })
    })
  }

  const run = async (slot: Slot, job: Job): Promise<void> => {
    slot.busy = true
    running++
    clearTimeout(slot.idleTimer)
    const started = performance.now()
    try {
      const result = await compileOn(slot, await loaded(slot), job.source)
      log?.debug(`compiled ${result.types.length} contract(s) with solc ${slot.release} in ${Math.round(performance.now() - started)} ms`)
      job.resolve(result)
    } catch (error) {
      job.reject(error as Error)
    } finally {
      slot.busy = false
      running--
      if (slot.worker !== undefined && !closed) slot.idleTimer = setTimeout(() => unload(slot), idleMs).unref()
      pump()
    }
  }

  /** Starts waiting jobs in arrival order while compilers are free; a job whose release is busy lets later ones pass. */
  const pump = (): void => {
    for (let i = 0; i < waiting.length && running < maxConcurrent; ) {
      const slot = slots.get(waiting[i].release) as Slot
      if (slot.busy) {
        i++
        continue
      }
      const [job] = waiting.splice(i, 1)
      void run(slot, job)
    }
  }

  return {
    releases: () => [...releases].sort(semver.rcompare),
    loaded: () => [...slots.values()].filter((slot) => slot.worker !== undefined).map((slot) => slot.release),
    compile(source) {
      if (closed) return Promise.reject(new NodeError('the node is stopping'))
      if (releases.length === 0) return Promise.reject(new NodeError(NO_COMPILER))
      let release: string
      try {
        release = chooseRelease(source, releases)
      } catch (error) {
        return Promise.reject(error)
      }
      return new Promise((resolve, reject) => {
        const job = { release, source, resolve, reject }
        waiting.push(job)
        pump()
        // it could not start at once and the queue is past its bound
        if (waiting.length > maxWaiting && waiting.at(-1) === job) {
          waiting.pop()
          reject(
            SystemBusy.because(
              `${running} compilations running and ${waiting.length} waiting, the most this node queues; send contract_compileContract again in a moment`,
            ),
          )
        }
      })
    },
    async close() {
      closed = true
      for (const job of waiting.splice(0)) job.reject(new NodeError('the node is stopping'))
      await Promise.all(
        [...slots.values()].map(async (slot) => {
          clearTimeout(slot.idleTimer)
          const worker = slot.worker
          slot.worker = undefined
          if (worker !== undefined) await worker.terminate()
        }),
      )
    },
  }
}
