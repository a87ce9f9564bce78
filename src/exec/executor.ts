/**
 * The execution engine: runs a block's transactions against the latest committed state and
 * returns one outcome per transaction plus the block's world-state changes (ARCHITECTURE.md
 * decision 6).
 *
 * Determinism: every consensus-relevant number (gas, outcomes, changes) depends only on the
 * inputs. The "allotted time" of the spec is a gas budget (reliability.md part B): 10 M gas per
 * transaction, 100 M per block by default. Wall-clock time is measured (`executeTimeNs`) but
 * never decides anything.
 *
 * Rules per transaction, in order (details and the reasons for each choice are at the code):
 * - invalid signature → SIGFAILED, nothing changes;
 * - `transfer` moves `value` without the EVM; short balance → OUTOFBALANCE; gasUsed 0, and it
 *   uses none of the block's gas budget;
 * - `deploy` runs the payload as init code (value 0) at keccak(rlp([from, deployCount]))[12:]
 *   (protocol.md §2); the deploy count (account nonce) then increments;
 * - `invoke` runs the payload as calldata against a normal (not frozen) EVM contract; a call
 *   reaching a frozen contract through another contract fails the whole transaction;
 * - `maintain` (creator only, else INVALID_PERMISSION): 1 upgrade, 2 freeze, 3 unfreeze.
 * - vmType JVM: deploy, invoke and upgrade of Java contracts run in the JVM engine (jvm/engine.ts)
 *   on the same overlay and the same gas budgets; the contract's recorded vmType decides, and a
 *   transaction naming the other engine fails.
 * A failed transaction changes nothing at all: not even the deployer's nonce (Hyperchain rolls
 * the whole transaction back and records it as invalid).
 *
 * gasUsed of an EVM transaction is Ethereum's: intrinsic gas (21,000 + calldata, + creation)
 * plus execution, less the capped refund; a failure reports the gas it burnt (all of it for an
 * exceptional halt) and that gas counts against the block budget.
 *
 * Why one file of ~700 lines: the rules above are one pass over one overlay per transaction, in
 * that order, and the EVM's host hooks (frozen contracts, deploy counts, gas budgets) share the
 * block's state with it; the JVM engine (jvm/), the overlay (block-state.ts) and the state
 * manager are apart already.
 */
import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common'
import { createEVM, type EVM, EVMError, type EVMOpts, type EVMResult, type ExecResult, type Message } from '@ethereumjs/evm'
import { type Address, createAddressFromString, createZeroAddress } from '@ethereumjs/util'
import { decodeRevertReason } from '../../sdk/src/abi.ts'
import { keccak256 } from '../crypto/hash.ts'
import type { ContractMeta, ExecutionOutcome, Hex, InvalidMsg, Log, SignedTx, StateReader, WorldChanges } from '../domain.ts'
import { Opcode } from '../domain.ts'
import { ethereumGasLimitOf, isEthereumTx } from '../eth/transaction.ts'
import { type BvmHooks, type ChainVersions, executeBvm, type NodeHooks } from '../governance/execute.ts'
import { cnameOf, refusalOf } from '../governance/permission.ts'
import { type GenesisGovernance, type GovernanceConfig, GovernanceView, NO_GOVERNANCE } from '../governance/state.ts'
import { turnBudget } from '../turns.ts'
import { bytesToHex } from '../wire/hex.ts'
import { BlockState, StateReadError } from './block-state.ts'
import { installFastMstore } from './fast-mstore.ts'
import { hexToBytesChecked } from './hex-bytes.ts'
import { cacheJumpAnalysis } from './jump-analysis.ts'
import type { JvmEngine, JvmRun } from './jvm/engine.ts'
import { OverlayStateManager } from './state-manager.ts'
import { stepPlainOpcodesSynchronously } from './sync-steps.ts'
import type { Tracer } from './trace.ts'

/** reliability.md part B: a worst-case transaction must stay around 1 s of JS EVM time */
export const DEFAULT_TX_GAS_LIMIT = 10_000_000n
export const DEFAULT_BLOCK_GAS_LIMIT = 100_000_000n
/** CHAINID opcode value when none is configured */
export const DEFAULT_CHAIN_ID = 1n
/**
 * Osaka: solc 0.8.37 targets it by default (PUSH0, MCOPY, TSTORE, CLZ may all appear in its
 * output), and @ethereumjs/evm 10.1 runs it.
 */
export const HARDFORK = Hardfork.Osaka

/** EIP-170 / EIP-3541 limits on deployed code, applied to upgrades too */
const MAX_CODE_SIZE = 24_576
const CODE_DEPOSIT_GAS = 200n
/** refunds are capped at gasUsed / 5 (EIP-3529) */
const MAX_REFUND_QUOTIENT = 5n

import { BUDGET_EXHAUSTED, FROZEN_DETAIL, JVM_UNAVAILABLE, NOT_A_CONTRACT } from './failures.ts'

export { BUDGET_EXHAUSTED, FROZEN_DETAIL, JVM_UNAVAILABLE, NOT_A_CONTRACT }

export interface ExecutorOptions {
  /** gas budget of one transaction (default 10,000,000) */
  txGasLimit?: bigint
  /** EVM gas a block may consume (default 100,000,000); later EVM transactions fail */
  blockGasLimit?: bigint
  /** value of the CHAINID opcode (default 1) */
  chainId?: bigint
  /** runs vmType JVM transactions; without it they fail */
  jvm?: JvmEngine
  /** the genesis admins and settings (src/governance/state.ts); without them: none */
  governance?: GenesisGovernance
  /** what the Version contract answers (governance/execute.ts ChainVersions); default: none known */
  versions?: ChainVersions
}

export interface BlockContext {
  number: number
  /** block time, ns (ContractMeta.createdAt; the TIMESTAMP opcode sees it in seconds) */
  timestamp: bigint
}

export interface BlockTx {
  tx: SignedTx
  signatureValid: boolean
}

export interface BlockResult {
  outcomes: ExecutionOutcome[]
  changes: WorldChanges
  /** EVM gas the block consumed (sum of the outcomes' gasUsed) */
  gasUsed: bigint
}

export interface CallRequest {
  from: Hex
  to: Hex
  data: Hex
}

export interface CallResult {
  ok: boolean
  /** return data; on a revert, the revert data */
  ret: Hex
  detail?: string
  gasUsed: number
}

