/**
 * Signed transactions as the official JS SDK (@hyperchain/jssdk 1.1.0) builds them
 * (docs/sdk-wire.md §3–§4): its key order, `type` / `opCode` / gas fields, `version` "4.1" and the
 * 4.1 sign string (format B with every section), signed by an Account (secp256k1 or SM2). Each
 * result is params[0] of the method that submits it:
 *
 * ```ts
 * const account = accountFromPrivateKey(privateKey)
 * const hash = await client.tx_sendTransaction(signTransfer(account, '0x3434…3434', 100))
 * const deployed = await client.contract_deployContract(signDeploy(account, bin))
 * const called = await client.contract_invokeContract(signInvoke(account, contractAddress, payload))
 * ```
 */
import { bytesToHex, randomBytes } from '@noble/hashes/utils.js'
import type { Account } from './account.ts'
import type { DeployTransaction, InvokeTransaction, MaintainTransaction, TransferTransaction, VmType } from './generated/types.ts'
import { signStringFormatB } from './sign-string.ts'

/** The transaction format version Keel reports (tx_getTransactionsVersion) and the SDK signs with. */
export const TRANSACTION_VERSION = '4.1'
/** The SDK's defaults: gas limit, and expiry 5 minutes after the timestamp. */
export const DEFAULT_GAS_LIMIT = 1_000_000_000n
const EXPIRATION_NS = 300_000_000_000n

/** What every kind of transaction may set; each has the SDK's default. */
export interface TransactionOptions {
  /** nanoseconds since the Unix epoch; default now */
  timestamp?: bigint
  /** replay protection, not a sequence: default random in [10^15, 10^16) as the SDK draws it */
  nonce?: bigint
  /** the engine: `EVM` for contracts and `TRANSFER` for transfers by default; `JVM` for Java contracts */
  type?: VmType
  extra?: string
  extraIdInt64?: readonly (number | bigint)[]
  extraIdString?: readonly string[]
  cname?: string
  /** what tx_getGasPrice answers; default 0 */
  gasPrice?: number | bigint
  gasLimit?: number | bigint
  /** nanoseconds; default timestamp + 5 minutes */
  expirationTimestamp?: bigint
  /** default TRANSACTION_VERSION; the node's tx_getTransactionsVersion */
  version?: string
  /** executed without being committed (the simulate_ methods) */
  simulate?: boolean
}

/** The fields of any transaction. A missing `to` is a deployment. */
export interface TransactionFields extends TransactionOptions {
  to?: string
  /** the amount of a transfer (a JSON integer on the wire) */
  value?: number | bigint
  /** `0x` hex: EVM code and constructor arguments, an ABI call, a JVM payload */
  payload?: string
  /** 0 normal, 1 upgrade, 2 freeze, 3 unfreeze, 5 destroy */
  opcode?: 0 | 1 | 2 | 3 | 5
}

/** A signed transaction in the SDK's wire shape. */
export interface SignedTransaction {
  from: string
  to?: string
  timestamp: bigint
  nonce: bigint
  type: VmType
  opCode: number
  payload?: string
  value?: number | bigint
  extra?: string
  extraIdInt64?: (number | bigint)[]
  extraIdString?: string[]
  cname?: string
  simulate?: boolean
  /** hex, no `0x`, as the SDK sends it */
  signature: string
  gasPrice: number | bigint
  gasLimit: number | bigint
  expirationTimestamp: bigint
  version: string
}

/** The SDK's nonce: random in [10^15, 10^16). */
function randomNonce(): bigint {
  return 1_000_000_000_000_000n + (BigInt(`0x${bytesToHex(randomBytes(7))}`) % 9_000_000_000_000_000n)
}

/** Now in nanoseconds; the sub-millisecond part is random, so that two transactions of one millisecond differ. */
function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n + (BigInt(`0x${bytesToHex(randomBytes(3))}`) % 1_000_000n)
}

/** Builds and signs any transaction; the kind-specific builders below are typed for their methods. */
export function signTransaction(account: Account, fields: TransactionFields): SignedTransaction {
  const timestamp = fields.timestamp ?? nowNs()
  const version = fields.version ?? TRANSACTION_VERSION
  const opcode = fields.opcode ?? 0
  const hasPayload = fields.payload !== undefined && fields.payload !== '' && fields.payload !== '0x'
  const contract = hasPayload || fields.to === undefined || opcode !== 0
  // keys in the order the SDK writes them
  const head: Omit<SignedTransaction, 'signature' | 'gasPrice' | 'gasLimit' | 'expirationTimestamp' | 'version'> = {
    from: account.address,
    ...(fields.to === undefined ? {} : { to: fields.to }),
    timestamp,
    nonce: fields.nonce ?? randomNonce(),
    type: fields.type ?? (contract ? 'EVM' : 'TRANSFER'),
    opCode: opcode,
    ...(hasPayload ? { payload: fields.payload } : {}),
    ...(fields.value !== undefined || !hasPayload ? { value: fields.value ?? 0 } : {}),
    ...(fields.extra === undefined ? {} : { extra: fields.extra }),
    ...(fields.extraIdInt64 === undefined || fields.extraIdInt64.length === 0 ? {} : { extraIdInt64: [...fields.extraIdInt64] }),
    ...(fields.extraIdString === undefined || fields.extraIdString.length === 0 ? {} : { extraIdString: [...fields.extraIdString] }),
    ...(fields.cname === undefined ? {} : { cname: fields.cname }),
    ...(fields.simulate === undefined ? {} : { simulate: fields.simulate }),
  }
  const gasPrice = fields.gasPrice ?? 0
  const gasLimit = fields.gasLimit ?? DEFAULT_GAS_LIMIT
  const expirationTimestamp = fields.expirationTimestamp ?? timestamp + EXPIRATION_NS
  const signString = signStringFormatB(
    { ...head, opcode, version, gasPrice, gasLimit, expirationTimestamp },
    { version, sections: 'all', extraIdBug: false },
  )
  return { ...head, signature: account.sign(signString), gasPrice, gasLimit, expirationTimestamp, version }
}

/** A transfer of `value` to `to`: params[0] of tx_sendTransaction. */
export function signTransfer(account: Account, to: string, value: number | bigint, options: TransactionOptions = {}): TransferTransaction {
  return signTransaction(account, { ...options, to, value }) as TransferTransaction
}

/** A deployment of `payload` (code and constructor arguments, see encodeDeploy): params[0] of contract_deployContract. */
export function signDeploy(account: Account, payload: string, options: TransactionOptions = {}): DeployTransaction {
  return signTransaction(account, { ...options, payload }) as DeployTransaction
}

/** A call of the contract at `to` (payload: see encodeFunctionCall): params[0] of contract_invokeContract. */
export function signInvoke(account: Account, to: string, payload: string, options: TransactionOptions = {}): InvokeTransaction {
  return signTransaction(account, { ...options, to, payload }) as InvokeTransaction
}

/**
 * Upgrade (1, with the new code as `payload`), freeze (2) or unfreeze (3) of the contract at `to`:
 * params[0] of contract_maintainContract.
 */
export function signMaintain(
  account: Account,
  to: string,
  opcode: 1 | 2 | 3,
  payload?: string,
  options: TransactionOptions = {},
): MaintainTransaction {
  return signTransaction(account, { ...options, to, opcode, payload }) as unknown as MaintainTransaction
}
