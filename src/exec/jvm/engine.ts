/**
 * JVM transactions (deploy, invoke, upgrade) on a block's state overlay: payload decoding, the
 * executor child (child.ts), the ledger over storage slots (ledger.ts), logs from events, and
 * the outcome the block records. Nothing is written to the overlay before the call succeeded,
 * so a failed transaction leaves no trace.
 *
 * gasUsed is the executor's step count (one step per bytecode instruction, plus fixed costs per
 * ledger operation and event, docs/jvm.md), drawn from the same per-transaction and per-block gas
 * budget as EVM gas. A failure the contract caused (exception, budget, depth, memory) reports
 * the steps it took: the same on every node. A failure this machine caused (wall-clock time-out,
 * JVM stack or heap exhausted, executor unavailable) charges the whole budget.
 */
import { hexToBytes } from '@noble/hashes/utils.js'
import { keccak256 } from '../../crypto/hash.ts'
import { contractAddress } from '../../crypto/tx-hash.ts'
import type { ContractMeta, ExecutionOutcome, Hex, InvalidMsg, Log, SignedTx } from '../../domain.ts'
import type { Logger } from '../../log.ts'
import { bytesToHex } from '../../wire/hex.ts'
import type { BlockState } from '../block-state.ts'
import { FROZEN_DETAIL } from '../failures.ts'
import type { JvmCall, JvmCallResult, JvmCode, JvmExecutor } from './child.ts'
import { readValue, writeValue } from './ledger.ts'
import { decodeCallPayload, decodeDeployPayload, encodeClassStream, PayloadError } from './payload.ts'

/** What the executor hands a JVM transaction. */
export interface JvmRun {
  state: BlockState
  from: Hex
  context: { number: number; timestamp: bigint }
  /** steps (gas) this transaction may use */
  stepLimit: bigint
  t0: bigint
}

/** Failure kinds that depend on this machine, not on the transaction. */
const LOCAL_KINDS = new Set(['timeout', 'stack', 'heap', 'unavailable'])

export interface JvmEngine {
  deploy(tx: SignedTx, run: JvmRun): Promise<ExecutionOutcome>
  invoke(tx: SignedTx, to: Hex, run: JvmRun): Promise<ExecutionOutcome>
  upgrade(tx: SignedTx, to: Hex, run: JvmRun): Promise<ExecutionOutcome>
  /** the executor child's pid, when one runs */
  pid(): number | undefined
  /** calls the wall-clock safety net stopped since the start */
  wallClockStops(): number
  stop(): Promise<void>
}

const elapsed = (t0: bigint): number => Number(process.hrtime.bigint() - t0)
const hex = (bytes: Uint8Array): Hex => bytesToHex(bytes)
const payloadBytes = (payload: Hex): Uint8Array => hexToBytes(payload.length <= 2 ? '' : payload.slice(2))

function failure(invalidMsg: InvalidMsg, detail: string, gasUsed: bigint | number, t0: bigint): ExecutionOutcome {
  return { ok: false, invalidMsg, detail, gasUsed: Number(gasUsed), executeTimeNs: elapsed(t0) }
}

/** Stored code (the canonical class stream) decoded and hashed once per code. */
interface CodeEntry {
  code: Hex
  hash: Hex
  decoded: JvmCode
}

/** decoded codes kept (each at most 512 KiB) */
const CODE_CACHE_MAX = 64

/**
 * Runs Java contract transactions on the executor (child.ts): deploy, invoke and read-only calls.
 *
 * Long because: its parts are already small closures (entryOf, applyWrites, calleeOf, prepare,
 * describe) over the same decoded-code cache and executor; cut apart, each would take both.
 */
