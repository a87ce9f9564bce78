/**
 * Handlers of the Ethereum dialect (issue 28, docs/ethereum.md): eth_, net_ and web3_ methods
 * over the same ledger as the Hyperchain dialect. They answer where the request arrived (a request
 * thread, or the chain thread when it serves requests itself), from the store's readers; eth_call
 * and eth_estimateGas run on an EVM of their own, on a throw-away overlay of the latest state.
 */

import type { DebugHandlers, EthHandlers, NetHandlers, Web3Handlers } from '../../../generated/handlers.ts'
import { decodeRevertReason } from '../../../sdk/src/abi.ts'
import { keccak256 } from '../../crypto/hash.ts'
import { type BlockHeader, type Hex, type SignedTx, type TxSubmitter, ZERO_ADDRESS } from '../../domain.ts'
import { DuplicateTransaction, InvalidParams, type RpcError } from '../../errors.ts'
import { ExecutionFailed, ExecutionReverted, TransactionRejected } from '../../eth/errors.ts'
import { decodeEthereumTx, ethereumSignedTx } from '../../eth/transaction.ts'
import { createExecutor, type EthereumCallRequest, type Executor } from '../../exec/executor.ts'
import type { GenesisGovernance } from '../../governance/state.ts'
import { encodeAdmitted } from '../../wire/tx-codec.ts'
import type { ChainReader } from '../chain-reader.ts'
import { createDebugHandlers } from './debug.ts'
import { createEthFilters } from './filters.ts'
import { type BlockSelector, blockOfTag, ethLogs, type LogFilter, stateBlock } from './query.ts'
import { ethBlock, ethReceipt, ethTransaction, genesisHeader, type Placed, placedTxs, placeOf, quantity } from './shapes.ts'

export interface EthereumSettings {
  /** chain.chainId */
  chainId: number
  txGasLimit: number
  blockGasLimit: number
  /** web3_clientVersion */
  clientVersion: string
  /** the genesis governance, so debug_traceTransaction re-executes a block under the rules it ran with */
  governance?: GenesisGovernance
}

export interface EthModules {
  chain: ChainReader
  submitter: TxSubmitter
  settings: EthereumSettings
  /** ns clock for admission times */
  nowNs?: () => bigint
  /** calls `listener` after each block; returns the unsubscribe function */
  onBlock(listener: () => void): () => void
}

/** a nonce this far past the sender's next one is refused ("nonce too high"), as geth bounds its queue per account */
export const MAX_NONCE_GAP = 64n
/** pending transactions this thread admitted and remembers for eth_getTransactionByHash and the pending nonce */
const MAX_PENDING = 10_000
/**
 * eth_getTransactionReceipt of a transaction this thread admitted and no block holds yet waits this
 * long for its block. Keel writes no empty blocks, and ethers' wait() looks for the receipt once,
 * then only at a new block after its first poll: a block written in between would never be
 * followed by another one, and wait() would hang. Waiting here closes that gap.
 */
const RECEIPT_WAIT_MS = 1000
/** 21,000 for a plain transfer: Ethereum's intrinsic gas */
const TRANSFER_GAS = 21_000n

const systemNowNs = (): bigint => BigInt(Date.now()) * 1_000_000n + BigInt(process.hrtime.bigint() % 1_000_000n)

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/
const DATA = /^0x(?:[0-9a-fA-F]{2})*$/

function address(raw: unknown, what: string): Hex {
  if (typeof raw !== 'string' || !ADDRESS.test(raw))
    throw new InvalidParams(`invalid argument: ${what} must be a 20-byte 0x address; got ${short(raw)}`)
  return raw.toLowerCase()
}

function quantityOf(raw: unknown, what: string): bigint {
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) return BigInt(raw)
  if (typeof raw !== 'string' || !QUANTITY.test(raw))
    throw new InvalidParams(`invalid argument: ${what} must be a 0x hex quantity; got ${short(raw)}`)
  return BigInt(raw)
}

function short(raw: unknown): string {
  const text = typeof raw === 'string' ? JSON.stringify(raw) : String(raw)
  return text.length > 80 ? `${text.slice(0, 80)}…` : text
}

/** An eth_call / eth_estimateGas call object, read as geth reads it (`input` wins over `data`). */
function callRequest(raw: unknown): EthereumCallRequest {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new InvalidParams('invalid argument 0: the call must be an object')
  const call = raw as Record<string, unknown>
  const data = call.input ?? call.data ?? '0x'
  if (typeof data !== 'string' || !DATA.test(data))
    throw new InvalidParams(`invalid argument 0: input/data must be 0x hex bytes; got ${short(data)}`)
  return {
    from: call.from === undefined || call.from === null ? ZERO_ADDRESS : address(call.from, 'from'),
    to: call.to === undefined || call.to === null ? null : address(call.to, 'to'),
    data: data.toLowerCase(),
    value: call.value === undefined || call.value === null ? 0n : quantityOf(call.value, 'value'),
    gasLimit: call.gas === undefined || call.gas === null ? undefined : quantityOf(call.gas, 'gas'),
  }
}