/** issue 28: eth_call / eth_estimateGas, which may carry value and may create (`to` null) */
export interface EthereumCallRequest {
  from: Hex
  to: Hex | null
  data: Hex
  value: bigint
  /** capped at the transaction gas limit */
  gasLimit?: bigint
}

export interface EthereumCallResult {
  ok: boolean
  /** return data; on a revert, the revert data */
  ret: Hex
  /** true: the run ended with REVERT (its data is in `ret`) */
  reverted: boolean
  detail?: string
  /** intrinsic + execution gas, before any refund: a gas limit the run needs at least */
  gasUsed: bigint
}

export interface Executor {
  readonly txGasLimit: bigint
  readonly blockGasLimit: bigint
  /** Executes txs in order on an overlay of `state`; `state` itself is never written. */
  executeBlock(state: StateReader, txs: BlockTx[], context: BlockContext): Promise<BlockResult>
  /** One transaction as if it were alone in a block, against a throw-away overlay. */
  simulate(state: StateReader, tx: SignedTx, context: BlockContext): Promise<ExecutionOutcome>
  /** Read-only call: runs `data` against `to` and discards every write. */
  call(state: StateReader, request: CallRequest, context?: BlockContext): Promise<CallResult>
  /** issue 28: an Ethereum-dialect call (value, creation, a gas limit) on a throw-away overlay; `tracer` watches its run */
  ethereumCall(state: StateReader, request: EthereumCallRequest, context?: BlockContext, tracer?: Tracer): Promise<EthereumCallResult>
  /**
   * issue 28 (debug_traceTransaction): on a throw-away overlay of `state` (the state before the
   * block), executes `prior` as the block did, then `target` with `tracer` watching: the same rules,
   * budgets and governance as executeBlock, so the outcomes come out as the block's did.
   */
  traceInBlock(
    state: StateReader,
    prior: readonly BlockTx[],
    target: BlockTx,
    context: BlockContext,
    tracer: Tracer,
  ): Promise<{ prior: ExecutionOutcome[]; outcome: ExecutionOutcome }>
  /** the VP group NODE proposals change (a node in a network; a solo node has none and refuses them) */
  attachNetwork(node: NodeHooks): void
}

// ---------------------------------------------------------------------------------------------

const ADDRESS = /^0x[0-9a-f]{40}$/
const ZERO_ADDRESS_UNPREFIXED = '0'.repeat(40)

/** EVM block header fields Keel supplies; everything else is a fixed, deterministic value. */
function evmBlock(context: BlockContext, blockGasLimit: bigint) {
  return {
    header: {
      number: BigInt(context.number),
      coinbase: createZeroAddress(),
      // Keel block times are ns; Solidity's `block.timestamp` arithmetic assumes seconds
      timestamp: context.timestamp / 1_000_000_000n,
      difficulty: 0n,
      prevRandao: new Uint8Array(32),
      gasLimit: blockGasLimit,
      baseFeePerGas: 0n,
      slotNumber: 0n,
      getBlobGasPrice: () => 1n,
    },
  }
}
type EvmBlock = ReturnType<typeof evmBlock>

/**
 * A contract called a frozen contract. Thrown out of the EVM (not an EVM error), so the whole
 * transaction fails, whatever the calling contract would do with a failed call: a frozen
 * contract cannot be used, directly or through another contract.
 */
class FrozenContractError extends Error {
  constructor(readonly address: Hex) {
    super(`${FROZEN_DETAIL} (${address}, called by a contract)`)
    this.name = 'FrozenContractError'
  }
}

/** Ethereum's intrinsic gas (21,000 + calldata 4/16 per byte; creation + 32,000 + 2 per init-code word). */
function intrinsicGas(data: Uint8Array, create: boolean): bigint {
  let gas = 21_000
  for (let i = 0; i < data.length; i++) gas += data[i] === 0 ? 4 : 16
  if (create) gas += 32_000 + 2 * Math.ceil(data.length / 32)
  return BigInt(gas)
}

function elapsed(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0)
}

function failure(invalidMsg: InvalidMsg, detail: string, gasUsed: bigint, t0: bigint): ExecutionOutcome {
  return { ok: false, invalidMsg, detail, gasUsed: Number(gasUsed), executeTimeNs: elapsed(t0) }
}

function toLogs(result: ExecResult): Log[] {
  const logs = result.logs
  if (logs === undefined || logs.length === 0) return []
  return logs.map(([address, topics, data]) => ({
    address: bytesToHex(address),
    topics: topics.map((t) => bytesToHex(t)),
    data: bytesToHex(data),
  }))
}

/** Hex payload to bytes, or undefined when it is not whole bytes of hex. */
function payloadBytes(payload: Hex): Uint8Array | undefined {
  if (payload === '0x' || payload === '') return new Uint8Array(0)
  return hexToBytesChecked(payload)
}

// ---------------------------------------------------------------------------------------------

/** The shared EVM with its adapter; one per executor, used by one run at a time. */
class Engine {
  readonly evm: EVM
  readonly sm: OverlayStateManager
  private readonly txGasLimit: bigint
  private readonly blockGasLimit: bigint
  private readonly warm: string[]
  /** per tx: created contract address -> the address that created it */
  private readonly creators = new Map<Hex, Hex>()
  /** per tx: for each open message frame, its caller when it is a creation */
  private readonly frames: (Hex | null)[] = []
  private state: BlockState | undefined
  private block: EvmBlock | undefined
  /** EVM gas still available to the current block */
  remaining = 0n
  /** gas limit of the EVM run in progress (charged in full when a frozen contract stops it) */
  private runLimit = 0n
  /** the governance settings while no BVM transaction of the block has run since they were read */
  private govConfig: GovernanceConfig | undefined
  /** the run's turns (src/turns.ts): between transactions, and at JUMPDESTs inside one EVM call */
  turn: () => Promise<void> | undefined = () => undefined

