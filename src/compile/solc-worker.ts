/**
 * Worker thread of solc-pool.ts: holds ONE solc release (its soljson, 100–200 MiB once loaded) and
 * compiles one source at a time with it, so a multi-second compile never holds the node's event
 * loop. workerData: `{ packageName }` (an npm alias such as `solc-0.4.26`, or `solc`).
 * Out: `{ ready: true, version }` once loaded, or `{ ready: true, loadError }`; then per job
 * `{ id, result }` (abi, bin, types) or `{ id, error }` (the message for the client: the compiler's
 * first error).
 */
import { readlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { failpoint } from '../failpoints.ts'
import { publishThreadHeap } from '../metrics/thread-heap.ts'

interface SolcModule {
  version(): string
  compile(input: string): string
  /** solc-js 0.4.x: standard JSON goes here (its `compile` is the legacy interface) */
  compileStandardWrapper?(input: string): string
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage?: string; message: string }[]
  contracts?: Record<string, Record<string, { abi: unknown; evm?: { bytecode?: { object?: string } } }>>
}

const SOURCE_NAME = 'contract.sol'
/** the nice value of a compiler thread (0 normal, 19 lowest) */
const COMPILE_NICE = 10

const port = parentPort
if (!port) throw new Error('solc-worker.ts must run as a worker thread')
publishThreadHeap()
const { packageName } = workerData as { packageName: string }

// A compile may take seconds of CPU: on Linux this thread alone is niced, so on a busy machine the
// thread that answers requests gets the CPU first (/proc/thread-self names this thread's id).
// Elsewhere, or when not allowed, it keeps the normal priority.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), COMPILE_NICE)
} catch {
  // not Linux, or no permission: nothing to do
}

let solc: SolcModule | undefined
try {
  solc = createRequire(import.meta.url)(packageName) as SolcModule
} catch (error) {
  port.postMessage({ ready: true, loadError: `${packageName} cannot be loaded: ${(error as Error).message.split('\n')[0]}` })
}

function compile(compiler: SolcModule, source: string): { result?: { abi: string[]; bin: string[]; types: string[] }; error?: string } {
  // the same settings for every release; each keeps its own default EVM version, all of which
  // Keel's EVM (a later hardfork) runs
  const input = {
    language: 'Solidity',
    sources: { [SOURCE_NAME]: { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const run = compiler.compileStandardWrapper ?? compiler.compile
  const output = JSON.parse(run.call(compiler, JSON.stringify(input))) as SolcOutput
  const failure = output.errors?.find((error) => error.severity === 'error')
  if (failure !== undefined) return { error: `compile failed: ${(failure.formattedMessage ?? failure.message).trim()}` }
  const result = { abi: [] as string[], bin: [] as string[], types: [] as string[] }
  for (const [name, contract] of Object.entries(output.contracts?.[SOURCE_NAME] ?? {})) {
    result.abi.push(JSON.stringify(contract.abi))
    result.bin.push(`0x${contract.evm?.bytecode?.object ?? ''}`)
    result.types.push(name)
  }
  return { result }
}

if (solc !== undefined) {
  const loaded = solc
  port.on('message', (job: { id: number; source: string }) => {
    // outside the try: kills this worker as a crash of solc would (docs/reliability.md "Threads that die")
    failpoint('solc.worker')
    try {
      port.postMessage({ id: job.id, ...compile(loaded, job.source) })
    } catch (error) {
      port.postMessage({ id: job.id, error: `solc ${loaded.version()} failed on this source: ${(error as Error).message}` })
    }
  })
  port.postMessage({ ready: true, version: loaded.version() })
}
