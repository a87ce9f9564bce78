/**
 * debug_traceTransaction and debug_traceCall (issue 28, docs/ethereum.md §6): geth's call tracer
 * and its default struct logger over Keel's EVM (src/exec/trace.ts).
 *
 * A transaction is traced by running it again on the state it ran on. Keel keeps the latest world
 * state only, plus, for each of the last STATE_UNDO_BLOCKS blocks, the bytes the block replaced and
 * the order it executed its transactions in (src/store/repos/state-undo.ts): the state before the
 * block is read from one snapshot, the block's earlier transactions run again on a throw-away
 * overlay of it, then the traced one, with the executor's own rules (executeBlock's path: the same
 * budgets, nonce and governance checks). Each earlier transaction's outcome is compared with the
 * block's record and the traced one's too: a re-execution that does not come out as the block did
 * (a Java contract transaction earlier in the block, which this executor does not run) is refused,
 * never answered with a trace of another run. An older block answers geth's "required historical
 * state unavailable".
 */
import type { DebugHandlers } from '../../../generated/handlers.ts'
import type { BlockHeader, ExecutionOutcome, SignedTx } from '../../domain.ts'
import { InvalidParams } from '../../errors.ts'
import { TraceFailed } from '../../eth/errors.ts'
import { ethereumGasLimitOf, isEthereumTx } from '../../eth/transaction.ts'
import type { BlockTx, EthereumCallRequest, Executor } from '../../exec/executor.ts'
import { createTracer, type TraceOptions, TraceTooLarge, type TxSummary } from '../../exec/trace.ts'
import { STATE_UNDO_BLOCKS } from '../../store/index.ts'
import type { ChainReader } from '../chain-reader.ts'
import { type BlockSelector, blockOfTag } from './query.ts'

export interface DebugModules {
  chain: ChainReader
  evm(): Executor
  txGasLimit: bigint
  /** reads an eth_call call object */
  callRequest(raw: unknown): EthereumCallRequest
  /** the context eth_call runs in on the latest state */
  latestContext(): { number: number; timestamp: bigint }
}

/** What a block recorded for one transaction it executed. */
type Recorded = { ok: true; gasUsed: number } | { ok: false; invalidMsg: string }
interface Executed extends BlockTx {
  recorded: Recorded
}

const OPTION_KEYS = new Set([
  'tracer',
  'tracerConfig',
  'timeout',
  'reexec',
  'enableMemory',
  'disableStack',
  'disableStorage',
  'enableReturnData',
  'limit',
  'debug',
])

/** geth's trace config, checked: the call tracer or the struct logger and their options */
export function traceOptionsOf(raw: unknown, index: number): TraceOptions {
  if (raw === undefined || raw === null) return {}
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new InvalidParams(`invalid argument ${index}: the trace config must be an object`)
  const config = raw as Record<string, unknown>
  for (const key of Object.keys(config))
    if (!OPTION_KEYS.has(key)) throw new InvalidParams(`invalid argument ${index}: unknown trace option ${JSON.stringify(key)}`)
  const tracer = config.tracer
  if (tracer !== undefined && tracer !== null && tracer !== '' && tracer !== 'callTracer')
    throw new InvalidParams(
      `invalid argument ${index}: tracer ${JSON.stringify(tracer).slice(0, 60)} is not served: Keel has "callTracer" and the default struct logger (no tracer)`,
    )
  const flag = (value: unknown, name: string): boolean | undefined => {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'boolean') throw new InvalidParams(`invalid argument ${index}: ${name} must be true or false`)
    return value
  }
  const tracerConfig = config.tracerConfig
  if (tracerConfig !== undefined && tracerConfig !== null && (typeof tracerConfig !== 'object' || Array.isArray(tracerConfig)))
    throw new InvalidParams(`invalid argument ${index}: tracerConfig must be an object`)
  const inner = (tracerConfig ?? {}) as Record<string, unknown>
  const limit = config.limit
  if (limit !== undefined && limit !== null && (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0))
    throw new InvalidParams(`invalid argument ${index}: limit must be a whole number of steps`)
  return {
    tracer: tracer === 'callTracer' ? 'callTracer' : undefined,
    onlyTopCall: flag(inner.onlyTopCall, 'tracerConfig.onlyTopCall'),
    withLog: flag(inner.withLog, 'tracerConfig.withLog'),
    enableMemory: flag(config.enableMemory, 'enableMemory'),
    disableStack: flag(config.disableStack, 'disableStack'),
    disableStorage: flag(config.disableStorage, 'disableStorage'),
    enableReturnData: flag(config.enableReturnData, 'enableReturnData'),
    limit: typeof limit === 'number' && limit > 0 ? limit : undefined,
  }
}