  constructor(
    evm: EVM,
    sm: OverlayStateManager,
    txGasLimit: bigint,
    blockGasLimit: bigint,
    private readonly jvmEngine: JvmEngine | undefined,
    private readonly governance: GenesisGovernance,
    /** the network's VP group for NODE proposals, once attached */
    private readonly network: { node?: NodeHooks },
    private readonly versions: ChainVersions,
  ) {
    this.evm = evm
    this.sm = sm
    this.txGasLimit = txGasLimit
    this.blockGasLimit = blockGasLimit
    // EIP-2929/3651: precompiles and the (zero) coinbase are warm for every transaction
    this.warm = [...evm.precompiles.keys(), ZERO_ADDRESS_UNPREFIXED]
    evm.events.on('beforeMessage', (message: Message) => {
      this.frames.push(message.to === undefined ? message.caller.toString() : null)
      if (message.depth > 0 && message.to !== undefined) {
        const target = message.codeAddress.toString()
        if (this.state?.getContractMeta(target)?.status === 'frozen') throw new FrozenContractError(target)
      }
    })
    evm.events.on('afterMessage', (result: EVMResult) => {
      const caller = this.frames.pop()
      if (caller && result.createdAddress && !result.execResult.exceptionError) this.creators.set(result.createdAddress.toString(), caller)
    })
  }

  attach(state: BlockState, context: BlockContext): void {
    this.turn = turnBudget()
    this.govConfig = undefined
    this.state = state
    this.block = evmBlock(context, this.blockGasLimit)
    this.remaining = this.blockGasLimit
    this.sm.attach(state)
  }

  detach(): void {
    this.turn = () => undefined
    this.state = undefined
    this.block = undefined
    this.sm.detach()
  }

  private get s(): BlockState {
    if (this.state === undefined) throw new Error('Engine used while detached')
    return this.state
  }

  /** Resets the per-transaction EVM context (warm sets, transient storage, original values). */
  private beginEvmTx(from: Hex, to: Hex | undefined, gasLimit: bigint): void {
    this.runLimit = gasLimit
    const journal = this.evm.journal
    journal.cleanJournal()
    for (const a of this.warm) journal.addAlwaysWarmAddress(a)
    journal.addAlwaysWarmAddress(from)
    if (to !== undefined) journal.addAlwaysWarmAddress(to)
    this.evm.transientStorage.clear()
    this.sm.beginTx()
    this.creators.clear()
    this.frames.length = 0
  }

  /** Gas limit for the next EVM transaction, or a failure detail when it cannot start. */
  private gasLimitFor(intrinsic: bigint): { limit: bigint; blockBound: boolean } | string {
    const blockBound = this.remaining < this.txGasLimit
    const limit = blockBound ? this.remaining : this.txGasLimit
    if (limit >= intrinsic) return { limit, blockBound }
    if (blockBound) return `block gas limit ${this.blockGasLimit} reached: transaction not executed`
    return `intrinsic gas ${intrinsic} exceeds the transaction gas limit ${this.txGasLimit}`
  }

  private describe(result: ExecResult, blockBound: boolean): string {
    const err = result.exceptionError
    if (err === undefined) return 'execution failed'
    if (err.error === EVMError.errorMessages.OUT_OF_GAS) {
      return blockBound ? `${BUDGET_EXHAUSTED}: block gas limit ${this.blockGasLimit} reached` : BUDGET_EXHAUSTED
    }
    if (err.error === EVMError.errorMessages.REVERT) {
      const reason = decodeRevertReason(result.returnValue)
      return reason === undefined ? 'reverted' : `reverted: ${reason}`
    }
    return `execution error: ${err.error}`
  }

  /** Records ContractMeta for every contract the current transaction created. */
  private recordCreated(from: Hex, context: BlockContext): void {
    const s = this.s
    for (const address of this.sm.codeWrites) {
      if (s.getCode(address) === '0x' || s.getContractMeta(address) !== undefined) continue
      const meta: ContractMeta = {
        creator: this.creators.get(address) ?? from,
        createdAt: context.timestamp,
        createdInBlock: context.number,
        status: 'normal',
        vmType: 'EVM',
      }
      s.putContractMeta(address, meta)
    }
  }

  private charge(used: bigint): void {
    this.remaining = used >= this.remaining ? 0n : this.remaining - used
  }

  /** One transaction; the returned promise only exists for EVM work. */
  execute(tx: SignedTx, signatureValid: boolean, context: BlockContext): ExecutionOutcome | Promise<ExecutionOutcome> {
    const t0 = process.hrtime.bigint()
    if (!signatureValid) return failure('SIGFAILED', 'invalid signature', 0n, t0)
    const from = tx.from.toLowerCase()
    // an account abandoned or frozen, or a rule changed, after its transaction was pooled: refused here, on every VP alike
    const view = new GovernanceView(this.s, this.governance)
    this.govConfig ??= view.config()
    const refusal = refusalOf(view, this.govConfig, tx)
    if (refusal !== undefined)
      return isEthereumTx(tx) ? this.refuseEthereum(tx, from, refusal, t0) : failure('INVALID_PERMISSION', refusal, 0n, t0)
    // issue 28: a transaction sent through eth_sendRawTransaction runs with Ethereum's rules (src/eth/)
    if (isEthereumTx(tx))
      return this.guard(
        () => this.ethereum(tx, from, context, t0),
        tx.to === null ? 'DEPLOY_CONTRACT_FAILED' : 'INVOKE_CONTRACT_FAILED',
        t0,
      )
    if (tx.vmType === 'BVM') {
      // a BVM transaction may change the settings: read them again for the next transaction
      this.govConfig = undefined
      return this.guard(() => this.bvm(tx, from, context, t0), 'INVOKE_CONTRACT_FAILED', t0)
    }
    switch (tx.kind) {
      case 'transfer':
        return this.transfer(tx, from, t0)
      case 'deploy':
        return this.guard(() => this.deploy(tx, from, context, t0), 'DEPLOY_CONTRACT_FAILED', t0)
      case 'invoke':
        return this.guard(() => this.invoke(tx, from, context, t0), 'INVOKE_CONTRACT_FAILED', t0)
      case 'maintain':
        return this.guard(() => this.maintain(tx, from, context, t0), 'INVOKE_CONTRACT_FAILED', t0)
      default:
        return failure('INVOKE_CONTRACT_FAILED', `unknown transaction kind ${String(tx.kind)}`, 0n, t0)
    }
  }

  /**
   * An exception out of the EVM that is not a state read failure is an engine defect that every
   * node hits identically for the same input: record it as a failed transaction (the chain goes
   * on) instead of failing the block. State read failures are local and propagate.
   */
  private async guard(run: () => Promise<ExecutionOutcome>, invalidMsg: InvalidMsg, t0: bigint): Promise<ExecutionOutcome> {
    const depth = this.s.depth
    try {
      return await run()
    } catch (e) {
      this.s.revertTo(depth)
      this.frames.length = 0
      if (e instanceof StateReadError) throw e
      if (e instanceof FrozenContractError) {
        this.charge(this.runLimit)
        return failure(invalidMsg, e.message, this.runLimit, t0)
      }
      return failure(invalidMsg, `internal execution error: ${e instanceof Error ? e.message : String(e)}`, 0n, t0)
    }
  }

