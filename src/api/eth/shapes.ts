/**
 * Keel's records in Ethereum's JSON-RPC shapes (issue 28, docs/ethereum.md §4): blocks,
 * transactions, receipts and logs as ethers, viem and web3.js read them.
 *
 * Which values are Keel's own: a block's hash and parentHash (Hyperchain's block hash, protocol.md
 * §2), transactionsRoot, receiptsRoot and stateRoot (Keel's roots: no client can recompute them
 * from Ethereum's tries, since Keel keeps none) and a Hyperchain-dialect transaction's hash. The
 * rest is Ethereum's: logsBloom (the same construction), gasUsed, timestamps in seconds, an
 * Ethereum transaction's hash, fields and signature. A block lists its valid transactions, then
 * those it discarded (Ethereum's failed transactions, status 0x0).
 */
import { KECCAK256_RLP_ARRAY_S } from '@ethereumjs/util'
import { BLOOM_BYTES, logsBloom } from '../../crypto/log-bloom.ts'
import { type BlockHeader, type Hex, type Log, type SignedTx, ZERO_ADDRESS, ZERO_HASH } from '../../domain.ts'
import { ethereumFieldsOf, isEthereumTx } from '../../eth/transaction.ts'
import { bytesToHex } from '../../wire/hex.ts'
import type { ChainReader } from '../chain-reader.ts'

export const quantity = (value: number | bigint): Hex => `0x${value.toString(16)}`
const EMPTY_BLOOM: Hex = `0x${'00'.repeat(BLOOM_BYTES)}`

/** A transaction of a block as the Ethereum dialect places it: valid ones first, then discarded ones. */
export interface Placed {
  tx: SignedTx
  blockNumber: number
  blockHash: Hex
  index: number
  /** undefined: discarded (status 0x0) */
  receipt?: { gasUsed: number; contractAddress: Hex | null; logs: Log[] }
  /** the discard's reason, for debug_traceTransaction */
  failure?: string
}

/** The transactions of block `number`, valid ones then discarded ones, with their places. */
export function placedTxs(chain: ChainReader, header: BlockHeader): Placed[] {
  const placed: Placed[] = []
  for (const hash of chain.getBlockTxHashes(header.number)) {
    const committed = chain.getTx(hash)
    const receipt = chain.getReceipt(hash)
    if (committed === undefined) continue
    placed.push({
      tx: committed.tx,
      blockNumber: header.number,
      blockHash: header.hash,
      index: placed.length,
      receipt: {
        gasUsed: receipt?.gasUsed ?? 0,
        contractAddress: committed.tx.kind === 'deploy' && receipt !== undefined ? receipt.contractAddress : null,
        logs: receipt?.logs ?? [],
      },
    })
  }
  for (const hash of chain.getBlockInvalidTxHashes(header.number)) {
    const invalid = chain.getInvalidTx(hash)
    if (invalid === undefined) continue
    placed.push({
      tx: invalid.tx,
      blockNumber: header.number,
      blockHash: header.hash,
      index: placed.length,
      failure: `${invalid.invalidMsg}: ${invalid.detail}`,
    })
  }
  return placed
}

/** Where transaction `hash` sits, or undefined when no block holds it. */
export function placeOf(chain: ChainReader, hash: Hex): Placed | undefined {
  const committed = chain.getTx(hash)
  const number = committed?.blockNumber ?? chain.getInvalidTx(hash)?.blockNumber
  if (number === undefined) return undefined
  const header = chain.getBlock(number)
  if (header === undefined) return undefined
  return placedTxs(chain, header).find((placed) => placed.tx.hash === hash)
}

/** A transaction in Ethereum's shape; `place` undefined for a pending one. */
export function ethTransaction(tx: SignedTx, chainId: bigint, place?: { blockNumber: number; blockHash: Hex; index: number }) {
  const located = {
    blockHash: place?.blockHash ?? null,
    blockNumber: place === undefined ? null : quantity(place.blockNumber),
    transactionIndex: place === undefined ? null : quantity(place.index),
  }
  if (isEthereumTx(tx)) {
    const f = ethereumFieldsOf(tx, chainId)
    const fees =
      f.type === 2
        ? {
            maxFeePerGas: quantity(f.maxFeePerGas ?? 0n),
            maxPriorityFeePerGas: quantity(f.maxPriorityFeePerGas ?? 0n),
            gasPrice: quantity(f.maxFeePerGas ?? 0n),
          }
        : { gasPrice: quantity(f.gasPrice ?? 0n) }
    return {
      hash: tx.hash,
      type: quantity(f.type),
      chainId: quantity(chainId),
      nonce: quantity(f.nonce),
      from: tx.from,
      to: f.to,
      value: quantity(f.value),
      gas: quantity(f.gasLimit),
      ...fees,
      input: f.data,
      ...(f.type === 0 ? {} : { accessList: f.accessList, yParity: quantity(f.v) }),
      v: quantity(f.v),
      r: quantity(f.r),
      s: quantity(f.s),
      ...located,
    }
  }
  // a Hyperchain-dialect transaction: its own signature where it is secp256k1 (00‖r‖s‖v), its
  // random 64-bit nonce left out (0x0: Ethereum clients read nonces as safe integers)
  const sig = tx.signature.replace(/^0x/, '')
  const secp = sig.length === 132 && sig.startsWith('00')
  const recovery = secp ? Number.parseInt(sig.slice(130, 132), 16) % 27 : 0
  return {
    hash: tx.hash,
    type: '0x0',
    chainId: quantity(chainId),
    nonce: '0x0',
    from: tx.from,
    to: tx.kind === 'deploy' ? null : tx.to,
    value: quantity(tx.value),
    gas: '0x0',
    gasPrice: '0x0',
    input: tx.kind === 'transfer' ? '0x' : tx.payload,
    v: quantity(27 + (recovery & 1)),
    r: secp ? `0x${sig.slice(2, 66)}` : '0x0',
    s: secp ? `0x${sig.slice(66, 130)}` : '0x0',
    ...located,
  }
}

