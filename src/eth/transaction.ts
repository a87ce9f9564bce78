/**
 * Ethereum's signed transactions (legacy with EIP-155, EIP-2930 and EIP-1559) on Keel's ledger
 * (issue 28, docs/ethereum.md).
 *
 * A raw transaction is decoded with @ethereumjs/tx, its chain id checked against the node's, its
 * sender recovered from the signature, and it becomes a SignedTx like any other: it is pooled,
 * logged, relayed, ordered and recorded with the rest, and the Hyperchain dialect reads it. What
 * marks it is `signed.ethereum`, the raw bytes as the client sent them: a peer (network/
 * tx-relay.ts) and a restart rebuild the same record from them and the admission time
 * (`signed.timestamp`), and the executor runs it with Ethereum's rules (the nonce, the value, the
 * creation address).
 *
 * Mapping: hash = Keccak-256 of the raw bytes (Ethereum's hash, so clients find it under the hash
 * they computed); kind = deploy (no `to`), transfer (no data) or invoke; nonce = the Ethereum
 * nonce; timestamp = when this node admitted it (ns); signature = r‖s‖yParity; signHash = the hash
 * the sender signed (with `from`, it keys duplicate detection as for every transaction).
 */

import type { Common } from '@ethereumjs/common'
import { createCustomCommon, Mainnet } from '@ethereumjs/common'
import { RLP } from '@ethereumjs/rlp'
import { type AccessList2930Tx, createTxFromRLP, type FeeMarket1559Tx, type LegacyTx } from '@ethereumjs/tx'
import { hexToBytes } from '@noble/hashes/utils.js'
import { keccak256 } from '../crypto/hash.ts'
import { secp256k1, secp256k1Address } from '../crypto/secp256k1.ts'
import type { Hex, SignedTx, TxKind } from '../domain.ts'
import { InvalidParams } from '../errors.ts'
import { bytesToHex } from '../wire/hex.ts'
import { TransactionRejected } from './errors.ts'

/** geth's limit on a transaction's size (txpool txMaxSize, 4 slots of 32 KiB) */
export const MAX_RAW_TX_BYTES = 128 * 1024

/** What Keel keeps of an Ethereum transaction in SignedTx.signed. */
export interface EthereumSigned {
  /** the raw transaction, 0x hex, lower case, as the client sent it */
  ethereum: Hex
  /** when the admitting node admitted it, ns */
  timestamp: bigint
}

/** The fields of a decoded Ethereum transaction, as the Ethereum dialect shows them. */
export interface EthereumFields {
  type: 0 | 1 | 2
  chainId: bigint
  nonce: bigint
  gasLimit: bigint
  /** legacy and EIP-2930 */
  gasPrice?: bigint
  /** EIP-1559 */
  maxFeePerGas?: bigint
  maxPriorityFeePerGas?: bigint
  to: Hex | null
  value: bigint
  data: Hex
  accessList: { address: Hex; storageKeys: Hex[] }[]
  v: bigint
  r: bigint
  s: bigint
}

export interface DecodedEthereumTx {
  fields: EthereumFields
  from: Hex
  hash: Hex
  /** the hash the sender signed */
  signHash: Hex
}

/** true for a transaction that came in through eth_sendRawTransaction */
export function isEthereumTx(tx: Pick<SignedTx, 'signed'>): boolean {
  return typeof tx.signed.ethereum === 'string'
}

const commons = new Map<bigint, Common>()
function commonOf(chainId: bigint): Common {
  let common = commons.get(chainId)
  if (common === undefined) {
    common = createCustomCommon({ chainId: Number(chainId) }, Mainnet)
    commons.set(chainId, common)
  }
  return common
}

const HEX = /^0x(?:[0-9a-fA-F]{2})*$/

/** The chain id a raw transaction names (undefined: a legacy one without EIP-155), read before decoding so a mismatch gets its own message. */
function chainIdOf(raw: Uint8Array): bigint | undefined {
  const typed = raw[0] <= 0x7f
  const items = RLP.decode(typed ? raw.subarray(1) : raw) as Uint8Array[]
  if (!Array.isArray(items)) throw new Error('not an RLP list')
  if (typed) return toBigInt(items[0])
  const v = toBigInt(items[6])
  if (v === 27n || v === 28n) return undefined
  return (v - 35n) / 2n
}

