/**
 * The Java executor child process (jvm/src/keel/jvm/Main.java) and the node's side of its
 * protocol: frames of a big-endian u32 length and UTF-8 JSON over the child's stdin/stdout; one
 * request in flight at a time (blocks execute one transaction after another).
 *
 * One child per node, spawned on the first JVM transaction, restarted with back-off when it dies,
 * stopped with the node. The node stays authoritative: the child never sees the store; its ledger
 * reads are answered from the caller's `read` (the transaction's state overlay) and its writes
 * come back with the result. A child that dies during a call is restarted and the call runs again
 * from the start, so the outcome is the one an undisturbed run gives (the overlay has not changed
 * meanwhile: nothing is applied before the result). A call still running well past its wall-clock
 * deadline gets the child killed and fails as a time-out.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import type { JavaContract } from '../../../sdk/src/jvm-payload.ts'
import type { Logger } from '../../log.ts'
import { ensureExecutor, jdkTool } from './build.ts'

/** A contract's classes and main class (the client package writes them, sdk/src/jvm-payload.ts). */
export type JvmCode = JavaContract

export type JvmArgs =
  | { form: 'typed'; args: { type: string; value: string }[] }
  | { form: 'strings'; args: string[] }
  /** an HVM InvokeBean: [bean class name, its class file in base64, the JSON of its fields] */
  | { form: 'bean'; args: [string, string, string] }

export interface JvmCallContext {
  /** who called: the signer (a contract, for a callee of a cross-contract call) */
  sender: string
  /** the transaction's signer */
  origin: string
  /** the transaction's extra text (HVM's getValueFromExtra reads it) */
  extra: string
  self: string
  txHash: string
  blockNumber: string
  timestamp: string
}

export interface JvmCall {
  /** code hash the executor caches the loaded contract by */
  hash: string
  /** the code, for (re)loading when the executor does not have it */
  code: () => JvmCode
  method: string
  args: JvmArgs
  ctx: JvmCallContext
  /** step budget of the call */
  steps: number
  /** a missing function is not an error (deploy-time `onInit`) */
  optional?: boolean
  /** the deployment's onInit (Hyperchain's models call it only then) */
  init?: boolean
  /** no function: the new code of an upgrade checks Hyperchain's upgrade rules against the ledger */
  upgrade?: boolean
  /** a ledger value of contract `address` the call reads: from the transaction's overlay */
  read(address: string, key: string): Uint8Array | undefined
  /** the Java contract a cross-contract call names, or why it cannot be called */
  callee(address: string): { hash: string; code: () => JvmCode } | { error: string; frozen?: true }
}

export interface JvmEvent {
  /** the contract that emitted it (a callee's events are its own) */
  address: string
  name: string
  data: Uint8Array
  topics: string[]
}

/**
 * `kind` of a failure: exception, no-method, bad-args, bean (an InvokeBean refused), upgrade (Hyperchain's upgrade rules) (the contract's doing, deterministic);
 * budget, depth, memory, limit, frozen (deterministic limits; frozen: a cross-contract call reached a frozen contract); timeout, stack, heap, crash, unavailable (this
 * machine's doing: not reproducible, charged the whole budget).
 */
export type JvmCallResult =
  /** writes: [contract address, key, value or null (removed)] */
  | { ok: true; ret: Uint8Array; writes: [string, string, Uint8Array | null][]; events: JvmEvent[]; steps: number }
  | { ok: false; kind: string; error: string; steps: number }

/** `local`: the failure is this machine's (no JDK, the executor keeps dying, a time-out), not the code's */
export type JvmLoadResult = { ok: true; initSteps: number } | { ok: false; error: string; local?: true }

export interface JvmExecutorOptions {
  /** JDK home ('' = $JAVA_HOME, then PATH) */
  javaHome?: string
  /** heap of the child, MiB */
  heapMiB?: number
  /** wall-clock safety net per call (the step budget is the real limit) */
  callTimeoutMs?: number
  /** memory budget of one call for arrays, bytes (deterministic; the same on every node) */
  callMemoryBytes?: number
  /** step budget of a contract's class initialisers at load */
  initSteps?: number
  /** the largest step budget a call is expected to get (chain.txGasLimit); a call given more raises the heap floor */
  callSteps?: number
  log: Logger
}