/** The Ethereum dialect's methods: one factory per group below, each taking only what it uses. */
export function createEthHandlers(modules: EthModules): EthHandlers & NetHandlers & Web3Handlers & DebugHandlers {
  const { chain, settings } = modules
  const chainId = BigInt(settings.chainId)
  const txGasLimit = BigInt(settings.txGasLimit)
  const blockGasLimit = BigInt(settings.blockGasLimit)
  let executor: Executor | undefined
  const evm = (): Executor => {
    executor ??= createExecutor({ txGasLimit, blockGasLimit, chainId, governance: settings.governance })
    return executor
  }
  const nowNs = modules.nowNs ?? systemNowNs
  const context = () => ({ number: chain.height() + 1, timestamp: nowNs() })
  const pending = createPendingEthTxs(chain)
  const filters = createEthFilters(chain, (filter) => ethLogs(chain, filter, chainId, txGasLimit))
  return {
    eth_chainId: () => quantity(chainId),
    net_version: () => chainId.toString(),
    net_listening: () => true,
    net_peerCount: () => '0x0',
    web3_clientVersion: () => settings.clientVersion,
    web3_sha3: async ([data]: [string]) => {
      if (typeof data !== 'string' || !DATA.test(data)) throw new InvalidParams('invalid argument 0: must be 0x hex bytes')
      return `0x${Buffer.from(keccak256(Buffer.from(data.slice(2), 'hex'))).toString('hex')}`
    },
    eth_blockNumber: () => quantity(chain.height()),
    eth_syncing: () => false,
    eth_accounts: () => [],
    eth_gasPrice: () => '0x0',
    eth_maxPriorityFeePerGas: () => '0x0',
    ...ethStateHandlers({ chain, evm, context, txGasLimit, pending }),
    ...ethSubmissionHandlers({ chain, submitter: modules.submitter, pending, chainId, txGasLimit, nowNs, onBlock: modules.onBlock }),
    ...ethBlockHandlers({ chain, chainId, txGasLimit, blockGasLimit }),
    eth_getLogs: ([filter]) => ethLogs(chain, filter as LogFilter, chainId, txGasLimit),
    eth_newFilter: ([filter]) => filters.newLogFilter(filter as LogFilter),
    eth_newBlockFilter: () => filters.newBlockFilter(),
    eth_newPendingTransactionFilter: () => filters.newPendingFilter(),
    eth_getFilterChanges: ([id]) => filters.changes(id),
    eth_getFilterLogs: ([id]) => filters.logs(id),
    eth_uninstallFilter: ([id]) => filters.uninstall(id),
    ...createDebugHandlers({ chain, evm, txGasLimit, callRequest, latestContext: context }),
  }
}

/** transactions this thread admitted that no block holds yet, by hash, and by sender and nonce */
interface PendingEthTxs {
  add(tx: SignedTx): void
  get(hash: Hex): SignedTx | undefined
  /** the one of `from` with this nonce, after forgetting what blocks took */
  waitingAt(from: Hex, nonce: bigint): SignedTx | undefined
  /** the sender's next nonce in the committed state */
  committedNonce(from: Hex): bigint
  /** the next nonce counting this thread's pending transactions of `from` */
  pendingNonce(from: Hex): bigint
}

function createPendingEthTxs(chain: ChainReader): PendingEthTxs {
  const pending = new Map<Hex, SignedTx>()
  const bySender = new Map<Hex, Map<bigint, SignedTx>>()
  const dropPending = (tx: SignedTx): void => {
    pending.delete(tx.hash)
    const mine = bySender.get(tx.from)
    if (mine?.get(tx.nonce) !== tx) return
    mine.delete(tx.nonce)
    if (mine.size === 0) bySender.delete(tx.from)
  }
  // each pending entry costs two store reads to check: swept once per block, not per submission
  // (per submission, thousands in flight made a raw transaction cost milliseconds)
  let sweptAt = -1
  const forgetCommitted = (): void => {
    const height = chain.height()
    if (height === sweptAt) return
    sweptAt = height
    for (const tx of [...pending.values()])
      if (chain.getTx(tx.hash) !== undefined || chain.getInvalidTx(tx.hash) !== undefined) dropPending(tx)
  }
  const committedNonce = (from: Hex): bigint => chain.state.getAccount(from)?.nonce ?? 0n
  return {
    add(tx) {
      if (pending.size >= MAX_PENDING) dropPending(pending.values().next().value as SignedTx)
      pending.set(tx.hash, tx)
      const mine = bySender.get(tx.from) ?? new Map<bigint, SignedTx>()
      bySender.set(tx.from, mine)
      mine.set(tx.nonce, tx)
    },
    get: (hash) => pending.get(hash),
    waitingAt(from, nonce) {
      forgetCommitted()
      return bySender.get(from)?.get(nonce)
    },
    committedNonce,
    pendingNonce(from) {
      forgetCommitted()
      let next = committedNonce(from)
      const mine = bySender.get(from)
      while (mine?.has(next) === true) next++
      return next
    },
  }
}