const sameOutcome = (outcome: ExecutionOutcome, recorded: Recorded): boolean =>
  recorded.ok ? outcome.ok && outcome.gasUsed === recorded.gasUsed : !outcome.ok && outcome.invalidMsg === recorded.invalidMsg

const describe = (outcome: ExecutionOutcome): string =>
  outcome.ok ? `valid, gas ${outcome.gasUsed}` : `${outcome.invalidMsg} (${outcome.detail})`
const describeRecorded = (recorded: Recorded): string => (recorded.ok ? `valid, gas ${recorded.gasUsed}` : `${recorded.invalidMsg}`)

export function createDebugHandlers(modules: DebugModules): DebugHandlers {
  const { chain, txGasLimit } = modules

  const unavailable = (number: number): TraceFailed => {
    const height = chain.height()
    const oldest = Math.max(1, chain.genesisNumber(), height - STATE_UNDO_BLOCKS + 1)
    return new TraceFailed(
      `required historical state unavailable: Keel keeps the state before each of the last ${STATE_UNDO_BLOCKS} blocks (now ${oldest} to ${height}); block ${number} is older`,
    )
  }

  /** the block's transactions in the order it executed them, with what it recorded for each */
  const executedIn = (header: BlockHeader, order: readonly boolean[] | undefined): Executed[] => {
    const valid: Executed[] = chain.getBlockTxHashes(header.number).map((hash) => {
      const committed = chain.getTx(hash)
      const receipt = chain.getReceipt(hash)
      if (committed === undefined || receipt === undefined) throw new TraceFailed(`block ${header.number} is incomplete in this store`)
      return { tx: committed.tx, signatureValid: true, recorded: { ok: true, gasUsed: receipt.gasUsed } }
    })
    const invalid: Executed[] = chain.getBlockInvalidTxHashes(header.number).map((hash) => {
      const discarded = chain.getInvalidTx(hash)
      if (discarded === undefined) throw new TraceFailed(`block ${header.number} is incomplete in this store`)
      const signatureValid = discarded.invalidMsg !== 'SIGFAILED'
      return { tx: discarded.tx, signatureValid, recorded: { ok: false, invalidMsg: discarded.invalidMsg } }
    })
    if (order === undefined) {
      if (invalid.length === 0) return valid
      throw new TraceFailed(`block ${header.number} did not record the order it executed its transactions in: it cannot be re-executed`)
    }
    const validCount = order.filter(Boolean).length
    if (validCount !== valid.length || order.length - validCount !== invalid.length)
      throw new TraceFailed(`block ${header.number}'s recorded execution order does not match its transactions`)
    let v = 0
    let i = 0
    return order.map((isValid) => (isValid ? valid[v++] : invalid[i++]))
  }

  const summaryOf = (tx: SignedTx, outcome: ExecutionOutcome): TxSummary => ({
    from: tx.from.toLowerCase(),
    to: tx.to?.toLowerCase() ?? null,
    value: isEthereumTx(tx) || tx.kind === 'transfer' ? tx.value : 0n,
    input: tx.kind === 'transfer' && !isEthereumTx(tx) ? '0x' : tx.payload,
    gas: isEthereumTx(tx) ? ethereumGasLimitOf(tx) : txGasLimit,
    gasUsed: BigInt(outcome.gasUsed),
    ok: outcome.ok,
    output: outcome.ok ? outcome.ret : '0x',
    error: outcome.ok ? undefined : outcome.detail,
  })

  const traced = <T>(make: () => T): T => {
    try {
      return make()
    } catch (error) {
      if (error instanceof TraceTooLarge) throw new TraceFailed(error.message)
      throw error
    }
  }

  return {
    debug_traceTransaction: async ([rawHash, rawOptions]: readonly unknown[]) => {
      if (typeof rawHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(rawHash))
        throw new InvalidParams(`invalid argument 0: a 32-byte 0x transaction hash; got ${JSON.stringify(rawHash)?.slice(0, 80)}`)
      const hash = rawHash.toLowerCase()
      const options = traceOptionsOf(rawOptions, 1)
      const number = chain.getTx(hash)?.blockNumber ?? chain.getInvalidTx(hash)?.blockNumber
      const header = number === undefined ? undefined : chain.getBlock(number)
      // geth's errTxNotFound
      if (number === undefined || header === undefined) throw new TraceFailed('transaction not found')
      const past = chain.stateBefore(number)
      if (past === undefined) throw unavailable(number)
      try {
        const executed = executedIn(header, past.executed)
        const at = executed.findIndex((item) => item.tx.hash === hash)
        if (at < 0) throw new TraceFailed('transaction not found')
        // copies of a transaction held by another and transactions with a wrong nonce never ran (or changed nothing)
        const prior = executed.slice(0, at).filter(({ recorded }) => recorded.ok || recorded.invalidMsg !== 'REPEATED')
        const target = executed[at]
        const tracer = createTracer(options)
        const run = await modules
          .evm()
          .traceInBlock(past.state, prior, target, { number: header.number, timestamp: header.writeTime }, tracer)
        for (const [i, outcome] of run.prior.entries())
          if (!sameOutcome(outcome, prior[i].recorded))
            throw new TraceFailed(
              `block ${header.number} does not re-execute as it ran: transaction ${prior[i].tx.hash} before this one came out ${describe(outcome)}, the block recorded ${describeRecorded(prior[i].recorded)}${prior[i].tx.vmType === 'JVM' ? ' (Java contract transactions are not re-executed by the tracer)' : ''}`,
            )
        if (!sameOutcome(run.outcome, target.recorded))
          throw new TraceFailed(
            `transaction ${hash} does not re-execute as it ran: ${describe(run.outcome)}, the block recorded ${describeRecorded(target.recorded)}${target.tx.vmType === 'JVM' ? ' (Java contract transactions are not traced)' : ''}`,
          )
        return traced(() => tracer.result(summaryOf(target.tx, run.outcome)))
      } finally {
        past.close()
      }
    },

    debug_traceCall: async ([rawCall, tag, rawOptions]: readonly unknown[]) => {
      const request = modules.callRequest(rawCall)
      const options = traceOptionsOf(rawOptions, 2)
      const number = blockOfTag(chain, (tag ?? 'latest') as BlockSelector)
      if (number === undefined) throw new TraceFailed('header not found')
      const latest = number === chain.height()
      // a block before the latest: the state after it is the state before the next one
      const past = latest ? undefined : chain.stateBefore(number + 1)
      if (!latest && past === undefined) throw unavailable(number)
      const header = chain.getBlock(number)
      const context = latest || header === undefined ? modules.latestContext() : { number, timestamp: header.writeTime }
      const tracer = createTracer(options)
      try {
        const result = await modules.evm().ethereumCall(past?.state ?? chain.state, request, context, tracer)
        return traced(() =>
          tracer.result({
            from: request.from,
            to: request.to,
            value: request.value,
            input: request.data,
            gas: request.gasLimit !== undefined && request.gasLimit < txGasLimit ? request.gasLimit : txGasLimit,
            gasUsed: result.gasUsed,
            ok: result.ok,
            output: result.ret,
            error: result.ok ? undefined : result.reverted ? 'execution reverted' : result.detail,
          }),
        )
      } finally {
        past?.close()
      }
    },
  }
}