const MiB = 1024 * 1024
/**
 * What the JDK may keep alive without a charge, per step of the call (docs/jvm.md §5 "Memory"):
 * everything whose size grows with its input is charged to the call's memory budget, so what is left
 * are the few dozen bytes constant-time calls make (a map's node and its share of the table, a boxed
 * value, a list's slot, an iterator, a stream's stage), each paid for with several steps. The worst
 * measured shapes keep about 20 bytes a step; the model allows 32.
 */
export const UNCHARGED_BYTES_PER_STEP = 32
/** the executor's own (its loaded codes, the JDK) besides any call */
const EXECUTOR_BASE_MiB = 64

/**
 * The smallest heap the executor runs with for calls of `steps` steps and `callMemory` bytes: the
 * budget twice (what is charged, and the copy a growing array or builder holds while it moves), what
 * the steps let the JDK keep uncharged, and the executor's own. With it no call can exhaust the
 * heap before its budgets end it, so `jvm.heapMiB` decides nothing.
 */
export function heapFloorMiB(callMemory: number, steps: number): number {
  return Math.ceil((2 * callMemory + UNCHARGED_BYTES_PER_STEP * steps) / MiB) + EXECUTOR_BASE_MiB
}

export interface JvmExecutor {
  /** Scans, instruments and defines a contract's classes (idempotent per hash). */
  load(hash: string, code: JvmCode): Promise<JvmLoadResult>
  call(request: JvmCall): Promise<JvmCallResult>
  /** pid of the running child, if any (tests kill it) */
  pid(): number | undefined
  /** calls and loads the wall-clock safety net stopped since the start (a contract never should: docs/jvm.md §5) */
  wallClockStops(): number
  stop(): Promise<void>
}

/** Calls per deployment/transaction retried after the child died under them. */
const MAX_ATTEMPTS = 3
const READY_TIMEOUT_MS = 60_000
const KILL_GRACE_MS = 2_000
const BACKOFF_MIN_MS = 100
const BACKOFF_MAX_MS = 5_000
/** a child that lived this long resets the back-off */
const STABLE_MS = 30_000

type Frame = Record<string, unknown>

class ChildDied extends Error {
  override name = 'ChildDied'
}

/** One running child: its frames and the set of code hashes it has loaded. */
class Child {
  readonly proc: ChildProcess
  readonly loaded = new Set<string>()
  readonly startedAt = Date.now()
  private buffer: Buffer = Buffer.alloc(0)
  private waiter: ((frame: Frame) => void) | undefined
  private failWaiter: ((error: Error) => void) | undefined
  dead: Error | undefined

