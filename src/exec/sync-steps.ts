/**
 * The EVM's plain opcodes stepped without an async function each.
 *
 * @ethereumjs/evm 10.x runs every opcode through `Interpreter.runStep`, an async function awaited
 * by the interpreter loop, because some opcodes (storage, calls, creations) and some dynamic gas
 * calculations read state through the async state manager. Most opcodes of a contract call are
 * neither (PUSH, DUP, SWAP, arithmetic, comparisons, JUMP/JUMPI, POP, CALLER, CALLDATALOAD, ...),
 * yet each pays for a promise and a suspended async frame: about 200 KB of garbage per ERC-20
 * transfer() (a heap sampling of the executor alone, issue 27), and the time to make it.
 *
 * Here a step whose opcode is synchronous, has a fixed gas cost and is valid, with nothing watching
 * (no `step` listener — debug_traceTransaction's tracer is one — no DEBUG, no profiler) and none of
 * the pending work runStep otherwise does between the gas and the handler (an EIP-7928 out-of-gas
 * carried over from a call, an EIP-6800/7864 access witness), is done as runStep does it: the fixed
 * gas charged (`useGas`, which traps out of gas), the program counter advanced, the handler run.
 * Every other step goes to the EVM's own runStep. The interpreter loop awaits the result either
 * way, and an exception thrown here reaches the same handler as a rejected runStep's.
 */
import { interpreterPrototype } from './jump-analysis.ts'

interface OpcodeEntry {
  opcodeInfo: { isAsync: boolean; dynamicGas: boolean; isInvalid: boolean; feeBigInt: bigint }
  opHandler: (runState: RunState, common: unknown) => void
}

interface RunState {
  opCode: number
  programCounter: number
  eip7928PostTargetCallOog?: unknown
  env: { accessWitness?: unknown; chargeCodeAccesses?: boolean }
}

interface InterpreterLike {
  _runState: RunState
  _evm: { DEBUG: boolean; events: { listenerCount(event: string): number } }
  common: { isActivatedEIP(eip: number): boolean }
  profilerOpts?: { enabled?: boolean }
  lookupOpInfo(opcode: number): OpcodeEntry
  useGas(amount: bigint, context: unknown): void
  runStep(opcodeObj?: OpcodeEntry): Promise<void> | undefined
}

/** steps taken here rather than by the EVM's runStep: tests read it */
export const syncStepCount = { taken: 0 }

let installed: Promise<void> | undefined

/** Installs the synchronous step once per process. */
export function stepPlainOpcodesSynchronously(): Promise<void> {
  installed ??= (async () => {
    const prototype = await interpreterPrototype<InterpreterLike>()
    const runStep = prototype.runStep
    if (typeof runStep !== 'function') throw new Error('@ethereumjs/evm: Interpreter.runStep not found (the EVM version changed)')
    prototype.runStep = function (this: InterpreterLike, opcodeObj?: OpcodeEntry): Promise<void> | undefined {
      const runState = this._runState
      const entry = opcodeObj ?? this.lookupOpInfo(runState.opCode)
      const info = entry.opcodeInfo
      if (
        info.isAsync ||
        info.dynamicGas ||
        info.isInvalid ||
        runState.eip7928PostTargetCallOog !== undefined ||
        runState.env.accessWitness !== undefined ||
        this._evm.DEBUG ||
        this.profilerOpts?.enabled === true ||
        this._evm.events.listenerCount('step') > 0 ||
        ((this.common.isActivatedEIP(6800) || this.common.isActivatedEIP(7864)) && runState.env.chargeCodeAccesses === true)
      ) {
        return runStep.call(this, opcodeObj)
      }
      this.useGas(info.feeBigInt, info)
      runState.programCounter++
      entry.opHandler(runState, this.common)
      syncStepCount.taken++
      return undefined
    }
  })()
  return installed
}
