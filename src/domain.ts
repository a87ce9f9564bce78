/**
 * The domain types at the bottom of the layering: the chain's records and the interfaces between
 * layers (the submission door, a committed block), shared by the store, the executor, the chain,
 * the events, the network and the API handlers. It imports nothing.
 *
 * Conventions: addresses and hashes are lower-case `0x` hex strings; byte strings (payload, code,
 * return data) are lower-case `0x` hex strings (`0x` when empty); int64 quantities that may pass
 * 2^53 (amounts, timestamps, nonces) are bigint; block numbers and indexes are numbers.
 */

export type Hex = string

export const ZERO_HASH: Hex = `0x${'00'.repeat(32)}`
/**
 * The 32-byte zero word: what every unset storage slot reads as, and the one way a WorldChanges
 * deletes a slot (in the EVM a slot set to zero and a slot never set are the same thing).
 */
export const ZERO_WORD: Hex = `0x${'00'.repeat(32)}`
/** the `to` of a deployment on the wire, and the contractAddress of a receipt that created none */
export const ZERO_ADDRESS: Hex = `0x${'00'.repeat(20)}`
/** Platform version written into blocks, transactions and receipts (Hyperchain 1.4 writes "1.3"). */
export const RECORD_VERSION = '1.3'

export type TxKind = 'transfer' | 'deploy' | 'invoke' | 'maintain'

/** opcode of a transaction (protocol.md §2 TransactionValue.op) */
export const Opcode = { normal: 0, upgrade: 1, freeze: 2, unfreeze: 3 } as const
export type OpcodeValue = (typeof Opcode)[keyof typeof Opcode]

/** BVM: Hyperchain's built-in contracts (src/governance/); never a deployed contract's engine */
export type VmType = 'EVM' | 'JVM' | 'BVM'

/** A signed transaction as accepted by the API, before any outcome. */
export interface SignedTx {
  /** tx hash, protocol.md §2 */
  hash: Hex
  kind: TxKind
  from: Hex
  /** null for a deployment (the wire and the records show the zero address) */
  to: Hex | null
  /** transfer amount; 0 for contract transactions */
  value: bigint
  payload: Hex
  /** ns */
  timestamp: bigint
  nonce: bigint
  extra: string
  opcode: OpcodeValue
  vmType: VmType
  /** signature hex as received, lower-case, 0x-prefixed */
  signature: Hex
  /** Keccak of the 2017 sign string; with `from` it keys duplicate detection (ARCHITECTURE.md decision 4) */
  signHash: Hex
  /** true: executed locally against the latest state, never ordered */
  simulate: boolean
  /**
   * The params object exactly as received (keys normalised), kept because the SDK sign strings
   * cover fields (version, gasPrice, gasLimit, expirationTimestamp, extra ids, …) that the record
   * does not otherwise hold. Bigint-safe.
   */
  signed: Record<string, unknown>
}

/** One element of a transaction's extra id list: an int64 or a string. */
export type ExtraId = bigint | string

/**
 * A transaction's extra ids as Hyperchain forms them: the int64 ids, then the string ids, in the
 * order signed (protocol.md §1: `extraIdInt64`, `extraIdString`). Malformed items are left out.
 */
export function extraIdsOf(tx: Pick<SignedTx, 'signed'>): ExtraId[] {
  const ints = tx.signed.extraIdInt64
  const strings = tx.signed.extraIdString
  const ids: ExtraId[] = []
  if (Array.isArray(ints))
    for (const id of ints) if ((typeof id === 'number' && Number.isSafeInteger(id)) || typeof id === 'bigint') ids.push(BigInt(id))
  if (Array.isArray(strings)) for (const id of strings) if (typeof id === 'string') ids.push(id)
  return ids
}

/** Why a transaction was discarded, with its receipt code (spec "Invalid transaction"). */
export const InvalidReason = {
  OUTOFBALANCE: -32002,
  SIGFAILED: -32003,
  DEPLOY_CONTRACT_FAILED: -32004,
  INVOKE_CONTRACT_FAILED: -32005,
  INVALID_PERMISSION: -32008,
  /** a second valid copy of a transaction (same from and sign hash) that another VP admitted first; Keel's own */
  REPEATED: -32007,
} as const
export type InvalidMsg = keyof typeof InvalidReason

export interface Log {
  address: Hex
  topics: Hex[]
  /** hex WITHOUT 0x on the wire (protocol.md §7); stored with 0x like every byte string */
  data: Hex
}

/** Outcome of executing one transaction. */
export type ExecutionOutcome =
  | {
      ok: true
      contractAddress: Hex | null
      gasUsed: number
      /** deploy: the runtime code; invoke: the return data; transfer/maintain: `0x0`-style empty (`0x`) */
      ret: Hex
      logs: Log[]
      /** wall-clock execution time, ns; informative only (never part of consensus data) */
      executeTimeNs: number
    }
  | {
      ok: false
      invalidMsg: InvalidMsg
      /** detail for the log and the system-status event, e.g. "out of gas (execution budget)" */
      detail: string
      gasUsed: number
      executeTimeNs: number
    }

