/**
 * The reads of the store: blocks, transactions, receipts, indexes, the world state, TCerts and the
 * archive's bookkeeping. The store (index.ts) extends it with the writes; another thread (a request
 * thread, src/front/) opens one of its own on the same environment with openStoreReader and moves
 * it along with `follow` as the writer announces each commit, so its reads see exactly what the
 * writer's do.
 */
import type { RootDatabase } from 'lmdb'
import type { BlockHeader, CommittedTx, Hex, InvalidTx, Receipt, StateReader } from '../domain.ts'
import { fixedBytes, ZERO_HASH } from './codec.ts'
import { type Dbs, openEnvironment, openKeyspaces } from './db.ts'
import { type ArchiveRecord, ArchiveRepo } from './repos/archive.ts'
import { type BlockBatch, BlockBatchesRepo } from './repos/block-batches.ts'
import { BlockTxsRepo } from './repos/block-txs.ts'
import { BlocksRepo } from './repos/blocks.ts'
import { DeployedRepo } from './repos/deployed.ts'
import { InvalidTxsRepo } from './repos/invalid-txs.ts'
import { MetaRepo } from './repos/meta.ts'
import { ReceiptsRepo } from './repos/receipts.ts'
import { SignHashesRepo } from './repos/sign-hashes.ts'
import { type PastState, StateUndoRepo } from './repos/state-undo.ts'
import { type TcertRecord, TcertsRepo } from './repos/tcerts.ts'
import { TxIndexesRepo } from './repos/tx-indexes.ts'
import { TxsRepo } from './repos/txs.ts'
import { WorldStateRepo } from './repos/world-state.ts'
import type { BlocksByTime, IndexedTx, StoreReads, TxIndexName } from './types.ts'

/** Where the writer is: what `follow` moves a reader of another thread to. */
export interface StoreTip {
  height: number
  hash: Hex
}

export class LmdbReader implements StoreReads {
  protected readonly meta: MetaRepo
  protected readonly blocks: BlocksRepo
  protected readonly blockTxs: BlockTxsRepo
  protected readonly txs: TxsRepo
  protected readonly receipts: ReceiptsRepo
  protected readonly invalidTxs: InvalidTxsRepo
  protected readonly signHashes: SignHashesRepo
  protected readonly deployed: DeployedRepo
  protected readonly tcerts: TcertsRepo
  protected readonly blockBatches: BlockBatchesRepo
  protected readonly world: WorldStateRepo
  protected readonly archive: ArchiveRepo
  protected readonly txIndexes: TxIndexesRepo
  protected readonly stateUndo: StateUndoRepo
  readonly state: StateReader

  protected tip: number
  protected tipHash: Hex
  protected archived: ArchiveRecord

  constructor(
    protected readonly env: RootDatabase,
    protected readonly dbs: Dbs,
  ) {
    this.meta = new MetaRepo(dbs.meta)
    this.blocks = new BlocksRepo(dbs.blocks, dbs.blockByHash, dbs.blockTime)
    this.blockTxs = new BlockTxsRepo(dbs.blockTxs, dbs.blockInvalidTxs)
    this.txs = new TxsRepo(dbs.txs, dbs.txTime)
    this.receipts = new ReceiptsRepo(dbs.receipts)
    this.invalidTxs = new InvalidTxsRepo(dbs.invalidTxs, dbs.invalidTxTime)
    this.signHashes = new SignHashesRepo(dbs.signHashes)
    this.deployed = new DeployedRepo(dbs.deployed)
    this.tcerts = new TcertsRepo(dbs.tcerts)
    this.blockBatches = new BlockBatchesRepo(dbs.blockBatches)
    this.world = new WorldStateRepo(dbs)
    this.archive = new ArchiveRepo(dbs.meta, dbs.snapshotRequests, dbs.archivedTxs)
    this.archived = this.archive.record()
    this.txIndexes = new TxIndexesRepo(dbs)
    this.stateUndo = new StateUndoRepo(dbs.stateUndo, dbs)
    this.state = this.world
    this.tip = this.blocks.lastNumber()
    this.tipHash = this.tip === 0 ? ZERO_HASH : this.blocks.get(this.tip)!.hash.toLowerCase()
  }

  // ---- following the writer from another thread

  /** the latest block this store shows (0 and the zero hash before any) */
  position(): StoreTip {
    return { height: this.tip, hash: this.tipHash }
  }

  /**
   * The writer committed up to `tip` (and may have changed the archive record): later reads see it.
   * lmdb-js keeps a read snapshot for a whole tick of this thread; it is renewed here so a block
   * just announced is never missed.
   */
  follow(tip: StoreTip): void {
    this.env.resetReadTxn()
    this.tip = tip.height
    this.tipHash = tip.hash
    this.archived = this.archive.record()
  }

  height(): number {
    return this.tip
  }

  genesisNumber(): number {
    return this.tip > 0 ? this.archived.genesis : 0
  }

  // lmdb-js commits on its own thread, so a block's records are readable a moment before
  // commitBlock resolves and `tip` moves; reads hide them until then, so nobody sees a receipt
  // whose block is not yet the chain height. Below the genesis, records of an archive or restore
  // in progress may still (or already) be there; reads hide them the same way.
  protected live(number: number): boolean {
    return number <= this.tip && number >= this.archived.genesis
  }