function toBigInt(bytes: Uint8Array | undefined): bigint {
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) return 0n
  return BigInt(bytesToHex(bytes))
}

/**
 * Decodes and checks a raw transaction: size, type, chain id, signature. Throws TransactionRejected
 * (-32000, geth's messages) or InvalidParams for bytes that are no transaction. `recover` false:
 * the sender is known already (a recorded transaction), `from` is left empty.
 */
export function decodeEthereumTx(rawHex: string, chainId: bigint, recover = true): DecodedEthereumTx {
  if (typeof rawHex !== 'string' || !HEX.test(rawHex) || rawHex.length < 4)
    throw new InvalidParams('invalid argument 0 (data): must be the signed transaction as 0x hex bytes')
  const size = (rawHex.length - 2) / 2
  if (size > MAX_RAW_TX_BYTES) throw new TransactionRejected(`oversized data: transaction size ${size}, limit ${MAX_RAW_TX_BYTES}`)
  const raw = hexToBytes(rawHex.slice(2))
  if (raw[0] <= 0x7f && raw[0] !== 1 && raw[0] !== 2)
    throw new TransactionRejected(`transaction type not supported: type ${raw[0]} (Keel takes legacy, EIP-2930 and EIP-1559 transactions)`)
  let named: bigint | undefined
  try {
    named = chainIdOf(raw)
  } catch (error) {
    throw new InvalidParams(`invalid argument 0 (data): rlp: ${(error as Error).message}`)
  }
  if (named === undefined)
    throw new TransactionRejected('only replay-protected (EIP-155) transactions allowed over RPC: sign with the chain id (eth_chainId)')
  if (named !== chainId) throw new TransactionRejected(`invalid chain id for signer: have ${named} want ${chainId} (eth_chainId)`)
  let tx: LegacyTx | AccessList2930Tx | FeeMarket1559Tx
  try {
    tx = createTxFromRLP(raw, { common: commonOf(chainId) }) as LegacyTx | AccessList2930Tx | FeeMarket1559Tx
  } catch (error) {
    const message = (error as Error).message
    if (/signature|s-value|v value|recovery/i.test(message)) throw new TransactionRejected(`invalid sender: ${firstLine(message)}`)
    if (/initcode size/.test(message)) throw new TransactionRejected(`max initcode size exceeded: ${firstLine(message)}`)
    if (/maxFeePerGas cannot be less than maxPriorityFeePerGas/.test(message))
      throw new TransactionRejected('max priority fee per gas higher than max fee per gas')
    throw new InvalidParams(`invalid argument 0 (data): not a valid transaction: ${firstLine(message)}`)
  }
  const signHash = tx.getHashedMessageToSign()
  let from: Hex = ''
  try {
    if (!tx.isSigned()) throw new Error('unsigned')
    if (recover) from = senderOf(tx, chainId, signHash)
  } catch (error) {
    throw new TransactionRejected(`invalid sender: ${firstLine((error as Error).message)}`)
  }
  const type = tx.type as 0 | 1 | 2
  const fields: EthereumFields = {
    type,
    chainId,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    to: tx.to === undefined ? null : tx.to.toString().toLowerCase(),
    value: tx.value,
    data: bytesToHex(tx.data),
    accessList: type === 0 ? [] : accessListOf((tx as AccessList2930Tx).accessList),
    v: tx.v as bigint,
    r: tx.r as bigint,
    s: tx.s as bigint,
  }
  if (type === 2) {
    fields.maxFeePerGas = (tx as FeeMarket1559Tx).maxFeePerGas
    fields.maxPriorityFeePerGas = (tx as FeeMarket1559Tx).maxPriorityFeePerGas
  } else fields.gasPrice = (tx as LegacyTx).gasPrice
  return { fields, from, hash: bytesToHex(keccak256(raw)), signHash: bytesToHex(signHash) }
}

const SECP256K1_HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n

const bytes32 = (value: bigint): Uint8Array => hexToBytes(value.toString(16).padStart(64, '0'))

/**
 * The sender by the node's native secp256k1 recovery (~45 µs), not @ethereumjs/tx's
 * getSenderAddress, which recovers in pure JavaScript (~2 ms: it was 70% of a raw transaction's
 * CPU on the request thread). The same rules: high s refused (EIP-2), the recovery id from v
 * (y-parity for typed transactions, v − 2·chainId − 35 for EIP-155 ones).
 */
