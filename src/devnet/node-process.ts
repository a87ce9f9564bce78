/**
 * A real Keel node in a child process (`node --import tsx src/main.ts --config <file>`, or
 * `node dist/src/main.js …` when this code runs built or KEEL_NODE_BUILD names a build: see
 * src/workers/start.ts), for tests
 * that must kill it and for `npm run network`: start it on a config file and data directory, wait
 * for its `JSON-RPC listening on <url>` line, signal it, wait for it to exit. Only the pid it
 * started is ever signalled.
 *
 * With `logFile` the node's output goes to that file instead of a pipe, and with `detached` the
 * node outlives the process that started it (a local network started from the command line).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, openSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomically } from '../fs-atomic.ts'
import { childNodeArgs } from '../workers/start.ts'

/** the directory holding the src/ that runs: the checkout, or dist/ */
const thisRepo = join(import.meta.dirname, '..', '..')
/** keep this much of the child's output for error messages */
const OUTPUT_KEEP_CHARS = 64 * 1024

export interface NodeExit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface NodeProcess {
  /** base URL of the JSON-RPC endpoint, from the listening line */
  readonly url: string
  readonly pid: number
  /** the last 64 KiB of stdout and stderr */
  output(): string
  /** resolves when the process has exited */
  readonly exited: Promise<NodeExit>
  /** true once the process has exited */
  hasExited(): boolean
  /** sends `signal` (SIGTERM by default) and waits for the exit; a process already gone just reports its exit */
  kill(signal?: NodeJS.Signals): Promise<NodeExit>
  /** SIGSTOP: the node freezes, its sockets stay open (a stalled peer, not a dead one) */
  pause(): void
  /** SIGCONT after pause() */
  resume(): void
}

export interface StartNodeProcessOptions {
  /** TOML config file (--config) */
  configFile?: string
  /** --data-dir, overriding the config file */
  dataDir?: string
  /** --port; 0 (the default) picks a free port */
  port?: number
  /** --log-level; must keep `info` lines for the listening line to appear (the default: info) */
  logLevel?: 'debug' | 'info'
  /** how long to wait for the listening line */
  timeoutMs?: number
  /** extra Node.js flags placed before the script, e.g. `--cpu-prof` */
  nodeArgs?: string[]
  /** called with each chunk the child writes */
  onOutput?: (text: string) => void
  /** append the node's stdout and stderr to this file instead of piping them here */
  logFile?: string
  /** the node keeps running when this process exits (needs `logFile`) */
  detached?: boolean
  /** the checkout whose src/main.ts runs (default this one): the bench measures an older commit beside this one */
  repoRoot?: string
  /** told the child's pid as soon as it is spawned, before it listens (npm run network records it at once) */
  onSpawn?: (pid: number) => void
}

/** Starts src/main.ts in a child process and resolves once it listens; rejects (killing the child) on exit or timeout. */
export function startNodeProcess(options: StartNodeProcessOptions = {}): Promise<NodeProcess> {
  const repoRoot = options.repoRoot ?? thisRepo
  const args = [
    ...(options.nodeArgs ?? []),
    // another checkout is always its TypeScript sources
    ...(options.repoRoot === undefined
      ? childNodeArgs(new URL('../main.ts', import.meta.url))
      : ['--import', 'tsx', join(repoRoot, 'src', 'main.ts')]),
    '--port',
    String(options.port ?? 0),
    '--log-level',
    options.logLevel ?? 'info',
  ]
  if (options.configFile !== undefined) args.push('--config', options.configFile)
  if (options.dataDir !== undefined) args.push('--data-dir', options.dataDir)
  if (options.detached === true && options.logFile === undefined) throw new Error('a detached node needs a logFile')
  const logFd = options.logFile === undefined ? undefined : openSync(options.logFile, 'a')
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: repoRoot,
    stdio: logFd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', logFd, logFd],
    detached: options.detached === true,
  })
  if (logFd !== undefined) closeSync(logFd)
  if (options.detached === true) child.unref()
  if (child.pid !== undefined) options.onSpawn?.(child.pid)
  let output = ''
  let exit: NodeExit | undefined
  const exited = new Promise<NodeExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal }
      resolve(exit)
    })
  })
  const kill = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<NodeExit> => {
    if (exit === undefined) child.kill(signal)
    // an unref'd child's exit event cannot keep this process alive to wait for it: poll the pid
    if (options.detached !== true) return exited
    await waitForExit(child.pid!)
    return exit ?? { code: null, signal }
  }

  return new Promise((resolve, reject) => {
    let listening = false
    let tail: NodeJS.Timeout | undefined
    const timer = setTimeout(() => {
      clearInterval(tail)
      reject(new Error(`node did not print its listening line within ${options.timeoutMs ?? 30_000} ms:\n${output}`))
      void kill('SIGKILL')
    }, options.timeoutMs ?? 30_000)
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString()
      options.onOutput?.(text)
      output = (output + text).slice(-OUTPUT_KEEP_CHARS)
      if (listening) return
      const match = output.match(/JSON-RPC listening on (http:\/\/\S+)/)
      if (match === null) return
      listening = true
      clearTimeout(timer)
      clearInterval(tail)
      resolve({
        url: match[1],
        pid: child.pid!,
        output: () => output,
        exited,
        hasExited: () => exit !== undefined,
        kill,
        pause: () => {
          if (exit === undefined) child.kill('SIGSTOP')
        },
        resume: () => {
          if (exit === undefined) child.kill('SIGCONT')
        },
      })
    }
    if (options.logFile === undefined) {
      child.stdout!.on('data', onData)
      child.stderr!.on('data', onData)
    } else {
      // the file may hold earlier runs' lines: read only what this child appends
      const file = options.logFile
      let offset = statSync(file).size
      tail = setInterval(() => {
        const chunk = readFrom(file, offset)
        offset += chunk.length
        if (chunk.length > 0) onData(chunk)
      }, 50)
    }
    void exited.then((how) => {
      if (listening) return
      clearTimeout(timer)
      clearInterval(tail)
      reject(new Error(`node exited (code ${how.code}, signal ${how.signal}) before listening:\n${output}`))
    })
  })
}

