/**
 * Tracers for debug_traceTransaction and debug_traceCall (issue 28, docs/ethereum.md §6), in the
 * shapes geth's clients read: the call tracer (`callTracer`: one frame per message, with
 * `onlyTopCall` and `withLog`) and the default struct logger (one entry per opcode). They listen
 * to the EVM's own events (beforeMessage, afterMessage, step) of the executor re-running a
 * transaction, so the trace is of the very run the executor makes; nothing here changes state.
 * The `step` listener slows every opcode, so it is attached only for what needs it (the struct
 * logger, and the call tracer's logs).
 */
import type { EVM, EVMResult, InterpreterStep, Message } from '@ethereumjs/evm'
import { EVMError } from '@ethereumjs/evm'
import { decodeRevertReason } from '../../sdk/src/abi.ts'
import type { Hex } from '../domain.ts'
import { bytesToHex, plainHex } from '../wire/hex.ts'

export interface TraceOptions {
  /** 'callTracer', or undefined for the struct logger */
  tracer?: 'callTracer'
  /** callTracer: the top call only */
  onlyTopCall?: boolean
  /** callTracer: each frame's logs (a failed frame's, and its children's, are dropped, as geth does) */
  withLog?: boolean
  /** struct logger */
  enableMemory?: boolean
  disableStack?: boolean
  disableStorage?: boolean
  enableReturnData?: boolean
  /** struct logger: at most this many entries (then it stops recording, as geth's `limit`) */
  limit?: number
}

/** struct-log entries a trace may hold when no smaller `limit` is given: beyond it the trace is refused, never the node's memory */
export const STRUCT_LOG_MAX = 100_000

/** geth's texts for the EVM's errors (core/vm/errors.go), which trace readers match */
const GETH_ERRORS: Record<string, string> = {
  [EVMError.errorMessages.OUT_OF_GAS]: 'out of gas',
  [EVMError.errorMessages.CODESTORE_OUT_OF_GAS]: 'contract creation code storage out of gas',
  [EVMError.errorMessages.CODESIZE_EXCEEDS_MAXIMUM]: 'max code size exceeded',
  [EVMError.errorMessages.INVALID_JUMP]: 'invalid jump destination',
  [EVMError.errorMessages.REVERT]: 'execution reverted',
  [EVMError.errorMessages.STATIC_STATE_CHANGE]: 'write protection',
  [EVMError.errorMessages.CREATE_COLLISION]: 'contract address collision',
  [EVMError.errorMessages.INSUFFICIENT_BALANCE]: 'insufficient balance for transfer',
  [EVMError.errorMessages.INVALID_BYTECODE_RESULT]: 'invalid code: must not begin with 0xef',
  [EVMError.errorMessages.OUT_OF_RANGE]: 'return data out of bounds',
  [EVMError.errorMessages.INITCODE_SIZE_VIOLATION]: 'max initcode size exceeded',
}

export function gethError(error: string): string {
  return GETH_ERRORS[error] ?? error
}

const quantity = (value: bigint | number): Hex => `0x${value.toString(16)}`

export interface CallLog {
  address: Hex
  topics: Hex[]
  data: Hex
  /** how many calls of its frame came before it */
  position: Hex
}

export interface CallFrame {
  type: string
  from: Hex
  to?: Hex
  value?: Hex
  gas: Hex
  gasUsed: Hex
  input: Hex
  output?: Hex
  error?: string
  revertReason?: string
  calls?: CallFrame[]
  logs?: CallLog[]
}

export interface StructLog {
  pc: number
  op: string
  gas: number
  gasCost: number
  depth: number
  stack?: Hex[]
  memory?: string[]
  storage?: Record<string, string>
  returnData?: Hex
}

export interface StructLogResult {
  gas: number
  failed: boolean
  returnValue: string
  structLogs: StructLog[]
}

/** What the executor tells a tracer of the whole transaction once it has run. */
export interface TxSummary {
  from: Hex
  to: Hex | null
  value: bigint
  input: Hex
  /** the transaction's gas limit */
  gas: bigint
  /** its gasUsed as its receipt has it */
  gasUsed: bigint
  ok: boolean
  /** return data (a deployment: the runtime code), or on a revert the revert data */
  output: Hex
  /** why it failed, when it failed outside the EVM (a refusal before any run) or inside it */
  error?: string
}

/** A tracer attached to one EVM for one transaction or call. */
export interface Tracer {
  attach(evm: EVM): void
  detach(evm: EVM): void
  /** the trace, given how the transaction ended */
  result(summary: TxSummary): CallFrame | StructLogResult
}

export class TraceTooLarge extends Error {
  override name = 'TraceTooLarge'
}

export function createTracer(options: TraceOptions): Tracer {
  return options.tracer === 'callTracer' ? new CallTracer(options) : new StructLogger(options)
}