/** A log in Ethereum's shape. */
export function ethLog(log: Log, placed: Placed, logIndex: number) {
  return {
    address: log.address,
    topics: log.topics,
    data: log.data === '' ? '0x' : log.data.startsWith('0x') ? log.data : `0x${log.data}`,
    blockNumber: quantity(placed.blockNumber),
    blockHash: placed.blockHash,
    transactionHash: placed.tx.hash,
    transactionIndex: quantity(placed.index),
    logIndex: quantity(logIndex),
    removed: false,
  }
}

/** The index in its block of the first log of each placed transaction. */
export function firstLogIndexes(placed: readonly Placed[]): number[] {
  const firsts: number[] = []
  let next = 0
  for (const item of placed) {
    firsts.push(next)
    next += item.receipt?.logs.length ?? 0
  }
  return firsts
}

/** A receipt in Ethereum's shape; cumulativeGasUsed counts the block's earlier transactions. */
export function ethReceipt(placed: Placed, all: readonly Placed[], chainId: bigint, txGasLimit: bigint) {
  const firsts = firstLogIndexes(all)
  let cumulative = 0n
  for (const item of all) {
    cumulative += gasOf(item, txGasLimit)
    if (item === placed) break
  }
  const logs = (placed.receipt?.logs ?? []).map((log, i) => ethLog(log, placed, firsts[placed.index] + i))
  const tx = ethTransaction(placed.tx, chainId, placed)
  return {
    transactionHash: placed.tx.hash,
    transactionIndex: quantity(placed.index),
    blockHash: placed.blockHash,
    blockNumber: quantity(placed.blockNumber),
    from: placed.tx.from,
    to: tx.to,
    cumulativeGasUsed: quantity(cumulative),
    gasUsed: quantity(gasOf(placed, txGasLimit)),
    effectiveGasPrice: '0x0',
    contractAddress: placed.receipt?.contractAddress ?? null,
    logs,
    logsBloom: bloomHex(placed.receipt?.logs ?? []),
    status: placed.receipt === undefined ? '0x0' : '0x1',
    type: tx.type,
  }
}

/**
 * Gas of a placed transaction: its receipt's; for a discarded one Keel records none, so its gas
 * limit (an Ethereum transaction's own, else 0: a Hyperchain-dialect transaction has none).
 */
function gasOf(placed: Placed, txGasLimit: bigint): bigint {
  if (placed.receipt !== undefined) return BigInt(placed.receipt.gasUsed)
  if (!isEthereumTx(placed.tx)) return 0n
  return txGasLimit
}

export function bloomHex(logs: readonly Log[]): Hex {
  const bloom = logsBloom(logs)
  return bloom.length === 0 ? EMPTY_BLOOM : bytesToHex(bloom)
}

/** The block before Keel's first: Ethereum's clients expect a block 0. Its hash is block 1's parent hash. */
export function genesisHeader(chain: ChainReader): BlockHeader {
  const first = chain.getBlock(1)
  return {
    number: 0,
    hash: first?.parentHash ?? ZERO_HASH,
    parentHash: ZERO_HASH,
    writeTime: first?.writeTime ?? 0n,
    avgTimeMs: 0,
    txCount: 0,
    txRoot: ZERO_HASH,
    receiptRoot: ZERO_HASH,
    merkleRoot: ZERO_HASH,
    version: first?.version ?? '',
  }
}

/** A block in Ethereum's shape: transaction hashes, or whole transactions when `full`. */
export function ethBlock(
  chain: ChainReader,
  header: BlockHeader,
  full: boolean,
  chainId: bigint,
  blockGasLimit: bigint,
  txGasLimit: bigint,
) {
  const placed = header.number === 0 ? [] : placedTxs(chain, header)
  let gasUsed = 0n
  for (const item of placed) gasUsed += gasOf(item, txGasLimit)
  const bloom = header.logsBloom
  return {
    number: quantity(header.number),
    hash: header.hash,
    parentHash: header.parentHash,
    nonce: '0x0000000000000000',
    mixHash: ZERO_HASH,
    sha3Uncles: KECCAK256_RLP_ARRAY_S,
    logsBloom: bloom === undefined || bloom.length === 0 ? EMPTY_BLOOM : bytesToHex(bloom),
    transactionsRoot: header.txRoot,
    stateRoot: header.merkleRoot,
    receiptsRoot: header.receiptRoot,
    miner: ZERO_ADDRESS,
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: '0x',
    size: quantity(512 + placed.length * 128),
    gasLimit: quantity(blockGasLimit),
    gasUsed: quantity(gasUsed),
    timestamp: quantity(header.writeTime / 1_000_000_000n),
    baseFeePerGas: '0x0',
    transactions: placed.map((item) => (full ? ethTransaction(item.tx, chainId, item) : item.tx.hash)),
    uncles: [],
  }
}
