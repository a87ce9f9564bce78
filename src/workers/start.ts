/**
 * Starting a worker thread or a child process from a module of this code base, whether it runs as
 * TypeScript under tsx (tests, development) or as JavaScript built into dist/ by `npm run build`
 * (`npm start`). Callers name the module by its source file (`new URL('./x-worker.ts',
 * import.meta.url)`); `runnableModule` turns that into what runs. Every worker posts
 * `{ ready: true, ... }` once its modules have loaded; the caller gets that message, or undefined
 * when the worker cannot start in time, and then does the work in its own thread instead.
 */
import { existsSync, readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
import { join, relative, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker, type WorkerOptions } from 'node:worker_threads'
import { heapSlotFor } from '../metrics/thread-heap.ts'

/** false under tsx; true in dist/, where every `.ts` module of the sources has a built `.js` twin beside it */
export const runningBuilt = !import.meta.url.endsWith('.ts')

/** the checkout (or dist/) this module belongs to */
const codeRoot = join(import.meta.dirname, '..', '..')

/**
 * A build of this checkout's sources (`node scripts/build.mjs --out-dir <dir>`) that the threads and
 * processes started from TypeScript run instead of compiling their modules through tsx each time:
 * the test run (scripts/run-tests.ts) builds once and sets it for the many nodes the tests start.
 */
export const SOURCES_BUILD_ENV = 'KEEL_NODE_BUILD'

/**
 * The module to run for a module of this code base named by its source file: its built `.js` twin
 * when this code runs built, or its twin in the build KEEL_NODE_BUILD names.
 */
function runnableModule(source: URL): URL {
  if (!source.pathname.endsWith('.ts')) return source
  if (runningBuilt) return new URL(source.href.replace(/\.ts$/, '.js'))
  const build = process.env[SOURCES_BUILD_ENV]
  const inCheckout = relative(codeRoot, fileURLToPath(source))
  if (build === undefined || build === '' || inCheckout.startsWith(`..${sep}`)) return source
  const twin = join(build, inCheckout.replace(/\.ts$/, '.js'))
  // a module the build left out (only src/ and what it imports are built) runs as it is
  return existsSync(twin) ? pathToFileURL(twin) : source
}

/** `node` arguments that run such a module in a child process: through tsx's loader when it is TypeScript. */
export function childNodeArgs(source: URL): string[] {
  const module = runnableModule(source)
  return module.pathname.endsWith('.ts') ? ['--import', 'tsx', fileURLToPath(module)] : [fileURLToPath(module)]
}

export interface StartedWorker<Ready> {
  worker: Worker
  ready: Ready
}

export async function startWorker<Ready extends { ready: true }>(
  source: URL,
  data: Record<string, unknown> | undefined,
  timeoutMs: number,
  /** what the thread does, for its name in profiles and the bench's per-thread figures (bench/loop-monitor.cjs) */
  threadName: string,
  /** message ports inside `data`, moved to the worker */
  transferList: readonly Transferable[] = [],
): Promise<StartedWorker<Ready> | undefined> {
  // where the worker writes its heap figures for this thread's metrics (metrics/thread-heap.ts)
  const heap = heapSlotFor(threadName)
  const workerData = { ...data, threadName, heapSlot: heap.buffer }
  const list = [...transferList] as NonNullable<WorkerOptions['transferList']>
  const module = runnableModule(source)
  let worker: Worker
  try {
    if (module.pathname.endsWith('.ts')) {
      // Under tsx the worker is TypeScript. `execArgv: ['--import', 'tsx']` does not work on Node
      // 20: the hooks it registers never apply to the worker's entry module (ERR_UNKNOWN_FILE_EXTENSION,
      // tested on 20.20). A plain-JS bootstrap registers tsx's hooks itself, then imports the file.
      const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}) })`
      worker = new Worker(bootstrap, { eval: true, workerData, transferList: list })
    } else {
      worker = new Worker(module, { workerData, transferList: list })
    }
  } catch {
    heap.release()
    return undefined
  }
  worker.once('exit', heap.release)
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(undefined), timeoutMs)
    const finish = (result: StartedWorker<Ready> | undefined): void => {
      clearTimeout(timer)
      worker.off('message', onMessage)
      worker.off('error', onFailure)
      worker.off('exit', onFailure)
      if (!result) void worker.terminate()
      resolve(result)
    }
    const onMessage = (message: Ready): void => {
      if (message?.ready === true) finish({ worker, ready: message })
    }
    const onFailure = (): void => finish(undefined)
    worker.on('message', onMessage)
    worker.once('error', onFailure)
    worker.once('exit', onFailure)
  })
}

/**
 * How much lower (in nice steps) a bulk worker runs than the threads every request passes through
 * one at a time (the request threads and the chain thread). On two cores a burst of signature
 * checks took both cores from those threads; they then fell behind, and the workers, out of
 * work, left a core idle. At a lower priority the workers take what those threads leave.
 * Measured (transfers, 128 in flight, alternated three times): cores busy 1.70–1.71 → 1.73–1.74 at 8,
 * 1.71–1.73 at 3; throughput unchanged within noise.
 */
const BULK_NICENESS = 8

/**
 * Lowers the calling worker thread's scheduling priority by BULK_NICENESS (Linux: the nice value is
 * per thread, set through the thread's id). Elsewhere, or where it is refused, the thread keeps its
 * priority: only the use of the cores depends on it.
 */
export function runAsBulkThread(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + BULK_NICENESS))
  } catch {}
}
