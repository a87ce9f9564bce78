/**
 * The EVM's plain steps taken without an async function each, and without an `await` each.
 *
 * @ethereumjs/evm 10.x runs every opcode through `Interpreter.runStep`, an async function awaited
 * by the interpreter loop (`Interpreter.run`), because some opcodes (storage, calls, creations) and
 * some dynamic gas calculations read state through the async state manager. Most steps of a
 * contract call do neither (PUSH, DUP, SWAP, arithmetic, JUMP/JUMPI, Keel's JUMPDEST, CALLER,
 * CALLDATALOAD, MLOAD/MSTORE, ...), yet each paid for a promise, a suspended frame and a microtask:
 * most of the garbage of an ERC-20 transfer() (a heap sampling of the executor alone, issue 27),
 * and the time to make it.
 *
 * A *plain* step — valid, of fixed gas or of fixed gas plus memory growth (MLOAD, MSTORE, MSTORE8:
 * `plainGas` below), with nothing watching (no `step` listener — debug_traceTransaction's tracer is
 * one — no DEBUG, no profiler) and none of the pending work runStep otherwise does between the gas
 * and the handler (an EIP-7928 out-of-gas carried over from a call, an EIP-6800/7864 access
 * witness) — is done as runStep does it: the gas charged (`useGas`, which traps out of gas), the
 * program counter advanced, the handler run, and awaited only when it returns a promise (an async
 * opcode, or Keel's JUMPDEST when the executor's turn is up). Two places take plain steps:
 * - `runStep` itself, wrapped: a plain step returns its handler's result instead of a new promise;
 * - `run`, the loop, replaced for a frame of legacy code with nothing watching: plain steps are
 *   taken in the loop without awaiting anything, and only the others await the EVM's runStep.
 *   A frame the replacement does not cover (EOF code, a profiler, DEBUG, a step listener,
 *   EIP-6800/7864 code chunks) runs the EVM's own loop.
 * The loop keeps the EVM's: the jump-destination analysis at the first jump, the cached opcode
 * entries after it, an EVM error ending the frame (STOP not an error), any other error thrown,
 * EIP-8037's leftover burn.
 */
import { EVMError } from '@ethereumjs/evm'
import { interpreterPrototype } from './jump-analysis.ts'

interface OpcodeEntry {
  opcodeInfo: { code: number; isAsync: boolean; dynamicGas: boolean; isInvalid: boolean; feeBigInt: bigint }
  opHandler: (runState: RunState, common: unknown) => Promise<void> | undefined
  gasHandler?: GasHandler
}

type GasHandler = (runState: RunState, gas: bigint, common: unknown) => Promise<bigint>

interface RunState {
  opCode: number
  programCounter: number
  code: Uint8Array
  gasLeft: bigint
  validJumps: Uint8Array
  cachedPushes: unknown
  shouldDoJumpAnalysis: boolean
  stack: { peek(count?: number): bigint[] }
  eip7928PostTargetCallOog?: unknown
  eip8037BurnLeftoverAfterCreateHaltOntoAlive?: boolean
  env: { accessWitness?: { revert(): void }; chargeCodeAccesses?: boolean }
}

interface RunResult {
  runState: RunState
  exceptionError: unknown
}

interface InterpreterLike {
  _runState: RunState
  _evm: { DEBUG: boolean; events: { listenerCount(event: string): number } }
  common: { isActivatedEIP(eip: number): boolean }
  profilerOpts?: { enabled?: boolean }
  lookupOpInfo(opcode: number): OpcodeEntry
  useGas(amount: bigint, context: unknown): void
  runStep(opcodeObj?: OpcodeEntry): Promise<void> | undefined
  run(code: Uint8Array, opts?: { pc?: number }): Promise<RunResult>
  _getValidJumpDestinations(code: Uint8Array): { jumps: Uint8Array; pushes: unknown; opcodesCached: OpcodeEntry[] }
}

