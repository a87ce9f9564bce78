/**
 * The EVM's plain opcodes stepped without an async function each, and without an `await` each.
 *
 * @ethereumjs/evm 10.x runs every opcode through `Interpreter.runStep`, an async function awaited
 * by the interpreter loop (`Interpreter.run`), because some opcodes (storage, calls, creations) and
 * some dynamic gas calculations read state through the async state manager. Most opcodes of a
 * contract call are neither (PUSH, DUP, SWAP, arithmetic, comparisons, JUMP/JUMPI, POP, CALLER,
 * CALLDATALOAD, ...), yet each pays for a promise, a suspended frame and a microtask: most of the
 * garbage of an ERC-20 transfer() (a heap sampling of the executor alone, issue 27), and the time
 * to make it.
 *
 * A *plain* step — its opcode synchronous, of fixed gas and valid, with nothing watching (no `step`
 * listener — debug_traceTransaction's tracer is one — no DEBUG, no profiler) and none of the
 * pending work runStep otherwise does between the gas and the handler (an EIP-7928 out-of-gas
 * carried over from a call, an EIP-6800/7864 access witness) — is done as runStep does it: the
 * fixed gas charged (`useGas`, which traps out of gas), the program counter advanced, the handler
 * run. Two places take plain steps:
 * - `runStep` itself, wrapped: a plain step returns nothing instead of a promise;
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
  opHandler: (runState: RunState, common: unknown) => void
}

interface RunState {
  opCode: number
  programCounter: number
  code: Uint8Array
  gasLeft: bigint
  validJumps: Uint8Array
  cachedPushes: unknown
  shouldDoJumpAnalysis: boolean
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

/** whether runStep would do nothing for this step but charge its fixed gas, advance and run its handler */
function plainStep(info: OpcodeEntry['opcodeInfo'], runState: RunState): boolean {
  return (
    !info.isAsync &&
    !info.dynamicGas &&
    !info.isInvalid &&
    runState.eip7928PostTargetCallOog === undefined &&
    runState.env.accessWitness === undefined
  )
}

/** a plain step, as runStep takes it */
function takePlainStep(interpreter: InterpreterLike, entry: OpcodeEntry, runState: RunState): void {
  interpreter.useGas(entry.opcodeInfo.feeBigInt, entry.opcodeInfo)
  runState.programCounter++
  entry.opHandler(runState, interpreter.common)
  syncStepCount.taken++
}

/** an error thrown by a step: an EVM error ends the frame (STOP without an error), anything else is thrown on */
function frameError(error: unknown): unknown {
  // as the EVM's loop decides it: by the error's type tag, not its class
  if ((error as { errorType?: unknown } | null)?.errorType !== 'EVMError') throw error
  return (error as EVMError).error === EVMError.errorMessages.STOP ? undefined : error
}

/** The loop for a frame of legacy code with nothing watching (see above): awaits only the steps that are not plain. */
async function runLegacyFrame(interpreter: InterpreterLike, code: Uint8Array, pc: number | undefined): Promise<RunResult> {
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
      if (plainStep(step.opcodeInfo, runState)) takePlainStep(interpreter, step, runState)
      else await interpreter.runStep(entry)
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
    prototype.runStep = function (this: InterpreterLike, opcodeObj?: OpcodeEntry): Promise<void> | undefined {
      const runState = this._runState
      const entry = opcodeObj ?? this.lookupOpInfo(runState.opCode)
      if (!plainStep(entry.opcodeInfo, runState) || !unwatched(this)) {
        return runStep.call(this, opcodeObj)
      }
      takePlainStep(this, entry, runState)
      return undefined
    }
    prototype.run = function (this: InterpreterLike, code: Uint8Array, opts: { pc?: number } = {}): Promise<RunResult> {
      if (code[0] === EOF_FORMAT && this.common.isActivatedEIP(3540)) return run.call(this, code, opts)
      if (!unwatched(this)) return run.call(this, code, opts)
      return runLegacyFrame(this, code, opts.pc)
    }
  })()
  return installed
}