  constructor(proc: ChildProcess, log: Logger) {
    this.proc = proc
    proc.stdout?.on('data', (chunk: Buffer) => this.onData(chunk))
    let stderr = ''
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      let nl = stderr.indexOf('\n')
      while (nl >= 0) {
        const line = stderr.slice(0, nl).trim()
        if (line !== '') log.warn(`executor: ${line}`)
        stderr = stderr.slice(nl + 1)
        nl = stderr.indexOf('\n')
      }
    })
    proc.stdin?.on('error', () => {})
    proc.on('exit', (code, signal) => this.die(new ChildDied(`the executor exited (${signal ?? `code ${code}`})`)))
    proc.on('error', (error) => this.die(new ChildDied(`the executor failed: ${error.message}`)))
  }

  private die(error: Error): void {
    if (this.dead !== undefined) return
    this.dead = error
    const fail = this.failWaiter
    this.waiter = this.failWaiter = undefined
    fail?.(error)
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0)
      if (this.buffer.length < 4 + length) return
      const body = this.buffer.subarray(4, 4 + length).toString('utf8')
      this.buffer = this.buffer.subarray(4 + length)
      let frame: Frame
      try {
        frame = JSON.parse(body) as Frame
      } catch {
        this.kill()
        this.die(new ChildDied('the executor wrote a malformed frame'))
        return
      }
      const waiter = this.waiter
      if (waiter === undefined) {
        this.kill()
        this.die(new ChildDied(`the executor wrote an unexpected ${String(frame.op)} frame`))
        return
      }
      waiter(frame)
    }
  }

  send(frame: Frame): void {
    const body = Buffer.from(JSON.stringify(frame), 'utf8')
    const head = Buffer.alloc(4)
    head.writeUInt32BE(body.length)
    this.proc.stdin?.write(Buffer.concat([head, body]))
  }

  /** Sends `frame` (if any) and hands every frame that comes back to `onFrame` until it returns a result. */
  exchange<T>(frame: Frame | undefined, onFrame: (frame: Frame) => T | undefined, timeoutMs: number): Promise<T> {
    if (this.dead !== undefined) return Promise.reject(this.dead)
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = this.failWaiter = undefined
        reject(new CallTimeout())
      }, timeoutMs)
      this.failWaiter = (error) => {
        clearTimeout(timer)
        reject(error)
      }
      this.waiter = (incoming) => {
        let result: T | undefined
        try {
          result = onFrame(incoming)
        } catch (error) {
          clearTimeout(timer)
          this.waiter = this.failWaiter = undefined
          reject(error)
          return
        }
        if (result === undefined) return
        clearTimeout(timer)
        this.waiter = this.failWaiter = undefined
        resolve(result)
      }
      if (frame !== undefined) this.send(frame)
    })
  }

  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL')
  }

  /** Closes its stdin (the child exits when it reads the end) and waits for it, killing it after a grace period. */
  async retire(): Promise<void> {
    if (this.dead !== undefined) return
    const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()))
    this.proc.stdin?.end()
    const timer = setTimeout(() => this.kill(), KILL_GRACE_MS)
    await exited
    clearTimeout(timer)
  }
}