interface OpenFrame {
  frame: CallFrame
  isStatic: boolean
  /** its message: `to` is the address whose storage the frame runs with (a creation's, once the EVM has derived it) */
  message: Message
}

const LOG0 = 0xa0

class CallTracer implements Tracer {
  private readonly stack: OpenFrame[] = []
  private root: OpenFrame | undefined
  private readonly onBefore = (message: Message): void => this.enter(message)
  private readonly onAfter = (result: EVMResult): void => this.exit(result)
  private readonly onStep = (step: InterpreterStep): void => this.step(step)

  constructor(private readonly options: TraceOptions) {}

  attach(evm: EVM): void {
    evm.events.on('beforeMessage', this.onBefore)
    evm.events.on('afterMessage', this.onAfter)
    if (this.options.withLog === true) evm.events.on('step', this.onStep)
  }

  detach(evm: EVM): void {
    evm.events.off('beforeMessage', this.onBefore)
    evm.events.off('afterMessage', this.onAfter)
    evm.events.off('step', this.onStep)
  }

  private enter(message: Message): void {
    const parent = this.stack.at(-1)
    const create = message.to === undefined
    let type: string
    if (parent === undefined) type = create ? 'CREATE' : 'CALL'
    else if (create) type = message.salt === undefined ? 'CREATE' : 'CREATE2'
    else if (message.delegatecall) type = 'DELEGATECALL'
    else if (message.isStatic && !parent.isStatic) type = 'STATICCALL'
    else if (message.to !== undefined && !message.codeAddress.equals(message.to)) type = 'CALLCODE'
    else type = 'CALL'
    // the EVM's message of a DELEGATECALL or CALLCODE runs in the caller's context (its `to`, and for
    // a DELEGATECALL its caller, are the calling frame's); geth shows the calling contract as `from`
    // and the contract whose code runs as `to`
    const borrowsCode = type === 'DELEGATECALL' || type === 'CALLCODE'
    const frame: CallFrame = {
      type,
      from: borrowsCode && parent?.message.to !== undefined ? parent.message.to.toString() : message.caller.toString(),
      ...(create ? {} : { to: (borrowsCode ? message.codeAddress : (message.to as NonNullable<Message['to']>)).toString() }),
      // a DELEGATECALL or STATICCALL moves no value: geth shows none
      ...(type === 'DELEGATECALL' || type === 'STATICCALL' ? {} : { value: quantity(message.value) }),
      gas: quantity(message.gasLimit),
      gasUsed: '0x0',
      input: bytesToHex(message.data),
    }
    const open: OpenFrame = { frame, isStatic: message.isStatic, message }
    if (parent === undefined) this.root = open
    else if (this.options.onlyTopCall !== true) {
      parent.frame.calls ??= []
      parent.frame.calls.push(frame)
    }
    this.stack.push(open)
  }

  private exit(result: EVMResult): void {
    const open = this.stack.pop()
    if (open === undefined) return
    const { frame } = open
    const exec = result.execResult
    frame.gasUsed = quantity(exec.executionGasUsed)
    if (frame.to === undefined && result.createdAddress !== undefined) frame.to = result.createdAddress.toString()
    const output = bytesToHex(exec.returnValue)
    const error = exec.exceptionError?.error
    if (error === undefined) {
      if (output !== '0x') frame.output = output
      return
    }
    frame.error = gethError(error)
    if (error === EVMError.errorMessages.REVERT) {
      if (output !== '0x') frame.output = output
      const reason = decodeRevertReason(output)
      if (reason !== undefined) frame.revertReason = reason
    }
  }

  private step(step: InterpreterStep): void {
    const code = step.opcode.code
    if (code < LOG0 || code > LOG0 + 4) return
    const open = this.stack.at(-1)
    if (open === undefined || (this.options.onlyTopCall === true && this.stack.length > 1)) return
    const stack = step.stack
    const top = stack.length - 1
    if (top < 1 + (code - LOG0)) return // the op fails for want of stack: no log
    const offset = Number(stack[top])
    const size = Number(stack[top - 1])
    const topics: Hex[] = []
    for (let i = 0; i < code - LOG0; i++) topics.push(`0x${stack[top - 2 - i].toString(16).padStart(64, '0')}`)
    // memory the op would grow reads as zeros
    const data = new Uint8Array(size)
    if (offset < step.memory.length) data.set(step.memory.subarray(offset, Math.min(step.memory.length, offset + size)))
    open.frame.logs ??= []
    open.frame.logs.push({
      address: step.address.toString(),
      topics,
      data: bytesToHex(data),
      position: quantity(open.frame.calls?.length ?? 0),
    })
  }