/** the account state at a block, and calls run on it (eth_call, eth_estimateGas) */
function ethStateHandlers(modules: {
  chain: ChainReader
  evm(): Executor
  context(): { number: number; timestamp: bigint }
  txGasLimit: bigint
  pending: Pick<PendingEthTxs, 'committedNonce' | 'pendingNonce'>
}): Pick<EthHandlers, 'eth_getBalance' | 'eth_getTransactionCount' | 'eth_getCode' | 'eth_getStorageAt' | 'eth_call' | 'eth_estimateGas'> {
  const { chain, evm, context, txGasLimit, pending } = modules
  const run = async (raw: unknown, tag: unknown) => {
    stateBlock(chain, tag as BlockSelector)
    const request = callRequest(raw)
    return { request, result: await evm().ethereumCall(chain.state, request, context()) }
  }
  return {
    eth_getBalance: ([who, tag]) => {
      stateBlock(chain, tag as BlockSelector)
      return quantity(chain.state.getAccount(address(who, 'address'))?.balance ?? 0n)
    },
    eth_getTransactionCount: ([who, tag]) => {
      const from = address(who, 'address')
      if (tag === 'pending') return quantity(pending.pendingNonce(from))
      stateBlock(chain, tag as BlockSelector)
      return quantity(pending.committedNonce(from))
    },
    eth_getCode: ([who, tag]) => {
      stateBlock(chain, tag as BlockSelector)
      return chain.state.getCode(address(who, 'address'))
    },
    eth_getStorageAt: ([who, slot, tag]) => {
      stateBlock(chain, tag as BlockSelector)
      const key = quantityOf(slot, 'slot')
      if (key >= 2n ** 256n) throw new InvalidParams('invalid argument 1: a storage slot has 32 bytes')
      return chain.state.getStorage(address(who, 'address'), `0x${key.toString(16).padStart(64, '0')}`)
    },
    eth_call: async ([raw, tag]) => {
      const { result } = await run(raw, tag)
      if (!result.ok) throw failed(result)
      return result.ret
    },
    eth_estimateGas: async ([raw, tag]) => {
      const { request, result } = await run(raw, tag)
      if (!result.ok) throw failed(result)
      if (request.to !== null && request.data === '0x' && chain.state.getCode(request.to) === '0x') return quantity(TRANSFER_GAS)
      // the gas a run used is not always a limit it can run within (EIP-150 keeps 1/64 of the gas
      // back at each call, refunds come only at the end): search the least limit that succeeds
      let low = result.gasUsed - 1n
      let high = request.gasLimit !== undefined && request.gasLimit < txGasLimit ? request.gasLimit : txGasLimit
      const works = async (limit: bigint): Promise<boolean> =>
        (await evm().ethereumCall(chain.state, { ...request, gasLimit: limit }, context())).ok
      if (await works(result.gasUsed)) return quantity(result.gasUsed)
      low = result.gasUsed
      while (high - low > 1n) {
        const middle = (low + high) / 2n
        if (await works(middle)) high = middle
        else low = middle
      }
      return quantity(high)
    },
  }
}

function failed(result: { reverted: boolean; ret: Hex; detail?: string }): RpcError {
  if (result.reverted) {
    const reason = decodeRevertReason(result.ret)
    return new ExecutionReverted(reason === undefined ? 'execution reverted' : `execution reverted: ${reason}`, result.ret)
  }
  return new ExecutionFailed(result.detail ?? 'execution failed')
}