  private transfer(tx: SignedTx, from: Hex, t0: bigint): ExecutionOutcome {
    const s = this.s
    const to = tx.to?.toLowerCase()
    if (to === undefined || !ADDRESS.test(to) || !ADDRESS.test(from))
      return failure('OUTOFBALANCE', 'transfer needs valid from and to addresses', 0n, t0)
    const value = tx.value
    if (value < 0n) return failure('OUTOFBALANCE', `negative amount ${value}`, 0n, t0)
    const sender = s.getAccount(from)
    const balance = sender?.balance ?? 0n
    if (balance < value) return failure('OUTOFBALANCE', `balance ${balance} is below the amount ${value}`, 0n, t0)
    if (sender !== undefined && value !== 0n) s.putAccount(from, { balance: balance - value, nonce: sender.nonce })
    // read after the debit, so a transfer to oneself nets to zero
    const receiver = s.getAccount(to)
    if (receiver === undefined) s.putAccount(to, { balance: value, nonce: 0n })
    else if (value !== 0n) s.putAccount(to, { balance: receiver.balance + value, nonce: receiver.nonce })
    return { ok: true, contractAddress: null, gasUsed: 0, ret: '0x', logs: [], executeTimeNs: elapsed(t0) }
  }

  private async deploy(tx: SignedTx, from: Hex, context: BlockContext, t0: bigint): Promise<ExecutionOutcome> {
    const F = 'DEPLOY_CONTRACT_FAILED'
    if (!ADDRESS.test(from)) return failure(F, 'invalid from address', 0n, t0)
    if (tx.vmType === 'JVM') return this.jvm(F, from, context, t0, (jvm, run) => jvm.deploy(tx, run))
    const code = payloadBytes(tx.payload)
    if (code === undefined) return failure(F, 'payload is not hex bytes', 0n, t0)
    if (code.length === 0) return failure(F, 'contract code is empty', 0n, t0)
    const intrinsic = intrinsicGas(code, true)
    const gas = this.gasLimitFor(intrinsic)
    if (typeof gas === 'string') return failure(F, gas, 0n, t0)

    const s = this.s
    const caller = createAddressFromString(from)
    this.beginEvmTx(from, undefined, gas.limit)
    s.checkpoint()
    // runCall increments the caller's nonce at depth 0 before deriving the address from
    // nonce - 1, i.e. from the deploy count before this deployment (protocol.md §2); the
    // increment sits outside the EVM's own frame checkpoint, our checkpoint covers it
    const result = await this.evm.runCall({
      caller,
      origin: caller,
      data: code,
      gasLimit: gas.limit - intrinsic,
      value: 0n,
      block: this.block,
    })
    const exec = result.execResult
    let used = intrinsic + exec.executionGasUsed
    if (exec.exceptionError !== undefined || result.createdAddress === undefined) {
      s.revert()
      this.charge(used)
      return failure(F, this.describe(exec, gas.blockBound), used, t0)
    }
    const address = result.createdAddress.toString()
    const runtime = s.getCode(address)
    if (runtime === '0x') {
      s.revert()
      this.charge(used)
      return failure(F, 'init code returned no runtime code', used, t0)
    }
    this.recordCreated(from, context)
    s.commit()
    used -= min(exec.gasRefund ?? 0n, used / MAX_REFUND_QUOTIENT)
    this.charge(used)
    return { ok: true, contractAddress: address, gasUsed: Number(used), ret: runtime, logs: toLogs(exec), executeTimeNs: elapsed(t0) }
  }

  /**
   * The contract a transaction addresses: `to`, or the contract its `cname` names now (the zero
   * address with a name; docs/governance.md §8); a detail when the name is unknown.
   */
  private destination(tx: SignedTx): Hex | { unknown: string } | undefined {
    const cname = cnameOf(tx)
    if (cname === undefined) return tx.to?.toLowerCase()
    const address = new GovernanceView(this.s, this.governance).addressOfName(cname)
    return address ?? { unknown: `no contract is named ${JSON.stringify(cname)} (config_getAllCNS lists the names)` }
  }

  private async invoke(tx: SignedTx, from: Hex, context: BlockContext, t0: bigint): Promise<ExecutionOutcome> {
    const F = 'INVOKE_CONTRACT_FAILED'
    const destination = this.destination(tx)
    if (typeof destination === 'object') return failure(F, destination.unknown, 0n, t0)
    const to = destination
    if (to === undefined || !ADDRESS.test(to)) return failure(F, NOT_A_CONTRACT, 0n, t0)
    if (!ADDRESS.test(from)) return failure(F, 'invalid from address', 0n, t0)
    const s = this.s
    if (s.getCode(to) === '0x') return failure(F, NOT_A_CONTRACT, 0n, t0)
    const meta = s.getContractMeta(to)
    if (meta?.status === 'frozen') return failure(F, FROZEN_DETAIL, 0n, t0)
    const mismatch = vmMismatch(tx, meta)
    if (mismatch !== undefined) return failure(F, mismatch, 0n, t0)
    if (tx.vmType === 'JVM') return this.jvm(F, from, context, t0, (jvm, run) => jvm.invoke(tx, to, run))
    const data = payloadBytes(tx.payload)
    if (data === undefined) return failure(F, 'payload is not hex bytes', 0n, t0)
    const intrinsic = intrinsicGas(data, false)
    const gas = this.gasLimitFor(intrinsic)
    if (typeof gas === 'string') return failure(F, gas, 0n, t0)

    const caller = createAddressFromString(from)
    this.beginEvmTx(from, to, gas.limit)
    s.checkpoint()
    const result = await this.runCall(caller, createAddressFromString(to), data, gas.limit - intrinsic)
    const exec = result.execResult
    let used = intrinsic + exec.executionGasUsed
    if (exec.exceptionError !== undefined) {
      s.revert()
      this.charge(used)
      return failure(F, this.describe(exec, gas.blockBound), used, t0)
    }
    this.recordCreated(from, context)
    s.commit()
    used -= min(exec.gasRefund ?? 0n, used / MAX_REFUND_QUOTIENT)
    this.charge(used)
    return {
      ok: true,
      contractAddress: null,
      gasUsed: Number(used),
      ret: bytesToHex(exec.returnValue),
      logs: toLogs(exec),
      executeTimeNs: elapsed(t0),
    }
  }