/** steps taken here rather than by the EVM's runStep, and frames run by the loop here: tests read them */
export const syncStepCount = { taken: 0, frames: 0 }

const JUMP = 0x56
const JUMPI = 0x57
const JUMPSUB = 0x5e
const EOF_FORMAT = 0xef
const MLOAD = 0x51
const MSTORE = 0x52
const MSTORE8 = 0x53

/** whether nothing watches this interpreter's steps and no code-chunk charging applies (fixed for a frame) */
function unwatched(interpreter: InterpreterLike): boolean {
  return (
    !interpreter._evm.DEBUG &&
    interpreter.profilerOpts?.enabled !== true &&
    interpreter._evm.events.listenerCount('step') === 0 &&
    !interpreter.common.isActivatedEIP(6800) &&
    !interpreter.common.isActivatedEIP(7864)
  )
}

/**
 * The dynamic gas of MLOAD, MSTORE and MSTORE8 is their memory growth alone, which the EVM computes
 * without reading state (its `subMemUsage`), yet its gas handlers are async functions, awaited.
 * Here each such handler of the EVM's own table (by identity: a handler an EIP replaced is not in
 * this map) is paired with the width it touches, and the step's gas is computed as the handler
 * would: the fixed fee plus the EVM's own `subMemUsage` at the offset on top of the stack.
 */
const memoryWidths = new Map<GasHandler, bigint>()
let subMemUsage: ((runState: RunState, offset: bigint, length: bigint, common: unknown) => bigint) | undefined

/**
 * The gas of a step that runStep would do nothing for but charge, advance and run its handler — its
 * fixed fee, or a fee plus memory growth (above) — or undefined for every other step. Such a step
 * is taken here whether its handler is synchronous or async (an async one is awaited only then).
 */
function plainGas(interpreter: InterpreterLike, entry: OpcodeEntry, runState: RunState): bigint | undefined {
  const info = entry.opcodeInfo
  if (info.isInvalid || runState.eip7928PostTargetCallOog !== undefined || runState.env.accessWitness !== undefined) return undefined
  if (!info.dynamicGas) return info.feeBigInt
  const width = entry.gasHandler === undefined ? undefined : memoryWidths.get(entry.gasHandler)
  if (width === undefined || subMemUsage === undefined) return undefined
  return info.feeBigInt + subMemUsage(runState, runState.stack.peek(1)[0] as bigint, width, interpreter.common)
}

/** a plain step, as runStep takes it: its gas charged (trapping out of gas), the program counter advanced, its handler run */
function takePlainStep(interpreter: InterpreterLike, entry: OpcodeEntry, runState: RunState, gas: bigint): Promise<void> | undefined {
  interpreter.useGas(gas, entry.opcodeInfo)
  runState.programCounter++
  syncStepCount.taken++
  return entry.opHandler(runState, interpreter.common)
}

/** an error thrown by a step: an EVM error ends the frame (STOP without an error), anything else is thrown on */
function frameError(error: unknown): unknown {
  // as the EVM's loop decides it: by the error's type tag, not its class
  if ((error as { errorType?: unknown } | null)?.errorType !== 'EVMError') throw error
  return (error as EVMError).error === EVMError.errorMessages.STOP ? undefined : error
}