/** a raw transaction's admission (checked as geth checks it), and its way to a receipt */
function ethSubmissionHandlers(modules: {
  chain: ChainReader
  submitter: TxSubmitter
  pending: PendingEthTxs
  chainId: bigint
  txGasLimit: bigint
  nowNs(): bigint
  onBlock(listener: () => void): () => void
}): Pick<EthHandlers, 'eth_sendRawTransaction' | 'eth_getTransactionByHash' | 'eth_getTransactionReceipt'> {
  const { chain, submitter, pending, chainId, txGasLimit, nowNs } = modules
  return {
    eth_sendRawTransaction: async ([raw]) => {
      if (typeof raw !== 'string') throw new InvalidParams('invalid argument 0: the signed transaction as 0x hex bytes')
      const decoded = decodeEthereumTx(raw, chainId)
      const { fields, from } = decoded
      if (fields.gasLimit > txGasLimit)
        throw new TransactionRejected(`exceeds block gas limit: gas ${fields.gasLimit}, Keel's transaction gas limit is ${txGasLimit}`)
      const intrinsic = intrinsicGasOf(fields.data, fields.to === null)
      if (fields.gasLimit < intrinsic)
        throw new TransactionRejected(`intrinsic gas too low: gas ${fields.gasLimit}, minimum needed ${intrinsic}`)
      if (fields.maxFeePerGas !== undefined && (fields.maxPriorityFeePerGas ?? 0n) > fields.maxFeePerGas)
        throw new TransactionRejected(
          `max priority fee per gas higher than max fee per gas: address ${from}, maxPriorityFeePerGas: ${fields.maxPriorityFeePerGas}, maxFeePerGas: ${fields.maxFeePerGas}`,
        )
      const state = pending.committedNonce(from)
      if (fields.nonce < state) throw new TransactionRejected(`nonce too low: address ${from}, tx: ${fields.nonce} state: ${state}`)
      if (fields.nonce > state + MAX_NONCE_GAP)
        throw new TransactionRejected(
          `nonce too high: address ${from}, tx: ${fields.nonce} state: ${state} (at most ${MAX_NONCE_GAP} ahead)`,
        )
      const waiting = pending.waitingAt(from, fields.nonce)
      if (waiting !== undefined && waiting.hash !== decoded.hash)
        throw new TransactionRejected(
          `replacement transaction underpriced: nonce ${fields.nonce} of ${from} is pending (${waiting.hash}); Keel does not replace pending transactions`,
        )
      const balance = chain.state.getAccount(from)?.balance ?? 0n
      if (balance < fields.value)
        throw new TransactionRejected(`insufficient funds for gas * price + value: address ${from} have ${balance} want ${fields.value}`)
      const tx = ethereumSignedTx(raw, decoded, nowNs())
      try {
        await submitter.admit({ tx, signatureValid: true, record: encodeAdmitted(tx, true) })
      } catch (error) {
        if (error instanceof DuplicateTransaction) throw new TransactionRejected(`already known: ${tx.hash}`)
        throw error
      }
      pending.add(tx)
      return tx.hash
    },
    eth_getTransactionByHash: ([hash]) => {
      const wanted = hashOf(hash)
      const placed = placeOf(chain, wanted)
      if (placed !== undefined) return ethTransaction(placed.tx, chainId, placed)
      const waiting = pending.get(wanted)
      return waiting === undefined ? null : ethTransaction(waiting, chainId)
    },
    eth_getTransactionReceipt: async ([hash]) => {
      const wanted = hashOf(hash)
      let placed = placeOf(chain, wanted)
      if (placed === undefined && pending.get(wanted) !== undefined) placed = await placedSoon(wanted)
      if (placed === undefined) return null
      const header = chain.getBlock(placed.blockNumber) as BlockHeader
      return ethReceipt(placed, placedTxs(chain, header), chainId, txGasLimit)
    },
  }

  /** where a pending transaction lands within RECEIPT_WAIT_MS, or undefined */
  function placedSoon(hash: Hex): Promise<Placed | undefined> {
    return new Promise((resolve) => {
      const done = (placed: Placed | undefined): void => {
        clearTimeout(timer)
        unsubscribe()
        resolve(placed)
      }
      const timer = setTimeout(() => done(undefined), RECEIPT_WAIT_MS)
      const unsubscribe = modules.onBlock(() => {
        const placed = placeOf(chain, hash)
        if (placed !== undefined) done(placed)
      })
      // it may have landed between the first look and the subscription
      const placed = placeOf(chain, hash)
      if (placed !== undefined) done(placed)
    })
  }
}

/** blocks and their transactions by number, tag or hash (block 0 is the genesis header), and the fee history of a chain without fees */
function ethBlockHandlers(modules: {
  chain: ChainReader
  chainId: bigint
  txGasLimit: bigint
  blockGasLimit: bigint
}): Pick<
  EthHandlers,
  | 'eth_feeHistory'
  | 'eth_getBlockByNumber'
  | 'eth_getBlockByHash'
  | 'eth_getBlockTransactionCountByNumber'
  | 'eth_getBlockTransactionCountByHash'
  | 'eth_getTransactionByBlockNumberAndIndex'
  | 'eth_getTransactionByBlockHashAndIndex'