  /** A message call that does not count as a deployment (Keel's nonce counts deployments only). */
  private runCall(caller: Address, to: Address, data: Uint8Array, gasLimit: bigint): Promise<EVMResult> {
    return this.evm.runCall({ caller, origin: caller, to, data, gasLimit, value: 0n, skipNonceIncrement: true, block: this.block })
  }

  /**
   * Maintenance (protocol.md §5). Failures other than permission are INVOKE_CONTRACT_FAILED:
   * Hyperchain reports any failed execution of a transaction addressed to a contract that way.
   */
  private async maintain(tx: SignedTx, from: Hex, context: BlockContext, t0: bigint): Promise<ExecutionOutcome> {
    const F = 'INVOKE_CONTRACT_FAILED'
    const destination = this.destination(tx)
    if (typeof destination === 'object') return failure(F, destination.unknown, 0n, t0)
    const to = destination
    if (to === undefined || !ADDRESS.test(to)) return failure(F, NOT_A_CONTRACT, 0n, t0)
    const s = this.s
    const meta = s.getContractMeta(to)
    if (meta === undefined) {
      return s.getCode(to) === '0x'
        ? failure(F, NOT_A_CONTRACT, 0n, t0)
        : failure('INVALID_PERMISSION', 'the contract has no recorded creator', 0n, t0)
    }
    if (meta.creator !== from) return failure('INVALID_PERMISSION', `only the creator ${meta.creator} may maintain this contract`, 0n, t0)
    const done = (): ExecutionOutcome => ({ ok: true, contractAddress: null, gasUsed: 0, ret: '0x', logs: [], executeTimeNs: elapsed(t0) })
    switch (tx.opcode) {
      case Opcode.freeze:
        if (meta.status === 'frozen') return failure(F, 'the contract is already frozen', 0n, t0)
        s.putContractMeta(to, { ...meta, status: 'frozen' })
        return done()
      case Opcode.unfreeze:
        if (meta.status !== 'frozen') return failure(F, 'the contract is not frozen', 0n, t0)
        s.putContractMeta(to, { ...meta, status: 'normal' })
        return done()
      case Opcode.upgrade: {
        const mismatch = vmMismatch(tx, meta)
        if (mismatch !== undefined) return failure(F, mismatch, 0n, t0)
        if (meta.vmType === 'JVM') return this.jvm(F, from, context, t0, (jvm, run) => jvm.upgrade(tx, to, run))
        return this.upgrade(tx, from, to, t0)
      }
      default:
        return failure(F, `unsupported maintain opcode ${tx.opcode}`, 0n, t0)
    }
  }

  /**
   * Upgrade: the payload is the compiled BIN (init code), as the SDK sends it. It runs in a
   * fresh frame AT the contract's address (so `address(this)` and immutables come out right),
   * can read the contract's storage, and its return value becomes the new runtime code. Every
   * write the init code makes (storage, logs, balances, created contracts) is discarded: the
   * contract keeps its storage exactly. Gas: creation intrinsic gas + init code + 200 per byte of
   * new code.
   */
  private async upgrade(tx: SignedTx, from: Hex, to: Hex, t0: bigint): Promise<ExecutionOutcome> {
    const F = 'INVOKE_CONTRACT_FAILED'
    const code = payloadBytes(tx.payload)
    if (code === undefined) return failure(F, 'payload is not hex bytes', 0n, t0)
    if (code.length === 0) return failure(F, 'contract code is empty', 0n, t0)
    const intrinsic = intrinsicGas(code, true)
    const gas = this.gasLimitFor(intrinsic)
    if (typeof gas === 'string') return failure(F, gas, 0n, t0)

    const s = this.s
    const caller = createAddressFromString(from)
    this.beginEvmTx(from, to, gas.limit)
    s.checkpoint()
    const exec = await this.evm.runCode({
      caller,
      origin: caller,
      to: createAddressFromString(to),
      code,
      data: new Uint8Array(0),
      gasLimit: gas.limit - intrinsic,
      value: 0n,
      block: this.block,
    })
    s.revert()
    let used = intrinsic + exec.executionGasUsed
    if (exec.exceptionError !== undefined) {
      this.charge(used)
      return failure(F, `upgrade failed: ${this.describe(exec, gas.blockBound)}`, used, t0)
    }
    const runtime = exec.returnValue
    let problem: string | undefined
    if (runtime.length === 0) problem = 'init code returned no runtime code'
    else if (runtime.length > MAX_CODE_SIZE) problem = `runtime code of ${runtime.length} bytes exceeds ${MAX_CODE_SIZE}`
    else if (runtime[0] === 0xef) problem = 'runtime code starts with 0xEF (EIP-3541)'
    else if (gas.limit - used < CODE_DEPOSIT_GAS * BigInt(runtime.length)) {
      used = gas.limit
      problem = gas.blockBound ? `${BUDGET_EXHAUSTED}: block gas limit ${this.blockGasLimit} reached` : BUDGET_EXHAUSTED
    }
    if (problem !== undefined) {
      this.charge(used)
      return failure(F, `upgrade failed: ${problem}`, used, t0)
    }
    used += CODE_DEPOSIT_GAS * BigInt(runtime.length)
    s.putCode(to, bytesToHex(runtime))
    this.charge(used)
    return { ok: true, contractAddress: null, gasUsed: Number(used), ret: '0x', logs: [], executeTimeNs: elapsed(t0) }
  }

  /** A BVM transaction (src/governance/): the built-in contracts, with this engine lent for CONTRACT proposals. */
  private bvm(tx: SignedTx, from: Hex, context: BlockContext, t0: bigint): Promise<ExecutionOutcome> {
    return executeBvm({
      txHash: tx.hash,
      from,
      to: tx.to?.toLowerCase() ?? '',
      payload: tx.payload,
      blockTime: context.timestamp,
      blockNumber: context.number,
      state: this.s,
      genesis: this.governance,
      hooks: this.bvmHooks(tx, context, t0),
    })
  }