function senderOf(tx: LegacyTx | AccessList2930Tx | FeeMarket1559Tx, chainId: bigint, digest: Uint8Array): Hex {
  const v = tx.v as bigint
  const r = tx.r as bigint
  const s = tx.s as bigint
  if (s > SECP256K1_HALF_ORDER) throw new Error('Invalid Signature: s-values greater than secp256k1n/2 are considered invalid')
  const recovery = tx.type === 0 ? v - (2n * chainId + 35n) : v
  if (recovery !== 0n && recovery !== 1n) throw new Error(`Invalid Signature: v = ${v} gives no recovery id`)
  const publicKey = secp256k1.recover(digest, bytes32(r), bytes32(s), Number(recovery))
  if (publicKey === undefined) throw new Error('Invalid Signature: no public key recovers from it')
  return secp256k1Address(publicKey).toLowerCase()
}

function accessListOf(list: readonly [Uint8Array, Uint8Array[]][]): EthereumFields['accessList'] {
  return list.map(([address, keys]) => ({ address: bytesToHex(address), storageKeys: keys.map((key) => bytesToHex(key)) }))
}

function firstLine(message: string): string {
  return message.split('\n')[0].slice(0, 200)
}

const word = (value: bigint): string => value.toString(16).padStart(64, '0')

/** The SignedTx of a decoded Ethereum transaction admitted at `timestampNs`. */
export function ethereumSignedTx(rawHex: string, decoded: DecodedEthereumTx, timestampNs: bigint): SignedTx {
  const { fields } = decoded
  const kind: TxKind = fields.to === null ? 'deploy' : fields.data === '0x' ? 'transfer' : 'invoke'
  const signed: EthereumSigned = { ethereum: rawHex.toLowerCase(), timestamp: timestampNs }
  return {
    hash: decoded.hash,
    kind,
    from: decoded.from,
    to: fields.to,
    value: fields.value,
    payload: fields.data,
    timestamp: timestampNs,
    nonce: fields.nonce,
    extra: '',
    opcode: 0,
    vmType: 'EVM',
    signature: `0x${word(fields.r)}${word(fields.s)}${(fields.type === 0 ? (fields.v % 2n === 0n ? 1n : 0n) : fields.v).toString(16).padStart(2, '0')}`,
    signHash: decoded.signHash,
    simulate: false,
    signed: signed as unknown as Record<string, unknown>,
  }
}

/**
 * Rebuilds the SignedTx of a record's `signed` (a peer's relay, a synced block), checking it all
 * again but the chain id, which the admitting VP checked against its configuration (every VP of a
 * network has the same, docs/ethereum.md).
 */
export function ethereumTxFromSigned(signed: Record<string, unknown>): SignedTx {
  const raw = signed.ethereum
  const timestamp = signed.timestamp
  if (typeof raw !== 'string' || (typeof timestamp !== 'bigint' && typeof timestamp !== 'number') || BigInt(timestamp) <= 0n)
    throw new Error('an Ethereum transaction record needs `ethereum` (hex) and `timestamp` (ns)')
  let chainId: bigint | undefined
  try {
    chainId = chainIdOf(hexToBytes(raw.slice(2)))
  } catch {
    chainId = undefined
  }
  if (chainId === undefined) throw new Error('an Ethereum transaction record without a valid chain id')
  return ethereumSignedTx(raw, decodeEthereumTx(raw, chainId), BigInt(timestamp))
}

/** The Ethereum fields of a recorded Ethereum transaction (its raw bytes decoded again; no checks). */
export function ethereumFieldsOf(tx: SignedTx, chainId: bigint): EthereumFields {
  // a recorded transaction's sender is known: no signature recovery
  return decodeEthereumTx(tx.signed.ethereum as string, chainId, false).fields
}

/** The gas limit a recorded Ethereum transaction names (read from its raw bytes). */
export function ethereumGasLimitOf(tx: SignedTx): bigint {
  const raw = hexToBytes((tx.signed.ethereum as string).slice(2))
  const typed = raw[0] <= 0x7f
  const items = RLP.decode(typed ? raw.subarray(1) : raw) as Uint8Array[]
  // legacy: [nonce, gasPrice, gas, ...]; 2930: [chainId, nonce, gasPrice, gas, ...]; 1559: [chainId, nonce, tip, feeCap, gas, ...]
  return toBigInt(items[!typed ? 2 : raw[0] === 1 ? 3 : 4])
}