/** The loop for a frame of legacy code with nothing watching (see above): awaits only the steps that are not plain. */
async function runLegacyFrame(
  interpreter: InterpreterLike,
  evmRunStep: InterpreterLike['runStep'],
  code: Uint8Array,
  pc: number | undefined,
): Promise<RunResult> {
  const runState = interpreter._runState
  runState.code = code
  runState.programCounter = pc ?? runState.programCounter
  const start = runState.programCounter
  if (start !== 0 && (start < 0 || start >= code.length)) throw new Error('Internal error: program counter not in range')
  syncStepCount.frames++
  let error: unknown
  let cached: OpcodeEntry[] | undefined
  while (runState.programCounter < runState.code.length) {
    const at = runState.programCounter
    let entry: OpcodeEntry | undefined
    let opCode: number
    if (cached === undefined) {
      opCode = runState.code[at] as number
      if (opCode === JUMP || opCode === JUMPI || opCode === JUMPSUB) {
        const analysis = interpreter._getValidJumpDestinations(runState.code)
        runState.validJumps = analysis.jumps
        runState.cachedPushes = analysis.pushes
        runState.shouldDoJumpAnalysis = false
        cached = analysis.opcodesCached
      }
    } else {
      entry = cached[at] as OpcodeEntry
      opCode = entry.opcodeInfo.code
    }
    runState.opCode = opCode
    try {
      const step = entry ?? interpreter.lookupOpInfo(opCode)
      const gas = plainGas(interpreter, step, runState)
      // a step that is not plain: the EVM's own runStep (the wrapper below would only ask plainGas again)
      if (gas === undefined) await evmRunStep.call(interpreter, entry)
      else {
        const pending = takePlainStep(interpreter, step, runState, gas)
        if (pending !== undefined) await pending
      }
    } catch (thrown) {
      runState.env.accessWitness?.revert()
      error = frameError(thrown)
      break
    }
  }
  if (error === undefined && runState.eip8037BurnLeftoverAfterCreateHaltOntoAlive === true && runState.gasLeft > 0n) {
    // as the EVM's loop: a halted CREATE's leftover gas is burnt and the frame fails out of gas
    runState.gasLeft = 0n
    error = new EVMError(EVMError.errorMessages.OUT_OF_GAS)
  }
  return { runState, exceptionError: error }
}

let installed: Promise<void> | undefined

/** Installs the synchronous steps and the loop once per process. */
export function stepPlainOpcodesSynchronously(): Promise<void> {
  installed ??= (async () => {
    const prototype = await interpreterPrototype<InterpreterLike>()
    const runStep = prototype.runStep
    const run = prototype.run
    if (typeof runStep !== 'function' || typeof run !== 'function')
      throw new Error('@ethereumjs/evm: Interpreter.run or runStep not found (the EVM version changed; see sync-steps.ts)')
    const opcodes = new URL('./opcodes/', import.meta.resolve('@ethereumjs/evm'))
    const gasModule = (await import(new URL('gas.js', opcodes).href)) as { dynamicGasHandlers?: Map<number, GasHandler> }
    const utilModule = (await import(new URL('util.js', opcodes).href)) as { subMemUsage?: typeof subMemUsage }
    if (gasModule.dynamicGasHandlers === undefined || typeof utilModule.subMemUsage !== 'function')
      throw new Error(
        '@ethereumjs/evm: opcodes/gas.js dynamicGasHandlers or opcodes/util.js subMemUsage not found (the EVM version changed; see sync-steps.ts)',
      )
    subMemUsage = utilModule.subMemUsage
    for (const [opcode, width] of [
      [MLOAD, 32n],
      [MSTORE, 32n],
      [MSTORE8, 1n],
    ] as const) {
      const handler = gasModule.dynamicGasHandlers.get(opcode)
      if (handler !== undefined) memoryWidths.set(handler, width)
    }
    prototype.runStep = function (this: InterpreterLike, opcodeObj?: OpcodeEntry): Promise<void> | undefined {
      const runState = this._runState
      const entry = opcodeObj ?? this.lookupOpInfo(runState.opCode)
      const gas = unwatched(this) ? plainGas(this, entry, runState) : undefined
      return gas === undefined ? runStep.call(this, opcodeObj) : takePlainStep(this, entry, runState, gas)
    }
    prototype.run = function (this: InterpreterLike, code: Uint8Array, opts: { pc?: number } = {}): Promise<RunResult> {
      if (code[0] === EOF_FORMAT && this.common.isActivatedEIP(3540)) return run.call(this, code, opts)
      if (!unwatched(this)) return run.call(this, code, opts)
      return runLegacyFrame(this, runStep, code, opts.pc)
    }
  })()
  return installed
}