export interface BlockHeader {
  number: number
  hash: Hex
  parentHash: Hex
  /** ns */
  writeTime: bigint
  /** average execution time of the block's transactions, ms */
  avgTimeMs: number
  /** valid transactions in the block */
  txCount: number
  txRoot: Hex
  receiptRoot: Hex
  merkleRoot: Hex
  version: string
  /** bloom of the block's log addresses and topics (crypto/log-bloom.ts); absent in headers written before it existed */
  logsBloom?: Uint8Array
}

/** A committed transaction: the signed tx plus where it sits. */
export interface CommittedTx {
  tx: SignedTx
  blockNumber: number
  blockHash: Hex
  txIndex: number
  executeTimeNs: number
}

export interface Receipt {
  txHash: Hex
  vmType: VmType
  contractAddress: Hex
  gasUsed: number
  ret: Hex
  logs: Log[]
  blockNumber: number
  blockHash: Hex
  txIndex: number
  version: string
}

/** A discarded transaction; decided inside a block so every node records the same (decision 6). */
export interface InvalidTx {
  tx: SignedTx
  invalidMsg: InvalidMsg
  detail: string
  /** the block during whose execution it was discarded */
  blockNumber: number
}

/** Account state. `nonce` counts deployments by this account (contract addresses derive from it). */
export interface Account {
  balance: bigint
  nonce: bigint
}

export type ContractStatus = 'normal' | 'frozen'

export interface ContractMeta {
  creator: Hex
  /** writeTime of the creating block, ns */
  createdAt: bigint
  createdInBlock: number
  status: ContractStatus
  vmType: VmType
}

/**
 * Reads of the world state as of the latest committed block (or of a block being built, with its
 * own writes on top). Storage keys and values are 32-byte `0x` hex.
 */
export interface StateReader {
  getAccount(address: Hex): Account | undefined
  getCode(address: Hex): Hex
  getStorage(address: Hex, slot: Hex): Hex
  getContractMeta(address: Hex): ContractMeta | undefined
}

/**
 * What one executed block (or the genesis) does to the world state, as the executor hands it to the
 * store. Only final values, only what differs from the state the block ran on. Keys are lower-case
 * `0x` hex and every map is in ascending key order, so every node hands its store the same sequence.
 */
export interface WorldChanges {
  /** full new value per changed account (accounts are never deleted) */
  accounts: Map<Hex, Account>
  /** new code per address; `0x` removes it */
  code: Map<Hex, Hex>
  /**
   * address -> slot -> value, slot and value each exactly 32 bytes (`0x` + 64 hex digits);
   * ZERO_WORD deletes the slot. The store refuses any other length, `0x` included.
   */
  storage: Map<Hex, Map<Hex, Hex>>
  /** new or changed contract metadata; a contract seen for the first time joins its creator's deployed list */
  contracts: Map<Hex, ContractMeta>
}

/** A WorldChanges with nothing in it, for callers that build one incrementally. */
export function emptyChanges(): WorldChanges {
  return { accounts: new Map(), code: new Map(), storage: new Map(), contracts: new Map() }
}

/** One key of the world state that a block changed; `value` undefined means deleted. */
export interface StateChange {
  key: Uint8Array
  value: Uint8Array | undefined
}

/** A block as committed: its header, its valid transactions with their receipts, and the transactions it discarded. */
export interface CommittedBlock {
  header: BlockHeader
  txs: CommittedTx[]
  receipts: Receipt[]
  invalid: InvalidTx[]
}

/**
 * A transaction a request thread (src/front/) decoded, hashed and signature-checked already, with
 * its bytes as wire/tx-codec.ts encodeAdmitted wrote them (they go into the pool log as they are).
 */
export interface CheckedTx {
  tx: SignedTx
  /** undefined: not checked yet (the pool checks it) */
  signatureValid: boolean | undefined
  record: Uint8Array
}

/** The door through which signed transactions enter the chain (implemented in src/chain/ and src/network/). */
export interface TxSubmitter {
  /**
   * Checks a submission (protocol.md §4), persists it and returns its hash at once; the outcome is
   * read later from the receipt. Throws InvalidParams, SystemBusy or DuplicateTransaction.
   */
  submit(kind: TxKind, params: object): Promise<Hex>
  /** The same for a transaction a request thread has checked and encoded already (never a simulation). */
  admit(checked: CheckedTx): Promise<Hex>
  /** The hash a client signs in the 2017 format (tx_getSignHash). */
  signHash(params: object): Hex
}

/** The JSON-RPC method that submits each kind of transaction; a relayed one is checked against its params schema. */
export const SUBMIT_METHOD: Readonly<Record<TxKind, string>> = {
  transfer: 'tx_sendTransaction',
  deploy: 'contract_deployContract',
  invoke: 'contract_invokeContract',
  maintain: 'contract_maintainContract',
}
