/** The store's public types (re-exported by index.ts). */

import type { BlockHeader, CommittedTx, Hex, InvalidTx, Receipt, SignedTx, StateReader, WorldChanges } from '../domain.ts'
import type { PoolLog } from './pool-log.ts'
import type { ArchivedRange, ArchiveRecord } from './repos/archive.ts'
import type { BlockBatch } from './repos/block-batches.ts'
import type { ConsensusWrite } from './repos/consensus-log.ts'
import type { PastState } from './repos/state-undo.ts'
import type { TcertRecord } from './repos/tcerts.ts'
import type { StateHasher } from './state-hasher.ts'

/** The indexes a query can walk: by sender, receiver or extra id (valid txs), by `to` (invalid txs). */
export type TxIndexName = 'from' | 'receiver' | 'extraId' | 'invalidTo'
/** A transaction found through an index: where it sits (`index` counts invalid txs for invalidTo) and its hash. */
export interface IndexedTx {
  block: number
  index: number
  hash: Hex
}

/**
 * A block ready to commit. `receipts[i]` belongs to `txs[i]`; `txs[i].txIndex === i`;
 * `header.merkleRoot` must equal `stateRootAfter(changes)`.
 */
export interface BlockCommit {
  header: BlockHeader
  txs: CommittedTx[]
  receipts: Receipt[]
  invalid: InvalidTx[]
  changes: WorldChanges
  /** issue 28: executionOrder[i] = the i-th transaction the block executed is valid (else discarded), kept for tracing (keyspace 34) */
  executionOrder?: boolean[]
  /** a block ordered by consensus: its batch as named (a superset of the block's txs, in execution order) and commit proof (keyspace 24), so peers can replay it */
  batch?: { view: number; txHashes: Hex[]; proof: Uint8Array; timestamp?: bigint }
}

export interface GenesisAccount {
  address: Hex
  balance: bigint
}

export interface OpenStoreOptions {
  /** LMDB map size (the largest the data file may grow before lmdb-js remaps); lmdb-js's default when absent */
  mapSizeBytes?: number
}

export interface BlocksByTime {
  count: number
  /** lowest block number among the blocks in range */
  first?: number
  /** highest block number among the blocks in range */
  last?: number
}

/**
 * One stored key and value as LMDB holds them, in keyspace `space` (keyspace.ts). Keys of uint32
 * keyspaces are 4 big-endian bytes; values are the stored bytes (msgpack or raw), so copying an
 * entry out and back is byte for byte.
 */
export interface RawEntry {
  space: number
  key: Buffer
  value: Buffer
}

/**
 * The entries archive_archive moves for one block: header, blockTxs, blockInvalidTxs, blockTime,
 * its valid txs with receipts and txTime, its invalid txs with invalidTxTime. Two indexes stay
 * live: signHashes (duplicate detection must still refuse an archived tx) and blockByHash (so a
 * query by an archived block's hash can say where the block went).
 */
export interface ArchivedBlock {
  number: number
  entries: RawEntry[]
}

/** The world state as of one block, read in one LMDB read transaction; call close() when done. */
export interface WorldSnapshot {
  height: number
  /** block `height`'s hash */
  hash: Hex
  /** the root of the lanes stored with this state (equal to block `height`'s merkleRoot) */
  root: Hex
  /** every world-state entry (accounts, code, storage, contracts keyspaces) */
  entries(): Iterable<RawEntry>
  close(): void
}

/**
 * Keel's storage: one LMDB environment (keyspace.ts). Reads are synchronous and see the latest
 * committed data; writes are asynchronous and resolve once LMDB has committed them (visible to
 * every reader, and kept across kill -9; `flushed()` waits for the fsync as well).
 */
/** What the store reads: the same from the writer and from a reader in another thread (reader.ts). */
export interface StoreReads {
  /** the latest block this store shows: what a reader in another thread follows (reader.ts) */
  position(): { height: number; hash: Hex }
  /** number of the latest block; 0 = no block yet */
  height(): number
  /** issue 28: the world state before a recent block (repos/state-undo.ts), until `close`; undefined for an older one */
  stateBefore(number: number): PastState | undefined
  /** lowest block in the live store: 1 once a block exists (higher after archiving), 0 before */
  genesisNumber(): number
  getBlock(number: number): BlockHeader | undefined
  getBlockByHash(hash: Hex): BlockHeader | undefined
  /** valid tx hashes of the block, in block order ([] for an unknown block) */
  getBlockTxHashes(number: number): Hex[]
  /** invalid tx hashes recorded during the block's execution, in order */
  getBlockInvalidTxHashes(number: number): Hex[]

  getTx(hash: Hex): CommittedTx | undefined
  getReceipt(hash: Hex): Receipt | undefined
  getInvalidTx(hash: Hex): InvalidTx | undefined
  /** committed (valid or invalid, live or archived); a pending tx is the pool's (src/chain/pool.ts) */
  hasTx(hash: Hex): boolean
  /** hash of any committed or invalid tx with this (from, signHash): with the pool's, the duplicate-detection key */
  findBySignHash(from: Hex, signHash: Hex): Hex | undefined

