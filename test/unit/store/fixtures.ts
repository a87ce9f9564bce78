/** Builders for store tests: signed txs, receipts and whole blocks committed through the real Store API. */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { keccak_256 } from '@noble/hashes/sha3.js'
import type { Account, BlockHeader, CommittedTx, ContractMeta, Hex, InvalidTx, Receipt, SignedTx } from '../../../src/domain.ts'
import { emptyChanges, type WorldChanges } from '../../../src/domain.ts'
import { type BlockCommit, type Store, ZERO_HASH } from '../../../src/store/index.ts'

export function tempDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `keel-store-${name}-`))
}

/** deterministic `bytes`-byte hex from a label */
export function hexOf(label: string, bytes = 32): Hex {
  const out = Buffer.alloc(bytes)
  let block = keccak_256(new TextEncoder().encode(label))
  for (let at = 0; at < bytes; at += 32) {
    Buffer.from(block).copy(out, at)
    block = keccak_256(block)
  }
  return `0x${out.toString('hex')}`
}

export const addr = (label: string): Hex => hexOf(`addr:${label}`, 20)

/** 2024-ish in ns: far above 2^53, and not a multiple of 256 */
export const T0 = 1_700_000_000_123_456_789n

export function makeTx(label: string, over: Partial<SignedTx> = {}): SignedTx {
  return {
    hash: hexOf(`tx:${label}`),
    kind: 'transfer',
    from: addr(`from:${label}`),
    to: addr('to'),
    value: 2n ** 62n + 7n,
    payload: '0x',
    timestamp: T0,
    nonce: 9_007_199_254_740_993n,
    extra: `extra ${label} ✓`,
    opcode: 0,
    vmType: 'EVM',
    signature: `0x00${'ab'.repeat(65)}`,
    signHash: hexOf(`sign:${label}`),
    simulate: false,
    signed: { timestamp: T0, nonce: 9_007_199_254_740_993n, value: 2n ** 62n + 7n, type: 'EVM', big: 2n ** 70n },
    ...over,
  }
}

export interface BlockSpec {
  valid?: SignedTx[]
  invalid?: SignedTx[]
  changes?: WorldChanges
  writeTime?: bigint
  /** receipt contract addresses by tx index */
  contractAddress?: Record<number, Hex>
}

/** Builds the BlockCommit for the store's next block (merkleRoot from stateRootAfter). */
export function nextBlock(store: Store, spec: BlockSpec = {}): BlockCommit {
  const number = store.height() + 1
  const parentHash = number === 1 ? ZERO_HASH : store.getBlock(number - 1)!.hash
  const changes = spec.changes ?? emptyChanges()
  const valid = spec.valid ?? []
  const header: BlockHeader = {
    number,
    hash: hexOf(`block:${number}:${parentHash}`),
    parentHash,
    writeTime: spec.writeTime ?? T0 + BigInt(number) * 1_000_000_000n,
    avgTimeMs: 1,
    txCount: valid.length,
    txRoot: hexOf(`txroot:${number}`),
    receiptRoot: hexOf(`receiptroot:${number}`),
    merkleRoot: store.stateRootAfter(changes),
    version: '1.0',
  }
  const txs: CommittedTx[] = valid.map((tx, txIndex) => ({
    tx,
    blockNumber: number,
    blockHash: header.hash,
    txIndex,
    executeTimeNs: 5_000_000_123,
  }))
  const receipts: Receipt[] = valid.map((tx, txIndex) => ({
    txHash: tx.hash,
    vmType: tx.vmType,
    contractAddress: spec.contractAddress?.[txIndex] ?? `0x${'00'.repeat(20)}`,
    gasUsed: 21000,
    ret: '0x',
    logs: [{ address: addr('log'), topics: [hexOf(`topic:${tx.hash}`)], data: '0x0102' }],
    blockNumber: number,
    blockHash: header.hash,
    txIndex,
    version: '1.0',
  }))
  const invalid: InvalidTx[] = (spec.invalid ?? []).map((tx) => ({
    tx,
    invalidMsg: 'OUTOFBALANCE',
    detail: 'balance too low',
    blockNumber: number,
  }))
  return { header, txs, receipts, invalid, changes }
}

export async function commitNext(store: Store, spec: BlockSpec = {}): Promise<BlockCommit> {
  const block = nextBlock(store, spec)
  await store.commitBlock(block)
  return block
}

export function changes(parts: {
  accounts?: [Hex, Account][]
  code?: [Hex, Hex][]
  storage?: [Hex, [Hex, Hex][]][]
  contracts?: [Hex, ContractMeta][]
}): WorldChanges {
  return {
    accounts: new Map(parts.accounts ?? []),
    code: new Map(parts.code ?? []),
    storage: new Map((parts.storage ?? []).map(([a, slots]) => [a, new Map(slots)])),
    contracts: new Map(parts.contracts ?? []),
  }
}

export const word = (n: number | bigint): Hex => `0x${BigInt(n).toString(16).padStart(64, '0')}`