export function createJvmEngine(executor: JvmExecutor, log: Logger): JvmEngine {
  const codes = new Map<Hex, CodeEntry>()

  const entryOf = (address: Hex, code: Hex): CodeEntry => {
    const known = codes.get(address)
    if (known !== undefined && known.code === code) return known
    const bytes = payloadBytes(code)
    const entry = { code, hash: hex(keccak256(bytes)), decoded: decodeDeployPayload(bytes).code }
    if (codes.size >= CODE_CACHE_MAX) codes.clear()
    codes.set(address, entry)
    return entry
  }

  /** a callee's events are logs of the callee (as an EVM contract's calls' logs are) */
  const logsOf = (result: Extract<JvmCallResult, { ok: true }>): Log[] =>
    result.events.map((event) => ({
      address: event.address as Hex,
      topics: [event.name, ...event.topics].map((text) => hex(keccak256(text))),
      data: hex(event.data),
    }))

  /** the call's writes, to the ledgers of the contracts that made them (a cross-contract call's callee writes its own) */
  const applyWrites = (state: BlockState, result: Extract<JvmCallResult, { ok: true }>): void => {
    for (const [address, key, value] of result.writes) writeValue(state, address as Hex, key, value)
  }

  /** The Java contract at `address` a cross-contract call names, or why it cannot be called (docs/jvm.md §10). */
  const calleeOf = (state: BlockState, address: string): ReturnType<JvmCall['callee']> => {
    const target = address.toLowerCase() as Hex
    const meta = state.getContractMeta(target)
    if (meta === undefined) return { error: `there is no contract at ${target}` }
    if (meta.vmType !== 'JVM')
      return { error: `the contract at ${target} is an ${meta.vmType} contract: a Java contract calls Java contracts only` }
    if (meta.status === 'frozen') return { error: `${FROZEN_DETAIL} (${target}, called by a contract)`, frozen: true }
    const entry = entryOf(target, state.getCode(target))
    return { hash: entry.hash, code: () => entry.decoded }
  }

  /** Steps charged for a failed call: its own count when the contract caused it, the whole budget otherwise. */
  const failedSteps = (result: Extract<JvmCallResult, { ok: false }>, limit: bigint, what: string): bigint => {
    // a block's last steps may pass the limit before the stop: the charge is at most the budget
    if (!LOCAL_KINDS.has(result.kind)) return BigInt(result.steps) < limit ? BigInt(result.steps) : limit
    log.warn(`${what}: ${result.error} (not reproducible on another node; the whole budget of ${limit} is charged)`)
    return limit
  }

  const callRequest = (run: JvmRun, address: Hex, entry: CodeEntry, tx: SignedTx, steps: bigint): Omit<JvmCall, 'method' | 'args'> => ({
    hash: entry.hash,
    code: () => entry.decoded,
    ctx: {
      sender: run.from,
      origin: run.from,
      extra: tx.extra,
      self: address,
      txHash: tx.hash,
      blockNumber: String(run.context.number),
      timestamp: String(run.context.timestamp),
    },
    steps: Number(steps),
    read: (owner, key) => readValue(run.state, owner as Hex, key),
    callee: (target) => calleeOf(run.state, target),
  })

  /** Deploy or upgrade code: decoded, made canonical, loaded (scanned, instrumented, initialised) by the executor. */
  const prepare = async (
    payload: Hex,
    stepLimit: bigint,
  ): Promise<{ entry: CodeEntry; initArgs: string[]; initSteps: bigint } | { refused: string; steps: bigint }> => {
    let decoded: ReturnType<typeof decodeDeployPayload>
    try {
      decoded = decodeDeployPayload(payloadBytes(payload))
    } catch (error) {
      if (error instanceof PayloadError) return { refused: error.message, steps: 0n }
      throw error
    }
    const canonical = encodeClassStream(decoded.code)
    const entry: CodeEntry = { code: hex(canonical), hash: hex(keccak256(canonical)), decoded: decoded.code }
    const loaded = await executor.load(entry.hash, entry.decoded)
    if (!loaded.ok) {
      if (loaded.local) log.warn(`a JVM contract could not be loaded on this node: ${loaded.error}`)
      return { refused: loaded.local ? loaded.error : `contract refused: ${loaded.error}`, steps: 0n }
    }
    const initSteps = BigInt(loaded.initSteps)
    if (initSteps > stepLimit) return { refused: 'execution budget exhausted (time-out): class initialisers', steps: stepLimit }
    return { entry, initArgs: decoded.initArgs, initSteps }
  }

  const describe = (result: Extract<JvmCallResult, { ok: false }>): string =>
    result.kind === 'budget' ? `execution budget exhausted (time-out): ${result.error}` : result.error

  return {
    async deploy(tx, run) {
      const F = 'DEPLOY_CONTRACT_FAILED'
      const { state, from, t0 } = run
      const prepared = await prepare(tx.payload, run.stepLimit)
      if ('refused' in prepared) return failure(F, prepared.refused, prepared.steps, t0)
      const { entry, initArgs, initSteps } = prepared

      const account = state.getAccount(from)
      const nonce = account?.nonce ?? 0n
      const address = contractAddress(from, nonce)
      if (state.getCode(address) !== '0x' || state.getContractMeta(address) !== undefined)
        return failure(F, `the contract address ${address} is taken`, initSteps, t0)
      const result = await executor.call({
        ...callRequest(run, address, entry, tx, run.stepLimit - initSteps),
        method: 'onInit',
        args: { form: 'strings', args: initArgs },
        optional: initArgs.length === 0,
        init: true,
      })
      if (!result.ok)
        return failure(
          F,
          `onInit failed: ${describe(result)}`,
          initSteps + failedSteps(result, run.stepLimit - initSteps, `deploy ${tx.hash}`),
          t0,
        )

      state.putAccount(from, { balance: account?.balance ?? 0n, nonce: nonce + 1n })
      state.putCode(address, entry.code)
      const meta: ContractMeta = {
        creator: from,
        createdAt: run.context.timestamp,
        createdInBlock: run.context.number,
        status: 'normal',
        vmType: 'JVM',
      }
      state.putContractMeta(address, meta)
      applyWrites(state, result)
      codes.set(address, entry)
      return {
        ok: true,
        contractAddress: address,
        gasUsed: Number(initSteps + BigInt(result.steps)),
        ret: entry.code,
        logs: logsOf(result),
        executeTimeNs: elapsed(t0),
      }
    },

    async invoke(tx, to, run) {
      const F = 'INVOKE_CONTRACT_FAILED'
      const { state, t0 } = run
      let call: ReturnType<typeof decodeCallPayload>
      let entry: CodeEntry
      try {
        call = decodeCallPayload(payloadBytes(tx.payload))
        entry = entryOf(to, state.getCode(to))
      } catch (error) {
        if (error instanceof PayloadError) return failure(F, error.message, 0n, t0)
        throw error
      }
      const result = await executor.call({ ...callRequest(run, to, entry, tx, run.stepLimit), method: call.method, args: call.args })
      if (!result.ok) return failure(F, describe(result), failedSteps(result, run.stepLimit, `invoke ${tx.hash}`), t0)
      applyWrites(state, result)
      return {
        ok: true,
        contractAddress: null,
        gasUsed: result.steps,
        ret: hex(result.ret),
        logs: logsOf(result),
        executeTimeNs: elapsed(t0),
      }
    },

    async upgrade(tx, to, run) {
      const F = 'INVOKE_CONTRACT_FAILED'
      const { state, t0 } = run
      // the new code must load (scan, instrument, initialise) before it replaces the old; storage stays
      const prepared = await prepare(tx.payload, run.stepLimit)
      if ('refused' in prepared) return failure(F, `upgrade failed: ${prepared.refused}`, prepared.steps, t0)
      // the new code checks the contract's stored fields (Hyperchain's upgrade rules, docs/jvm.md §10)
      const checked = await executor.call({
        ...callRequest(run, to, prepared.entry, tx, run.stepLimit - prepared.initSteps),
        method: 'onUpgrade',
        args: { form: 'strings', args: [] },
        upgrade: true,
      })
      if (!checked.ok)
        return failure(
          F,
          `upgrade failed: ${describe(checked)}`,
          prepared.initSteps + failedSteps(checked, run.stepLimit - prepared.initSteps, `upgrade ${tx.hash}`),
          t0,
        )
      applyWrites(state, checked)
      state.putCode(to, prepared.entry.code)
      codes.set(to, prepared.entry)
      return {
        ok: true,
        contractAddress: null,
        gasUsed: Number(prepared.initSteps + BigInt(checked.steps)),
        ret: '0x',
        logs: [],
        executeTimeNs: elapsed(t0),
      }
    },

    pid: () => executor.pid(),
    wallClockStops: () => executor.wallClockStops(),
    stop: () => executor.stop(),
  }
}