  private bvmHooks(tx: SignedTx, context: BlockContext, t0: bigint): BvmHooks {
    const s = this.s
    const as = (payload: Hex, vmType: 'EVM' | 'JVM', to: Hex | null): SignedTx => ({
      ...tx,
      kind: to === null ? 'deploy' : 'maintain',
      to,
      payload,
      vmType,
      opcode: to === null ? Opcode.normal : Opcode.upgrade,
    })
    return {
      deploy: async (code, vmType, deployer) => {
        const outcome = await this.deploy(as(code, vmType, null), deployer, context, t0)
        return outcome.ok && outcome.contractAddress !== null
          ? { address: outcome.contractAddress }
          : { error: outcome.ok ? 'no contract was created' : outcome.detail }
      },
      upgrade: async (address, code, vmType) => {
        const meta = s.getContractMeta(address)
        if (meta === undefined) return `${address} is not a contract`
        if (meta.vmType !== vmType)
          return `${address} is a${meta.vmType === 'EVM' ? 'n' : ''} ${meta.vmType} contract, the option says ${vmType}`
        const tx = as(code, vmType, address)
        const outcome =
          vmType === 'JVM'
            ? await this.jvm('INVOKE_CONTRACT_FAILED', meta.creator, context, t0, (jvm, run) => jvm.upgrade(tx, address, run))
            : await this.upgrade(tx, meta.creator, address, t0)
        return outcome.ok ? undefined : outcome.detail
      },
      maintain: (address, opCode) => {
        const meta = s.getContractMeta(address)
        if (meta === undefined) return `${address} is not a contract`
        if (opCode === Opcode.freeze) {
          if (meta.status === 'frozen') return 'the contract is already frozen'
          s.putContractMeta(address, { ...meta, status: 'frozen' })
        } else {
          if (meta.status !== 'frozen') return 'the contract is not frozen'
          s.putContractMeta(address, { ...meta, status: 'normal' })
        }
        return undefined
      },
      isContract: (address) => s.getCode(address) !== '0x',
      node: this.network.node,
      versions: this.versions,
    }
  }

  /** A JVM transaction on this block's overlay, within the transaction's and the block's gas budget. */
  private async jvm(
    invalidMsg: InvalidMsg,
    from: Hex,
    context: BlockContext,
    t0: bigint,
    run: (jvm: JvmEngine, run: JvmRun) => Promise<ExecutionOutcome>,
  ): Promise<ExecutionOutcome> {
    if (this.jvmEngine === undefined) return failure(invalidMsg, JVM_UNAVAILABLE, 0n, t0)
    // at least one step: a block whose gas is spent does not start a JVM call, as for EVM
    const gas = this.gasLimitFor(1n)
    if (typeof gas === 'string') return failure(invalidMsg, gas, 0n, t0)
    const outcome = await run(this.jvmEngine, { state: this.s, from, context, stepLimit: gas.limit, t0 })
    this.charge(BigInt(outcome.gasUsed))
    return outcome
  }

  /** Read-only call on the attached (throw-away) overlay. */
  async call(request: CallRequest): Promise<CallResult> {
    const from = request.from.toLowerCase()
    const to = request.to.toLowerCase()
    if (!ADDRESS.test(from) || !ADDRESS.test(to)) return { ok: false, ret: '0x', detail: 'invalid address', gasUsed: 0 }
    const s = this.s
    if (s.getCode(to) === '0x') return { ok: false, ret: '0x', detail: NOT_A_CONTRACT, gasUsed: 0 }
    const meta = s.getContractMeta(to)
    if (meta?.status === 'frozen') return { ok: false, ret: '0x', detail: FROZEN_DETAIL, gasUsed: 0 }
    if (meta?.vmType === 'JVM')
      return { ok: false, ret: '0x', detail: 'read-only calls run EVM contracts only; simulate a JVM call (simulate: true)', gasUsed: 0 }
    const data = payloadBytes(request.data)
    if (data === undefined) return { ok: false, ret: '0x', detail: 'data is not hex bytes', gasUsed: 0 }
    const intrinsic = intrinsicGas(data, false)
    if (intrinsic > this.txGasLimit) return { ok: false, ret: '0x', detail: `intrinsic gas ${intrinsic} exceeds the limit`, gasUsed: 0 }
    const caller = createAddressFromString(from)
    this.beginEvmTx(from, to, this.txGasLimit)
    let result: EVMResult
    try {
      result = await this.runCall(caller, createAddressFromString(to), data, this.txGasLimit - intrinsic)
    } catch (e) {
      this.s.revertTo(0)
      if (e instanceof FrozenContractError) return { ok: false, ret: '0x', detail: e.message, gasUsed: Number(this.txGasLimit) }
      throw e
    }
    const exec = result.execResult
    const gasUsed = Number(intrinsic + exec.executionGasUsed)
    const ret = bytesToHex(exec.returnValue)
    if (exec.exceptionError !== undefined) return { ok: false, ret, detail: this.describe(exec, false), gasUsed }
    return { ok: true, ret, gasUsed }
  }

  // ---- issue 28: Ethereum-dialect transactions and calls (docs/ethereum.md) -------------------