  getBlock(number: number): BlockHeader | undefined {
    return this.live(number) ? this.blocks.get(number) : undefined
  }

  getBlockByHash(hash: Hex): BlockHeader | undefined {
    const number = this.blocks.numberOf(hash)
    return number === undefined || !this.live(number) ? undefined : this.blocks.get(number)
  }

  getBlockTxHashes(number: number): Hex[] {
    return this.live(number) ? this.blockTxs.validHashes(number) : []
  }

  getBlockInvalidTxHashes(number: number): Hex[] {
    return this.live(number) ? this.blockTxs.invalidHashes(number) : []
  }

  blocksByTime(startNs: bigint, endNs: bigint): BlocksByTime {
    return this.blocks.byWriteTime(startNs, endNs, this.tip, this.archived.genesis)
  }

  getTx(hash: Hex): CommittedTx | undefined {
    const tx = this.txs.get(hash)
    return tx === undefined || !this.live(tx.blockNumber) ? undefined : tx
  }

  getReceipt(hash: Hex): Receipt | undefined {
    const receipt = this.receipts.get(hash)
    return receipt === undefined || !this.live(receipt.blockNumber) ? undefined : receipt
  }

  getInvalidTx(hash: Hex): InvalidTx | undefined {
    const invalid = this.invalidTxs.get(hash)
    return invalid === undefined || !this.live(invalid.blockNumber) ? undefined : invalid
  }

  hasTx(hash: Hex): boolean {
    try {
      return this.hasKey(fixedBytes(hash, 32, 'hash'))
    } catch {
      return false
    }
  }

  protected hasKey(key: Buffer): boolean {
    return this.txs.has(key) || this.invalidTxs.has(key) || this.archive.hasArchivedTx(key)
  }

  findBySignHash(from: Hex, signHash: Hex): Hex | undefined {
    const hash = this.signHashes.find(from, signHash)
    // stores written before SIGFAILED transactions stopped reserving their (from, sign hash) hold some
    if (hash !== undefined && this.getInvalidTx(hash)?.invalidMsg === 'SIGFAILED') return undefined
    return hash
  }

  txHashesByTime(startNs: bigint, endNs: bigint, limit: number): Hex[] {
    return this.txs.hashesByTime(startNs, endNs, limit).filter((hash) => this.getTx(hash) !== undefined)
  }

  invalidTxHashesByTime(startNs: bigint, endNs: bigint, limit: number): Hex[] {
    return this.invalidTxs.hashesByTime(startNs, endNs, limit).filter((hash) => this.getInvalidTx(hash) !== undefined)
  }

  countTxs(): number {
    return this.txs.count()
  }

  countInvalidTxs(): number {
    return this.invalidTxs.count()
  }

  *scanTxIndex(index: TxIndexName, prefix: Buffer, from: number, to: number, backward: boolean): Generator<IndexedTx> {
    const low = Math.max(from, this.archived.genesis, 1)
    const high = Math.min(to, this.tip)
    for (const found of this.txIndexes.scan(index, prefix, low, high, backward)) if (this.live(found.block)) yield found
  }

  listInvalidTxHashes(limit: number): Hex[] {
    return this.invalidTxs.list(limit).filter((hash) => this.getInvalidTx(hash) !== undefined)
  }

  getDeployedList(creator: Hex): Hex[] {
    return this.deployed.list(creator)
  }

  getTcert(pemBytes: Uint8Array): TcertRecord | undefined {
    return this.tcerts.get(pemBytes)
  }

  getBlockBatch(number: number): BlockBatch | undefined {
    return this.live(number) ? this.blockBatches.get(number) : undefined
  }

  archiveRecord(): ArchiveRecord {
    return this.archived
  }

  archivedBlockOf(hash: Hex): number | undefined {
    const number = this.archive.archivedBlockOf(hash)
    if (number !== undefined) return number
    // moved out logically (below the genesis) but not yet removed: an archive still running
    const present = this.txs.get(hash)?.blockNumber ?? this.invalidTxs.get(hash)?.blockNumber
    return present !== undefined && present < this.archived.genesis ? present : undefined
  }

  archivedBlockOfHash(hash: Hex): number | undefined {
    const number = this.blocks.numberOf(hash)
    return number !== undefined && number < this.archived.genesis ? number : undefined
  }

  /**
   * issue 28: the world state before block `number`, for the last STATE_UNDO_BLOCKS blocks
   * (repos/state-undo.ts), read from one snapshot until `close`; undefined for an older block.
   */
  stateBefore(number: number): PastState | undefined {
    if (!this.live(number)) return undefined
    const transaction = this.env.useReadTransaction()
    try {
      const past = this.stateUndo.stateBefore(number, transaction)
      if (past === undefined) transaction.done()
      return past
    } catch (error) {
      transaction.done()
      throw error
    }
  }

  snapshotRequests(): { height: number; snapshotId: string }[] {
    return this.archive.snapshotRequests()
  }
}

/** A reader of the store at `path` for another thread than the writer's (see LmdbReader.follow). */
export function openStoreReader(path: string): { reader: LmdbReader; close(): Promise<void> } {
  const env = openEnvironment(path, undefined)
  const reader = new LmdbReader(env, openKeyspaces(env))
  return { reader, close: () => env.close() }
}