class CallTimeout extends Error {
  override name = 'CallTimeout'
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')
const unb64 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'))

/** The JVM flags that make contract runs repeatable on any machine (docs/jvm.md). */
export function childArgs(jar: string, heapMiB: number): string[] {
  return [
    // identity hash codes are all 1: HashMap order and Object.toString never depend on memory addresses
    '-XX:+UnlockExperimentalVMOptions',
    '-XX:hashCode=2',
    `-Xmx${heapMiB}m`,
    // the call-depth limit (Meter.MAX_DEPTH) is reached long before this stack is
    '-Xss16m',
    '-XX:+UseSerialGC',
    // C1 only: contract calls are short, and C2's background compiling cost more CPU than it saved (measured)
    '-XX:TieredStopAtLevel=1',
    '-Duser.language=en',
    '-Duser.country=US',
    '-Duser.timezone=UTC',
    '-Dfile.encoding=UTF-8',
    '-cp',
    jar,
    'keel.jvm.Main',
  ]
}

/**
 * The Java child's lifetime and the calls made on it.
 *
 * Long because: one state machine over one child process. Starting it (once, shared by concurrent
 * callers), the calls queued one at a time on it, restarting it after a crash or a wall-clock stop,
 * and stopping it all read and change the same child, start promise, queue and failure count.
 */
export function createJvmExecutor(options: JvmExecutorOptions): JvmExecutor {
  const { log } = options
  const callTimeoutMs = options.callTimeoutMs ?? 5_000
  const callMemory = options.callMemoryBytes ?? 64 * 1024 * 1024
  // the call's budgets, not the heap, must be what decides: the heap is never below the floor, whatever is configured
  let coveredSteps = options.callSteps ?? 10_000_000
  let heapMiB = Math.max(options.heapMiB ?? 256, heapFloorMiB(callMemory, coveredSteps))
  if (options.heapMiB !== undefined && options.heapMiB < heapMiB)
    log.info(`jvm.heapMiB ${options.heapMiB} is below what a call's budgets can use; the executor runs with ${heapMiB} MiB`)
  let wallClockStops = 0
  const initSteps = options.initSteps ?? 1_000_000
  const javaHome = options.javaHome === '' ? undefined : options.javaHome
  let child: Child | undefined
  let starting: Promise<Child> | undefined
  let stopped = false
  let failures = 0
  let nextId = 1
  // the child serves one request at a time: callers queue (the node's executor already runs one block at a time)
  let queue: Promise<unknown> = Promise.resolve()
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work)
    queue = next.catch(() => undefined)
    return next
  }

  const spawnChild = async (): Promise<Child> => {
    if (failures > 0) {
      const wait = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (failures - 1))
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
    const jar = await ensureExecutor(javaHome)
    const java = jdkTool('java', javaHome)
    const proc = spawn(java, childArgs(jar, heapMiB), { stdio: ['pipe', 'pipe', 'pipe'] })
    const started = new Child(proc, log)
    try {
      const ready = await started.exchange(undefined, (frame) => (frame.op === 'ready' ? frame : undefined), READY_TIMEOUT_MS)
      log.info(`Java executor started (pid ${proc.pid}, Java ${String(ready.java)})`)
    } catch (error) {
      started.kill()
      throw error
    }
    return started
  }

  const current = async (): Promise<Child> => {
    if (stopped) throw new Error('the JVM executor is stopped')
    if (child !== undefined && child.dead === undefined) return child
    if (child !== undefined) {
      if (Date.now() - child.startedAt > STABLE_MS) failures = 0
      failures++
      log.warn(`${child.dead?.message}; restarting it`)
      child = undefined
    }
    starting ??= spawnChild().finally(() => {
      starting = undefined
    })
    child = await starting
    return child
  }

  const loadOn = (c: Child, hash: string, code: JvmCode): Promise<JvmLoadResult> => {
    const classes: Record<string, string> = {}
    for (const [name, bytes] of code.classes) classes[name] = b64(bytes)
    return c
      .exchange(
        { op: 'load', hash, main: code.main, classes, initSteps, memory: callMemory },
        (frame) => (frame.op === 'loaded' ? frame : undefined),
        callTimeoutMs + KILL_GRACE_MS,
      )
      .then((frame) => {
        if (frame.ok !== true) return { ok: false, error: String(frame.error) }
        c.loaded.add(hash)
        return { ok: true, initSteps: Number(frame.initSteps) }
      })
  }

  /** Runs `attempt` on a live child; a child dying under it is replaced and the attempt repeated. */
  const withChild = async <T>(attempt: (c: Child) => Promise<T>, what: string): Promise<T | { unavailable: string }> => {
    let lastError = 'no attempt made'
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      let c: Child
      try {
        c = await current()
      } catch (error) {
        return { unavailable: error instanceof Error ? error.message : String(error) }
      }
      try {
        return await attempt(c)
      } catch (error) {
        if (!(error instanceof ChildDied)) throw error
        lastError = error.message
        log.warn(`${what}: ${error.message}; running it again on a new executor`)
      }
    }
    return { unavailable: `the executor died ${MAX_ATTEMPTS} times during ${what} (last: ${lastError})` }
  }

  const loadSerially = async (hash: string, code: JvmCode): Promise<JvmLoadResult> => {
    try {
      const result = await withChild((c) => loadOn(c, hash, code), 'a contract load')
      return 'unavailable' in result ? { ok: false, error: `the Java executor is unavailable: ${result.unavailable}`, local: true } : result
    } catch (error) {
      if (error instanceof CallTimeout) {
        wallClockStops++
        child?.kill()
        return { ok: false, error: 'loading the contract timed out', local: true }
      }
      throw error
    }
  }

  /** A call given more steps than the heap covers: the executor is replaced by one with the heap those steps need (a new executor gives the same outcome). */
  const coverSteps = async (steps: number): Promise<void> => {
    if (steps <= coveredSteps) return
    coveredSteps = steps
    const needed = heapFloorMiB(callMemory, steps)
    if (needed <= heapMiB) return
    log.info(`a call of ${steps} steps needs a heap of ${needed} MiB; restarting the Java executor with it`)
    heapMiB = needed
    const c = child
    child = undefined
    await c?.retire()
  }

  const callSerially = async (request: JvmCall): Promise<JvmCallResult> => {
    await coverSteps(request.steps)
    const run = async (c: Child): Promise<JvmCallResult> => {
      for (;;) {
        if (!c.loaded.has(request.hash)) {
          const loaded = await loadOn(c, request.hash, request.code())
          if (!loaded.ok) return { ok: false, kind: 'unavailable', error: `the contract's code no longer loads: ${loaded.error}`, steps: 0 }
        }
        const id = nextId++
        // the codes of the callees the node named in this call, for the executor's `code` requests
        const callees = new Map<string, () => JvmCode>()
        const answer = (incoming: Frame): Frame => {
          if (incoming.op === 'get') {
            const value = request.read(String(incoming.address), String(incoming.key))
            return { op: 'value', id, value: value === undefined ? null : b64(value) }
          }
          if (incoming.op === 'contract') {
            const found = request.callee(String(incoming.address))
            if ('error' in found) return { op: 'contract', id, ok: false, error: found.error, frozen: found.frozen === true }
            callees.set(found.hash, found.code)
            return { op: 'contract', id, ok: true, hash: found.hash }
          }
          const code = callees.get(String(incoming.hash))
          if (code === undefined) throw new ChildDied(`the executor asked for code ${String(incoming.hash)} the node did not name`)
          const classes: Record<string, string> = {}
          const decoded = code()
          for (const [name, bytes] of decoded.classes) classes[name] = b64(bytes)
          return { op: 'code', id, main: decoded.main, classes, initSteps, memory: callMemory }
        }
        const frame = await c.exchange(
          {
            op: 'call',
            id,
            hash: request.hash,
            method: request.method,
            form: request.args.form,
            args: request.args.args,
            ctx: request.ctx,
            steps: request.steps,
            memory: callMemory,
            timeoutMs: callTimeoutMs,
            optional: request.optional === true,
            init: request.init === true,
            upgrade: request.upgrade === true,
          },
          (incoming) => {
            if ((incoming.op === 'get' || incoming.op === 'contract' || incoming.op === 'code') && incoming.id === id) {
              try {
                c.send(answer(incoming))
              } catch (error) {
                // a local failure: the child waits for an answer it will not get
                c.kill()
                throw error
              }
              return undefined
            }
            if ((incoming.op === 'result' || incoming.op === 'unknown') && incoming.id === id) return incoming
            c.kill()
            throw new ChildDied(`the executor answered call ${id} with ${String(incoming.op)}`)
          },
          callTimeoutMs + KILL_GRACE_MS,
        )
        if (frame.op === 'unknown') {
          // evicted from the executor's cache: load it again
          c.loaded.delete(request.hash)
          continue
        }
        if (frame.ok !== true) {
          // the executor's own watchdog stopped it
          if (frame.kind === 'timeout') wallClockStops++
          return { ok: false, kind: String(frame.kind), error: String(frame.error), steps: Number(frame.steps) }
        }
        return {
          ok: true,
          ret: unb64(String(frame.ret)),
          writes: (frame.writes as [string, string, string | null][]).map(([address, key, value]) => [
            address,
            key,
            value === null ? null : unb64(value),
          ]),
          events: (frame.events as { address: string; name: string; data: string; topics: string[] }[]).map((e) => ({
            address: e.address,
            name: e.name,
            data: unb64(e.data),
            topics: e.topics,
          })),
          steps: Number(frame.steps),
        }
      }
    }
    try {
      const result = await withChild(run, `call ${request.method}`)
      return 'unavailable' in result ? { ok: false, kind: 'unavailable', error: result.unavailable, steps: request.steps } : result
    } catch (error) {
      if (error instanceof CallTimeout) {
        wallClockStops++
        log.warn(`call ${request.method} of ${request.ctx.self} ran past its ${callTimeoutMs} ms deadline; killing the executor`)
        child?.kill()
        return { ok: false, kind: 'timeout', error: `wall-clock time-out after ${callTimeoutMs} ms`, steps: request.steps }
      }
      throw error
    }
  }

  return {
    load: (hash, code) => serially(() => loadSerially(hash, code)),
    call: (request) => serially(() => callSerially(request)),
    pid: () => (child?.dead === undefined ? child?.proc.pid : undefined),
    wallClockStops: () => wallClockStops,

    async stop() {
      stopped = true
      await starting?.catch(() => undefined)
      const c = child
      child = undefined
      await c?.retire()
    },
  }
}