  result(summary: TxSummary): CallFrame {
    const root = this.root?.frame ?? {
      // nothing ran in the EVM (a transfer, a refusal before the run, a built-in contract)
      type: summary.to === null ? 'CREATE' : 'CALL',
      from: summary.from,
      ...(summary.to === null ? {} : { to: summary.to }),
      value: quantity(summary.value),
      gas: '0x0',
      gasUsed: '0x0',
      input: summary.input,
    }
    // the top frame counts as geth's does: the transaction's gas limit and its receipt's gasUsed
    root.gas = quantity(summary.gas)
    root.gasUsed = quantity(summary.gasUsed)
    if (!summary.ok && root.error === undefined) root.error = summary.error ?? 'execution failed'
    if (this.options.withLog === true) dropFailedLogs(root, false)
    return root
  }
}

/** geth's clearFailedLogs: the logs of a failed frame and of everything under it never happened */
function dropFailedLogs(frame: CallFrame, parentFailed: boolean): void {
  const failed = parentFailed || frame.error !== undefined
  if (failed) delete frame.logs
  for (const call of frame.calls ?? []) dropFailedLogs(call, failed)
}

const SLOAD = 0x54
const SSTORE = 0x55
const word = (value: bigint): string => value.toString(16).padStart(64, '0')

class StructLogger implements Tracer {
  private readonly logs: StructLog[] = []
  private readonly storage = new Map<string, Map<string, string>>()
  private readonly max: number
  private overflow = false
  private readonly onStep = (step: InterpreterStep, resolve?: () => void): void => {
    this.step(step).then(
      () => resolve?.(),
      () => resolve?.(),
    )
  }
  private lastReturnData: Hex = '0x'
  private readonly onAfter = (result: EVMResult): void => {
    this.lastReturnData = bytesToHex(result.execResult.returnValue)
  }

  constructor(private readonly options: TraceOptions) {
    this.max = options.limit !== undefined && options.limit > 0 ? Math.min(options.limit, STRUCT_LOG_MAX) : STRUCT_LOG_MAX
  }

  attach(evm: EVM): void {
    evm.events.on('step', this.onStep)
    evm.events.on('afterMessage', this.onAfter)
  }

  detach(evm: EVM): void {
    evm.events.off('step', this.onStep)
    evm.events.off('afterMessage', this.onAfter)
  }

  private async step(step: InterpreterStep): Promise<void> {
    if (this.logs.length >= this.max) {
      // geth's `limit` stops recording; past the node's own bound, the trace is refused instead
      if (this.options.limit === undefined || this.options.limit > STRUCT_LOG_MAX) this.overflow = true
      return
    }
    const entry: StructLog = {
      pc: step.pc,
      op: step.opcode.name,
      gas: Number(step.gasLeft),
      gasCost: Number(step.opcode.dynamicFee ?? BigInt(step.opcode.fee)),
      depth: step.depth + 1,
    }
    if (this.options.disableStack !== true) entry.stack = step.stack.map((item) => quantity(item))
    if (this.options.enableMemory === true) {
      // the frame's memory size is what it has paid for (memoryWordCount); the EVM's store can be shorter
      // (a CALL's return area that got no data is charged, never written), and those words are zeros
      const size = Number(step.memoryWordCount) * 32
      const memory: string[] = []
      for (let i = 0; i < size; i += 32) memory.push(plainHex(step.memory.subarray(i, i + 32)).padEnd(64, '0'))
      entry.memory = memory
    }
    if (this.options.enableReturnData === true) entry.returnData = this.lastReturnData
    const code = step.opcode.code
    if (this.options.disableStorage !== true && (code === SLOAD || code === SSTORE) && step.stack.length >= (code === SLOAD ? 1 : 2)) {
      const top = step.stack.length - 1
      const slot = step.stack[top]
      const address = step.address.toString()
      let touched = this.storage.get(address)
      if (touched === undefined) {
        touched = new Map()
        this.storage.set(address, touched)
      }
      if (code === SSTORE) touched.set(word(slot), word(step.stack[top - 1]))
      else {
        const value = await step.stateManager.getStorage(step.address, Buffer.from(word(slot), 'hex'))
        touched.set(word(slot), plainHex(value).padStart(64, '0'))
      }
      entry.storage = Object.fromEntries(touched)
    }
    this.logs.push(entry)
  }

  result(summary: TxSummary): StructLogResult {
    if (this.overflow)
      throw new TraceTooLarge(
        `the trace has more than ${STRUCT_LOG_MAX} steps: pass {"limit": N} (at most ${STRUCT_LOG_MAX}) for its first steps, or {"tracer": "callTracer"}`,
      )
    return {
      gas: Number(summary.gasUsed),
      failed: !summary.ok,
      returnValue: summary.output.slice(2),
      structLogs: this.logs,
    }
  }
}