  /**
   * An Ethereum transaction: it must carry the sender's next nonce (the account nonce, which Keel's
   * deployments also count), and then it uses that nonce whatever its outcome, as on Ethereum, so
   * the sender's next transaction is not stuck behind a failed one; everything else a failed run
   * did is rolled back. It moves `value` (to an account or into a call), a creation lands at
   * keccak(rlp([from, nonce]))[12:] as Ethereum clients compute it, and its gas limit is its own,
   * within the transaction and block budgets. No fee is charged (docs/ethereum.md §3).
   */
  private async ethereum(tx: SignedTx, from: Hex, context: BlockContext, t0: bigint): Promise<ExecutionOutcome> {
    const create = tx.to === null
    const F: InvalidMsg = create ? 'DEPLOY_CONTRACT_FAILED' : 'INVOKE_CONTRACT_FAILED'
    if (!ADDRESS.test(from)) return failure(F, 'invalid from address', 0n, t0)
    const s = this.s
    const nonce = s.getAccount(from)?.nonce ?? 0n
    if (tx.nonce !== nonce) return failure('REPEATED', `nonce ${tx.nonce} is not the sender's next nonce ${nonce}`, 0n, t0)
    const useNonce = (): void => {
      const account = s.getAccount(from)
      s.putAccount(from, { balance: account?.balance ?? 0n, nonce: nonce + 1n })
    }
    const fail = (invalidMsg: InvalidMsg, detail: string, used: bigint): ExecutionOutcome => {
      useNonce()
      return failure(invalidMsg, detail, used, t0)
    }
    const to = tx.to?.toLowerCase()
    if (to !== undefined && !ADDRESS.test(to)) return fail(F, 'invalid to address', 0n)
    const data = payloadBytes(tx.payload)
    if (data === undefined) return fail(F, 'payload is not hex bytes', 0n)
    const balance = s.getAccount(from)?.balance ?? 0n
    if (balance < tx.value) return fail('OUTOFBALANCE', `balance ${balance} is below the value ${tx.value}`, 0n)
    if (to !== undefined) {
      const meta = s.getContractMeta(to)
      if (meta?.status === 'frozen') return fail(F, FROZEN_DETAIL, 0n)
      if (meta?.vmType === 'JVM')
        return fail(F, 'the contract is a JVM contract: call it through contract_invokeContract with type JVM', 0n)
    }
    const intrinsic = intrinsicGas(data, create)
    const own = ethereumGasLimitOf(tx)
    if (own < intrinsic) return fail(F, `intrinsic gas too low: have ${own}, want ${intrinsic}`, 0n)
    const gas = this.gasLimitFor(intrinsic)
    if (typeof gas === 'string') return fail(F, gas, 0n)
    const limit = own < gas.limit ? own : gas.limit
    const blockBound = gas.blockBound && gas.limit <= own

    const caller = createAddressFromString(from)
    this.beginEvmTx(from, to, limit)
    if (!create) useNonce()
    s.checkpoint()
    // a creation: runCall uses the caller's nonce (the one checked above) for the address and
    // increments it itself; a call: the nonce was used above, outside the checkpoint
    const result = await this.evm.runCall({
      caller,
      origin: caller,
      to: to === undefined ? undefined : createAddressFromString(to),
      data,
      gasLimit: limit - intrinsic,
      value: tx.value,
      skipNonceIncrement: !create,
      block: this.block,
    })
    const exec = result.execResult
    let used = intrinsic + exec.executionGasUsed
    if (exec.exceptionError !== undefined) {
      s.revert()
      if (create) useNonce()
      this.charge(used)
      return failure(F, this.describe(exec, blockBound), used, t0)
    }
    this.recordCreated(from, context)
    s.commit()
    used -= min(exec.gasRefund ?? 0n, used / MAX_REFUND_QUOTIENT)
    this.charge(used)
    return {
      ok: true,
      contractAddress: result.createdAddress?.toString() ?? null,
      gasUsed: Number(used),
      ret: create
        ? result.createdAddress === undefined
          ? '0x'
          : s.getCode(result.createdAddress.toString())
        : bytesToHex(exec.returnValue),
      logs: toLogs(exec),
      executeTimeNs: elapsed(t0),
    }
  }

  /**
   * An Ethereum transaction a governance rule refuses at execution (the rule changed after it was
   * pooled): discarded as INVALID_PERMISSION like any other, but with the right nonce it uses that
   * nonce, as a reverted one does (docs/ethereum.md §2). The block holds it with a failed receipt,
   * and on Ethereum a transaction in a block has used its nonce; otherwise the nonce a receipt shows
   * as spent stays free and the sender's later transactions wait behind it in the gate for good.
   */
  private refuseEthereum(tx: SignedTx, from: Hex, refusal: string, t0: bigint): ExecutionOutcome {
    const account = ADDRESS.test(from) ? this.s.getAccount(from) : undefined
    const nonce = account?.nonce ?? 0n
    if (!ADDRESS.test(from) || tx.nonce !== nonce)
      return failure('REPEATED', `nonce ${tx.nonce} is not the sender's next nonce ${nonce}`, 0n, t0)
    this.s.putAccount(from, { balance: account?.balance ?? 0n, nonce: nonce + 1n })
    return failure('INVALID_PERMISSION', refusal, 0n, t0)
  }

  /** eth_call / eth_estimateGas on the attached (throw-away) overlay. */
  async ethereumCall(request: EthereumCallRequest): Promise<EthereumCallResult> {
    const from = request.from.toLowerCase()
    const to = request.to?.toLowerCase()
    const refused = (detail: string): EthereumCallResult => ({ ok: false, ret: '0x', reverted: false, detail, gasUsed: 0n })
    if (!ADDRESS.test(from) || (to !== undefined && !ADDRESS.test(to))) return refused('invalid address')
    const s = this.s
    if (to !== undefined) {
      const meta = s.getContractMeta(to)
      if (meta?.status === 'frozen') return refused(FROZEN_DETAIL)
      if (meta?.vmType === 'JVM') return refused('eth_call runs EVM contracts only')
    }
    const data = payloadBytes(request.data)
    if (data === undefined) return refused('data is not hex bytes')
    const balance = s.getAccount(from)?.balance ?? 0n
    if (balance < request.value) return refused(`insufficient funds for gas * price + value: balance ${balance}, value ${request.value}`)
    const intrinsic = intrinsicGas(data, to === undefined)
    const limit = request.gasLimit === undefined || request.gasLimit > this.txGasLimit ? this.txGasLimit : request.gasLimit
    if (intrinsic > limit) return refused(`intrinsic gas too low: have ${limit}, want ${intrinsic}`)
    const caller = createAddressFromString(from)
    this.beginEvmTx(from, to, limit)
    let result: EVMResult
    try {
      result = await this.evm.runCall({
        caller,
        origin: caller,
        to: to === undefined ? undefined : createAddressFromString(to),
        data,
        gasLimit: limit - intrinsic,
        value: request.value,
        skipNonceIncrement: to !== undefined,
        block: this.block,
      })
    } catch (e) {
      this.s.revertTo(0)
      if (e instanceof FrozenContractError) return { ...refused(e.message), gasUsed: limit }
      throw e
    }
    const exec = result.execResult
    const gasUsed = intrinsic + exec.executionGasUsed
    const ret = bytesToHex(exec.returnValue)
    const err = exec.exceptionError
    if (err !== undefined)
      return { ok: false, ret, reverted: err.error === EVMError.errorMessages.REVERT, detail: this.describe(exec, false), gasUsed }
    return { ok: true, ret, reverted: false, gasUsed }
  }
}

/** A transaction naming one engine for a contract of the other. */
function vmMismatch(tx: SignedTx, meta: ContractMeta | undefined): string | undefined {
  const contractVm = meta?.vmType ?? 'EVM'
  if (tx.vmType === contractVm) return undefined
  return `the contract is a${contractVm === 'EVM' ? 'n' : ''} ${contractVm} contract: send the transaction with type ${contractVm}`
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}

