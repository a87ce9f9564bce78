/**
 * Records → the wire shapes of Hyperchain (protocol.md §7): quantities as 0x hex without padding,
 * times and nonces as JSON integers (bigint when past 2^53), the block count key `txcounts`,
 * log data without 0x, a deployment's `to` as the zero address.
 */
import type {
  Block,
  InvalidTransaction,
  Log as WireLog,
  Receipt as WireReceipt,
  Transaction as WireTransaction,
} from '../../generated/types.ts'
import { copyWith } from '../copy-with.ts'
import {
  type BlockHeader,
  type CommittedTx,
  extraIdsOf,
  type InvalidTx,
  RECORD_VERSION,
  type Receipt,
  type SignedTx,
  ZERO_ADDRESS,
} from '../domain.ts'

export function toHex(value: number | bigint): string {
  return `0x${value.toString(16)}`
}

/** int64 values stay exact: bigint past 2^53, number otherwise (the JSON writer prints both bare). */
export function wireInteger(value: bigint): number | bigint {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value
}

/** `0x0` for an empty byte string, as Hyperchain prints empty payloads and rets. */
export function wireBytes(hex: string): string {
  return hex === '0x' || hex === '' ? '0x0' : hex
}

function commonFields(tx: SignedTx) {
  return {
    version: RECORD_VERSION,
    hash: tx.hash,
    from: tx.from,
    to: tx.to ?? ZERO_ADDRESS,
    amount: toHex(tx.value),
    timestamp: wireInteger(tx.timestamp),
    nonce: wireInteger(tx.nonce),
    extra: tx.extra,
    payload: wireBytes(tx.payload),
  }
}

export function formatTransaction(committed: CommittedTx): WireTransaction {
  const { tx } = committed
  const common = commonFields(tx)
  return {
    version: common.version,
    hash: common.hash,
    blockNumber: toHex(committed.blockNumber),
    blockHash: committed.blockHash,
    txIndex: toHex(committed.txIndex),
    from: common.from,
    to: common.to,
    amount: common.amount,
    timestamp: common.timestamp,
    nonce: common.nonce,
    extra: common.extra,
    executeTime: toHex(Math.round(committed.executeTimeNs / 1e6)),
    payload: common.payload,
    ...extraIdField(tx),
  }
}

/** `extraId`: the ids a transaction was signed with (the SDK's data index), left out when it has none. */
export function extraIdField(tx: SignedTx): { extraId?: (number | bigint | string)[] } {
  const ids = extraIdsOf(tx)
  return ids.length === 0 ? {} : { extraId: ids.map((id) => (typeof id === 'bigint' ? wireInteger(id) : id)) }
}

export function formatInvalidTransaction(invalid: InvalidTx): InvalidTransaction {
  return copyWith(commonFields(invalid.tx), { invalid: true, invalidMsg: invalid.invalidMsg })
}

export function formatReceipt(receipt: Receipt): WireReceipt {
  return {
    version: receipt.version,
    txHash: receipt.txHash,
    vmType: receipt.vmType,
    contractAddress: receipt.contractAddress,
    gasUsed: receipt.gasUsed,
    ret: wireBytes(receipt.ret),
    log: receipt.logs.map(
      (log, index): WireLog => ({
        address: log.address,
        topics: log.topics,
        data: log.data.startsWith('0x') ? log.data.slice(2) : log.data,
        blockNumber: receipt.blockNumber,
        blockHash: receipt.blockHash,
        txHash: receipt.txHash,
        txIndex: receipt.txIndex,
        index,
      }),
    ),
  }
}

/** `transactions` is left out when the plain form is asked for and when the block has none. */
export function formatBlock(header: BlockHeader, transactions: CommittedTx[] | undefined): Block {
  const block: Block = {
    version: header.version,
    number: toHex(header.number),
    hash: header.hash,
    parentHash: header.parentHash,
    writeTime: wireInteger(header.writeTime),
    avgTime: toHex(Math.round(header.avgTimeMs)),
    txcounts: toHex(header.txCount),
    merkleRoot: header.merkleRoot,
  }
  if (transactions !== undefined && transactions.length > 0) block.transactions = transactions.map(formatTransaction)
  return block
}