  /** committed valid txs with timestamp in [startNs, endNs], in time order (then by hash), at most `limit` */
  txHashesByTime(startNs: bigint, endNs: bigint, limit: number): Hex[]
  /** invalid txs with timestamp in [startNs, endNs], in time order, at most `limit` */
  invalidTxHashesByTime(startNs: bigint, endNs: bigint, limit: number): Hex[]
  /** blocks whose writeTime is in [startNs, endNs] */
  blocksByTime(startNs: bigint, endNs: bigint): BlocksByTime
  /** number of committed valid txs */
  countTxs(): number
  /**
   * Transactions found through index `index` (keyspaces 30–33) under the key prefix `prefix`
   * (addressKey / extraIdKey), in live blocks `from`..`to`, in chain order (reversed when `backward`).
   */
  scanTxIndex(index: TxIndexName, prefix: Buffer, from: number, to: number, backward: boolean): Iterable<IndexedTx>
  /** invalid (discarded) transactions in the live store */
  countInvalidTxs(): number
  /** invalid txs in timestamp order, at most `limit` */
  listInvalidTxHashes(limit: number): Hex[]
  /** contracts created by `creator`, in deployment order */
  getDeployedList(creator: Hex): Hex[]
  /** the record of the issued TCert whose PEM is exactly these bytes */
  getTcert(pemBytes: Uint8Array): TcertRecord | undefined

  /** the batch and commit proof of a block ordered by consensus (undefined for a solo block or one not live) */
  getBlockBatch(number: number): BlockBatch | undefined

  /** the world state as of the latest committed block */
  readonly state: StateReader
  // ---- archive (src/archive/ drives these; each write is one bounded LMDB transaction)

  archiveRecord(): ArchiveRecord
  /** number of the archived block holding tx `hash` (valid or invalid), once archive_archive moved it */
  archivedBlockOf(hash: Hex): number | undefined
  /** number of the archived block with this hash (its blockByHash entry stays live for this answer) */
  archivedBlockOfHash(hash: Hex): number | undefined
  snapshotRequests(): { height: number; snapshotId: string }[]
}

/** The store: its reads and the writes of the one writer thread. */
export interface Store extends StoreReads {
  /** Durably records a TCert cert_getTCert issued; resolves once LMDB committed it. */
  putTcert(record: TcertRecord): Promise<void>

  /** A VP's consensus records (repos/consensus-log.ts, an LMDB environment of their own): all in one transaction, resolved once on disk (fsync), not only committed. */
  writeConsensus(writes: readonly ConsensusWrite[]): Promise<void>
  /** consensus records whose key starts with `prefix`, in key order */
  readConsensus(prefix?: string): Iterable<{ key: string; value: Uint8Array }>
  /** the current world-state root: the latest block's merkleRoot, or the genesis (or empty) state's root before any block */
  stateRoot(): Hex

  /** where pending transactions become durable before they are answered (pool-log.ts, `<ledger>/pool`) */
  readonly poolLog: PoolLog
  /**
   * pending txs a store of an older layout kept in keyspaces 13/14, in arrival order; the pool
   * moves them into its log, then calls dropLegacyPending
   */
  legacyPending(): SignedTx[]
  dropLegacyPending(): Promise<void>

  /** the root after applying `changes` to the latest committed state; writes nothing */
  stateRootAfter(changes: WorldChanges): Hex
  /** the same, with the hashing done by `hasher` (a worker thread) while the event loop serves others */
  stateRootAfterOn(hasher: StateHasher, changes: WorldChanges): Promise<Hex>
  /**
   * Writes the block, its txs, receipts, invalid txs, indexes, deployments, state changes and the
   * new root in ONE LMDB transaction. Throws (writing
   * nothing) unless header.number is height() + 1, header.parentHash is the previous block's hash
   * (ZERO_HASH for block 1), header.merkleRoot equals the root after `changes`, and the txs and
   * receipts carry this block's number, hash and their index. Calls run one at a time, in order.
   */
  commitBlock(block: BlockCommit): Promise<void>
  /** writes the genesis state once; the same alloc again is a no-op, another alloc throws */
  initGenesis(alloc: GenesisAccount[]): Promise<void>
  /** the world state right now, if it is still the state of block `height` (undefined once a later block committed) */
  worldAt(height: number): WorldSnapshot | undefined
  /** the raw entries of live block `number` */
  blockEntries(number: number): ArchivedBlock
  /** records the archive of `range` as started and moves the genesis to range.to + 1 (readers stop seeing the range at once) */
  startArchive(range: ArchivedRange): Promise<void>
  /** removes the blocks' entries and marks their txs archived; repeating it is harmless */
  removeArchived(blocks: ArchivedBlock[]): Promise<void>
  /** records the restore of `range` (the latest archived range) as started; readers still do not see it */
  startRestore(range: ArchivedRange): Promise<void>
  /** writes the blocks' entries back and unmarks their txs; repeating it is harmless */
  putRestored(blocks: ArchivedBlock[]): Promise<void>
  /** ends the operation in progress: an archive joins the ranges; a restore leaves them and lowers the genesis */
  finishArchiveOp(): Promise<void>
  putSnapshotRequest(height: number, snapshotId: string): Promise<void>
  removeSnapshotRequest(height: number): Promise<void>

  /** resolves when every write so far is fsynced (commits resolve earlier, at LMDB commit) */
  flushed(): Promise<void>
  close(): Promise<void>
}