/**
 * JUMPDEST, which every loop of EVM code passes, is replaced by the same no-op that may also end
 * the turn: one contract call that loops to its gas limit (10 M gas, about a second here) would
 * otherwise hold the chain thread, and with it admissions, consensus messages and the replies it
 * serves, for the whole call. The clock is read every JUMPDEST_CHECK_EVERY passes only; the
 * outcome (gas, state, errors) is the EVM's own, so execution stays deterministic.
 */
const JUMPDEST_CHECK_EVERY = 64
function jumpdestWithTurns(turn: () => Promise<void> | undefined): NonNullable<EVMOpts['customOpcodes']>[number] {
  let passes = 0
  return {
    opcode: 0x5b,
    opcodeName: 'JUMPDEST',
    baseFee: 1, // JUMPDEST's gas in every hardfork
    logicFunction: () => (++passes % JUMPDEST_CHECK_EVERY === 0 ? turn() : undefined),
  }
}

/** Creates an executor; the EVM is built on first use and reused for every block. */
/**
 * The interpreter asks the Common whether an EIP is active several times per opcode; Common
 * answers with `Array.includes` over every EIP of the hardfork (~100 for Osaka). A table indexed by
 * EIP number gives the same answers; it is rebuilt whenever Common replaces its list (a hardfork or
 * EIP change).
 */
function fastEipLookup(common: ReturnType<typeof createCustomCommon>): void {
  const owner = common as unknown as { _activatedEIPsCache: number[] }
  let from: number[] | undefined
  let active = new Uint8Array(0)
  common.isActivatedEIP = (eip: number): boolean => {
    if (owner._activatedEIPsCache !== from) {
      from = owner._activatedEIPsCache
      active = new Uint8Array(Math.max(0, ...from) + 1)
      for (const n of from) active[n] = 1
    }
    return active[eip] === 1
  }
}

export function createExecutor(options: ExecutorOptions = {}): Executor {
  const txGasLimit = options.txGasLimit ?? DEFAULT_TX_GAS_LIMIT
  const blockGasLimit = options.blockGasLimit ?? DEFAULT_BLOCK_GAS_LIMIT
  const chainId = options.chainId ?? DEFAULT_CHAIN_ID
  if (txGasLimit <= 0n || blockGasLimit <= 0n) throw new RangeError('gas limits must be positive')

  const network: { node?: NodeHooks } = {}
  let engine: Promise<Engine> | undefined
  const getEngine = (): Promise<Engine> => {
    engine ??= (async () => {
      // the KECCAK256 opcode (every mapping slot) and CREATE's addresses hash with Keel's Keccak: the
      // native sponge when it loads (crypto/hash.ts), ~3x @noble/hashes' on a mapping key's 64 bytes
      const common = createCustomCommon({ chainId: Number(chainId) }, Mainnet, { hardfork: HARDFORK, customCrypto: { keccak256 } })
      fastEipLookup(common)
      await cacheJumpAnalysis()
      await stepPlainOpcodesSynchronously()
      const sm = new OverlayStateManager()
      let engineOfRun: Engine | undefined
      const evm = await createEVM({ common, stateManager: sm, customOpcodes: [jumpdestWithTurns(() => engineOfRun?.turn())] })
      installFastMstore(evm)
      engineOfRun = new Engine(
        evm,
        sm,
        txGasLimit,
        blockGasLimit,
        options.jvm,
        options.governance ?? NO_GOVERNANCE,
        network,
        options.versions ?? { hostname: '' },
      )
      return engineOfRun
    })()
    return engine
  }

  // one EVM, one run at a time: runs queue behind each other
  let queue: Promise<unknown> = Promise.resolve()
  const exclusive = <T>(run: (e: Engine) => Promise<T>): Promise<T> => {
    const next = queue.then(async () => run(await getEngine()))
    queue = next.catch(() => undefined)
    return next
  }

  return {
    txGasLimit,
    blockGasLimit,

    executeBlock(state, txs, context) {
      return exclusive(async (e) => {
        const overlay = new BlockState(state)
        e.attach(overlay, context)
        const outcomes: ExecutionOutcome[] = []
        let gasUsed = 0n
        try {
          for (const { tx, signatureValid } of txs) {
            const r = e.execute(tx, signatureValid, context)
            const outcome = r instanceof Promise ? await r : r
            outcomes.push(outcome)
            gasUsed += BigInt(outcome.gasUsed)
            const pause = e.turn()
            if (pause !== undefined) await pause
          }
        } finally {
          e.detach()
        }
        return { outcomes, changes: overlay.changes(), gasUsed }
      })
    },

    simulate(state, tx, context) {
      return exclusive(async (e) => {
        e.attach(new BlockState(state), context)
        try {
          return await e.execute(tx, true, context)
        } finally {
          e.detach()
        }
      })
    },

    call(state, request, context) {
      return exclusive(async (e) => {
        e.attach(new BlockState(state), context ?? { number: 0, timestamp: 0n })
        try {
          return await e.call(request)
        } finally {
          e.detach()
        }
      })
    },

    attachNetwork(node) {
      network.node = node
    },

    // issue 28
    ethereumCall(state, request, context, tracer) {
      return exclusive(async (e) => {
        e.attach(new BlockState(state), context ?? { number: 0, timestamp: 0n })
        tracer?.attach(e.evm)
        try {
          return await e.ethereumCall(request)
        } finally {
          tracer?.detach(e.evm)
          e.detach()
        }
      })
    },

    // issue 28
    traceInBlock(state, prior, target, context, tracer) {
      return exclusive(async (e) => {
        e.attach(new BlockState(state), context)
        try {
          const outcomes: ExecutionOutcome[] = []
          for (const { tx, signatureValid } of prior) {
            const r = e.execute(tx, signatureValid, context)
            outcomes.push(r instanceof Promise ? await r : r)
            const pause = e.turn()
            if (pause !== undefined) await pause
          }
          tracer.attach(e.evm)
          try {
            const r = e.execute(target.tx, target.signatureValid, context)
            return { prior: outcomes, outcome: r instanceof Promise ? await r : r }
          } finally {
            tracer.detach(e.evm)
          }
        } finally {
          e.detach()
        }
      })
    },
  }
}