/** resolves once no process has this pid (signal 0 probes without signalling) */
export async function waitForExit(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** the bytes of `path` from `offset` on (empty when none) */
function readFrom(path: string, offset: number): Buffer {
  const fd = openSync(path, 'r')
  try {
    const chunks: Buffer[] = []
    for (;;) {
      const buffer = Buffer.alloc(64 * 1024)
      const read = readSync(fd, buffer, 0, buffer.length, offset)
      if (read === 0) return Buffer.concat(chunks)
      chunks.push(buffer.subarray(0, read))
      offset += read
    }
  } finally {
    closeSync(fd)
  }
}

export interface NodeConfigFile {
  dataDir: string
  /** [node] namespaces: several namespaces in the process, the default first (issue 30) */
  namespaces?: readonly string[]
  port?: number
  batchSize?: number
  batchTimeoutMs?: number
  poolCapacity?: number
  /** [chain] txGasLimit: a runaway call's budget */
  txGasLimit?: number
  /** [jsonrpc] threads: request threads (0 serves requests on the chain thread) */
  threads?: number
  genesis?: readonly { address: string; balance: bigint | string | number }[]
  /** [genesis] admins: the chain's first administrators (default: the genesis accounts) */
  admins?: readonly string[]
  /** the [archive] section (archive-crash.test.ts slows batches down to kill the node between them) */
  archive?: { batchBlocks?: number; testBatchDelayMs?: number }
  /** [node] hostname (default node1) */
  hostname?: string
  /** [node] cores: the cores this node may use (its thread layout, src/thread-layout.ts); all the machine's when absent */
  cores?: number
  /** the [network] section: a node of a network of VPs and NVPs */
  network?: { configDir: string; timers: 'default' | 'test'; genesisVps?: readonly number[] }
}

/** Writes a TOML config file with the given data directory, chain settings and genesis accounts. */
export function writeNodeConfig(path: string, config: NodeConfigFile): void {
  const lines = ['[node]', `dataDir = ${JSON.stringify(config.dataDir)}`]
  if (config.hostname !== undefined) lines.push(`hostname = ${JSON.stringify(config.hostname)}`)
  if (config.cores !== undefined) lines.push(`cores = ${config.cores}`)
  if (config.namespaces !== undefined) lines.push(`namespaces = [${config.namespaces.map((name) => JSON.stringify(name)).join(', ')}]`)
  lines.push('', '[jsonrpc]', `port = ${config.port ?? 0}`)
  if (config.threads !== undefined) lines.push(`threads = ${config.threads}`)
  lines.push('', '[chain]')
  if (config.txGasLimit !== undefined) lines.push(`txGasLimit = ${config.txGasLimit}`)
  if (config.batchSize !== undefined) lines.push(`batchSize = ${config.batchSize}`)
  if (config.batchTimeoutMs !== undefined) lines.push(`batchTimeoutMs = ${config.batchTimeoutMs}`)
  if (config.poolCapacity !== undefined) lines.push(`poolCapacity = ${config.poolCapacity}`)
  if (config.archive !== undefined) {
    lines.push('', '[archive]')
    for (const [key, value] of Object.entries(config.archive)) if (value !== undefined) lines.push(`${key} = ${value}`)
  }
  if (config.network !== undefined) {
    lines.push(
      '',
      '[network]',
      `configDir = ${JSON.stringify(config.network.configDir)}`,
      `timers = ${JSON.stringify(config.network.timers)}`,
    )
    if (config.network.genesisVps !== undefined) lines.push(`genesisVps = [${config.network.genesisVps.join(', ')}]`)
  }
  if (config.genesis !== undefined && config.genesis.length > 0) {
    lines.push('', '[genesis]', 'accounts = [')
    for (const account of config.genesis) {
      lines.push(`  { address = ${JSON.stringify(account.address)}, balance = ${JSON.stringify(String(account.balance))} },`)
    }
    lines.push(']')
    if (config.admins !== undefined) lines.push(`admins = [${config.admins.map((admin) => JSON.stringify(admin)).join(', ')}]`)
  }
  writeFileAtomically(path, `${lines.join('\n')}\n`)
}