> {
  const { chain, chainId, txGasLimit, blockGasLimit } = modules
  const headerOf = (number: number): BlockHeader | undefined => (number === 0 ? genesisHeader(chain) : chain.getBlock(number))
  const blockJson = (header: BlockHeader | undefined, full: unknown) =>
    header === undefined ? null : ethBlock(chain, header, full === true, chainId, blockGasLimit, txGasLimit)
  return {
    eth_feeHistory: ([count, newest, percentiles]) => {
      const blocks = Number(quantityOf(count, 'blockCount'))
      const last = blockOfTag(chain, newest as BlockSelector)
      if (last === undefined) throw new TransactionRejected('header not found')
      const n = Math.max(0, Math.min(blocks, 1024, last + 1))
      const rewards = Array.isArray(percentiles) ? percentiles : undefined
      return {
        oldestBlock: quantity(last - n + 1),
        baseFeePerGas: Array.from({ length: n + 1 }, () => '0x0'),
        gasUsedRatio: Array.from({ length: n }, () => 0),
        ...(rewards === undefined ? {} : { reward: Array.from({ length: n }, () => rewards.map(() => '0x0')) }),
      }
    },
    eth_getBlockByNumber: ([tag, full]) => {
      const number = blockOfTag(chain, tag as BlockSelector)
      return number === undefined ? null : blockJson(headerOf(number), full)
    },
    eth_getBlockByHash: ([hash, full]) => blockJson(headerByHash(hashOf(hash)), full),
    eth_getBlockTransactionCountByNumber: ([tag]) => {
      const number = blockOfTag(chain, tag as BlockSelector)
      const header = number === undefined ? undefined : headerOf(number)
      return header === undefined ? null : quantity(header.number === 0 ? 0 : placedTxs(chain, header).length)
    },
    eth_getBlockTransactionCountByHash: ([hash]) => {
      const header = headerByHash(hashOf(hash))
      return header === undefined ? null : quantity(header.number === 0 ? 0 : placedTxs(chain, header).length)
    },
    eth_getTransactionByBlockNumberAndIndex: ([tag, index]) => {
      const number = blockOfTag(chain, tag as BlockSelector)
      const header = number === undefined ? undefined : headerOf(number)
      return txAt(header, index)
    },
    eth_getTransactionByBlockHashAndIndex: ([hash, index]) => txAt(headerByHash(hashOf(hash)), index),
  }

  function headerByHash(hash: Hex): BlockHeader | undefined {
    const header = chain.getBlockByHash(hash)
    if (header !== undefined) return header
    const genesis = genesisHeader(chain)
    return genesis.hash === hash && chain.height() > 0 ? genesis : undefined
  }

  function txAt(header: BlockHeader | undefined, rawIndex: unknown) {
    if (header === undefined || header.number === 0) return null
    const index = Number(quantityOf(rawIndex, 'index'))
    const placed = placedTxs(chain, header)[index]
    return placed === undefined ? null : ethTransaction(placed.tx, chainId, placed)
  }
}

const HASH = /^0x[0-9a-fA-F]{64}$/
function hashOf(raw: unknown): Hex {
  if (typeof raw !== 'string' || !HASH.test(raw)) throw new InvalidParams(`invalid argument 0: a 32-byte 0x hash; got ${short(raw)}`)
  return raw.toLowerCase()
}

/** Ethereum's intrinsic gas of a transaction (the executor charges the same). */
function intrinsicGasOf(data: Hex, create: boolean): bigint {
  let gas = 21_000n
  for (let i = 2; i < data.length; i += 2) gas += data.slice(i, i + 2) === '00' ? 4n : 16n
  if (create) gas += 32_000n + 2n * BigInt(Math.ceil((data.length - 2) / 64))
  return gas
}

/** The Ethereum dialect's settings from the node's configuration. */
export function ethereumSettingsOf(
  config: { chain: { chainId: number; txGasLimit: number; blockGasLimit: number } },
  governance?: GenesisGovernance,
): EthereumSettings {
  const { chainId, txGasLimit, blockGasLimit } = config.chain
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new Error(`config: chain.chainId must be a positive integer, got ${chainId}`)
  return {
    chainId,
    txGasLimit,
    blockGasLimit,
    clientVersion: `Keel/${process.platform}-${process.arch}/node${process.versions.node}`,
    governance,
  }
}
