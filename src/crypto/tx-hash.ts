/**
 * Transaction hash, contract address and block hash exactly as Hyperchain 1.4 computes them
 * (protocol.md §2), so the sample values of the spec and the manual reproduce.
 *
 * Hyperchain's "common hash" is Keccak-256 of Go's `json.Marshal` of a value; byte slices appear
 * as standard base64 strings (nil as `null`) and integers in decimal. The protobuf and RLP
 * encoders needed here are a few lines each, so they are written out rather than pulled in.
 */
import { concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { ProtoWriter } from '../../sdk/src/protobuf.ts'
import { bytesToHex } from '../wire/hex.ts'
import { keccak256 } from './hash.ts'
import { amountOf, int, type TxFields } from './sign-string.ts'
import { decodeSignatureHex } from './signature.ts'

/** Defaults the 2017 node writes into every transaction it builds (GO `api/helper.go`). */
export const DEFAULT_GAS_PRICE = 10_000n
export const DEFAULT_GAS_LIMIT = 100_000_000n
/** Default gas limit of the Feb-2017 code, needed to reproduce the 2017 manual's tx hashes. */
export const FEB_2017_GAS_LIMIT = 10_000n

/** TransactionValue.Opcode (GO `core/types/transaction.proto`). */
export const Opcode = { NORMAL: 0, UPDATE: 1, FREEZE: 2, UNFREEZE: 3, SKIPVM: 4, ARCHIVE: 100 } as const
/** TransactionValue.VmType: "jvm" (any case) is JVM, everything else EVM (GO `parseVmType`). */
export const VmType = { EVM: 0, JVM: 1 } as const

/** The proto3 TransactionValue message; zero and empty fields are left out of the encoding. */
export interface TransactionValue {
  price: bigint
  gasLimit: bigint
  amount: bigint
  payload?: Uint8Array
  op?: number | bigint
  /** UTF-8 text, stored as bytes */
  extra?: string
  vmType?: number
}

/** Protobuf bytes of a TransactionValue: fields 1 price, 2 gasLimit, 3 amount, 4 payload, 8 op, 9 extra, 10 vmType. */
export function encodeTransactionValue(value: TransactionValue): Uint8Array {
  const writer = new ProtoWriter()
  writer.varint(1, value.price)
  writer.varint(2, value.gasLimit)
  writer.varint(3, value.amount)
  writer.bytes(4, value.payload)
  writer.varint(8, BigInt(value.op ?? 0))
  writer.bytes(9, value.extra === undefined ? undefined : utf8ToBytes(value.extra))
  writer.varint(10, BigInt(value.vmType ?? 0))
  return writer.finish()
}

/**
 * How the node fills TransactionValue from a request (GO `api/transaction.go` prepareTransaction):
 * - `transfer` (tx_sendTransaction): amount and extra only; payload, opcode and type are ignored;
 * - `contract` (deploy/invoke/maintain): amount, payload, opcode, extra and vm type.
 */
export type TxKind = 'transfer' | 'contract'

export interface TxHashOptions {
  gasPrice?: bigint
  /** 100000000 in Hyperchain 1.4; FEB_2017_GAS_LIMIT reproduces the 2017 manual */
  gasLimit?: bigint
}

export function transactionValueOf(tx: TxFields, kind: TxKind, options: TxHashOptions = {}): TransactionValue {
  const value: TransactionValue = {
    price: options.gasPrice ?? DEFAULT_GAS_PRICE,
    gasLimit: options.gasLimit ?? DEFAULT_GAS_LIMIT,
    amount: amountOf(tx),
    extra: tx.extra ?? undefined,
  }
  if (kind === 'transfer') return value
  return {
    ...value,
    payload: tx.payload == null ? undefined : goFromHex(tx.payload),
    op: tx.opcode == null ? 0 : int(tx.opcode, 'opcode'),
    vmType: tx.type != null && tx.type.toLowerCase() === 'jvm' ? VmType.JVM : VmType.EVM,
  }
}

/** The raw fields Hyperchain hashes; `to` null for a deployment. */
export interface HashedTransaction {
  from: Uint8Array
  to: Uint8Array | null
  value: Uint8Array
  timestamp: bigint
  nonce: bigint
  signature: Uint8Array
}

/** Keccak-256 of Go JSON `[From, To, Value, Timestamp, Nonce, Signature]` (GO `Transaction.Hash`). */
export function hashTransaction(tx: HashedTransaction): Uint8Array {
  return keccak256(goJson([tx.from, tx.to, tx.value, tx.timestamp, tx.nonce, tx.signature]))
}

/**
 * The tx hash of a received transaction, as `0x` + 64 hex digits. A missing `to` is a deployment
 * (hashed as null); the signature bytes are hashed as received, flag byte included.
 */
export function transactionHash(tx: TxFields & { signature: string }, kind: TxKind, options: TxHashOptions = {}): string {
  const hash = hashTransaction({
    from: addressBytes(tx.from),
    to: tx.to == null ? null : addressBytes(tx.to),
    value: encodeTransactionValue(transactionValueOf(tx, kind, options)),
    timestamp: int(tx.timestamp, 'timestamp'),
    nonce: int(tx.nonce, 'nonce'),
    signature: decodeSignatureHex(tx.signature),
  })
  return bytesToHex(hash)
}

/**
 * Address of a contract deployed by `sender`: Keccak-256(RLP([sender, nonce]))[12:], where nonce
 * is the sender's deployment count before this one, starting at 0 (GO `crypto.CreateAddress`).
 */
export function contractAddress(sender: string, nonce: bigint | number): string {
  const senderBytes = addressBytes(sender)
  const list = concatBytes(rlpBytes(senderBytes), rlpBytes(bigIntToMinimalBytes(BigInt(nonce))))
  // The list is at most 21 + 9 bytes, so the short form (0xc0 + length) always applies.
  return bytesToHex(keccak256(concatBytes(Uint8Array.of(0xc0 + list.length), list)).subarray(12))
}

export interface BlockHeader {
  parentHash: Uint8Array | null
  number: bigint
  timestamp: bigint
  txRoot: Uint8Array | null
  receiptRoot: Uint8Array | null
  merkleRoot: Uint8Array | null
}

/** Keccak-256 of Go JSON `[ParentHash, Number, Timestamp, TxRoot, ReceiptRoot, MerkleRoot]` (GO `core/types/block.go`). */
export function blockHash(block: BlockHeader): Uint8Array {
  return keccak256(goJson([block.parentHash, block.number, block.timestamp, block.txRoot, block.receiptRoot, block.merkleRoot]))
}

/**
 * Protobuf ConsensusTransaction{1 from, 2 to, 3 value, 4 timestamp, 5 nonce}: what TxRoot hashes
 * per transaction (GO `core/ledger/codec/consensus`). No published vector covers it.
 */
export function encodeConsensusTransaction(tx: Omit<HashedTransaction, 'signature'>): Uint8Array {
  const writer = new ProtoWriter()
  writer.bytes(1, tx.from)
  writer.bytes(2, tx.to ?? undefined)
  writer.bytes(3, tx.value)
  writer.varint(4, tx.timestamp)
  writer.varint(5, tx.nonce)
  return writer.finish()
}

/** Protobuf ConsensusReceipt{1 gasUsed, 2 ret, 3 logs}: what ReceiptRoot hashes per receipt. No published vector covers it. */
export function encodeConsensusReceipt(receipt: { gasUsed: bigint; ret: Uint8Array; logs: Uint8Array }): Uint8Array {
  const writer = new ProtoWriter()
  writer.varint(1, receipt.gasUsed)
  writer.bytes(2, receipt.ret)
  writer.bytes(3, receipt.logs)
  return writer.finish()
}

/**
 * TxRoot / ReceiptRoot: Keccak-256 of the Go JSON array of the encoded items. Go marshals the
 * executor's nil buffer of an empty block as `null`, not `[]`.
 */
export function listRoot(encodedItems: readonly Uint8Array[]): Uint8Array {
  return keccak256(encodedItems.length === 0 ? 'null' : goJson(encodedItems))
}

/** What consensus compares after execution: Keccak-256 of Go JSON `[merkleRoot, txRoot, receiptRoot]`. */
export function validationResultHash(merkleRoot: Uint8Array, txRoot: Uint8Array, receiptRoot: Uint8Array): Uint8Array {
  return keccak256(goJson([merkleRoot, txRoot, receiptRoot]))
}

type GoJsonValue = Uint8Array | bigint | number | null

/** Go's encoding/json for the shapes Hyperchain hashes: []byte → base64 with padding, nil → null, integers in decimal. */
export function goJson(values: readonly GoJsonValue[]): string {
  const parts = values.map((value) => {
    if (value === null) return 'null'
    if (value instanceof Uint8Array) return `"${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}"`
    return BigInt(value).toString()
  })
  return `[${parts.join(',')}]`
}

/** 20 address bytes from hex (0x optional). */
export function addressBytes(address: string): Uint8Array {
  const digits = address.startsWith('0x') || address.startsWith('0X') ? address.slice(2) : address
  if (!/^[0-9a-fA-F]{40}$/.test(digits)) throw new TypeError(`not a 20-byte address: ${JSON.stringify(address)}`)
  return hexToBytes(digits)
}

/** Go's common.FromHex: optional 0x, an odd digit count gets a leading 0. */
function goFromHex(value: string): Uint8Array {
  let digits = value.startsWith('0x') || value.startsWith('0X') ? value.slice(2) : value
  if (!/^[0-9a-fA-F]*$/.test(digits)) throw new TypeError('payload must be hex')
  if (digits.length % 2 === 1) digits = `0${digits}`
  return hexToBytes(digits)
}

/** RLP of a byte string shorter than 56 bytes (all this module needs). */
function rlpBytes(bytes: Uint8Array): Uint8Array {
  if (bytes.length === 1 && bytes[0] < 0x80) return bytes
  if (bytes.length >= 56) throw new Error('rlpBytes handles strings shorter than 56 bytes only')
  return concatBytes(Uint8Array.of(0x80 + bytes.length), bytes)
}

/** Big-endian bytes without leading zeros; 0 is the empty string (RLP's encoding of integer 0). */
function bigIntToMinimalBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError('nonce must not be negative')
  if (value === 0n) return new Uint8Array(0)
  const digits = value.toString(16)
  return hexToBytes(digits.length % 2 === 1 ? `0${digits}` : digits)
}
