/** What the query handlers read: the committed chain (implemented by the store, src/store/). */
import type { BlockHeader, CommittedTx, Hex, InvalidTx, Receipt, StateReader } from '../domain.ts'
import type { ArchiveRecord, IndexedTx, PastState, TxIndexName } from '../store/index.ts'
import type { ChainBounds } from './block-number.ts'

export interface ChainReader extends ChainBounds {
  getBlock(number: number): BlockHeader | undefined
  getBlockByHash(hash: Hex): BlockHeader | undefined
  /** valid transactions of a block, in order */
  getBlockTxHashes(number: number): Hex[]
  getTx(hash: Hex): CommittedTx | undefined
  getReceipt(hash: Hex): Receipt | undefined
  getInvalidTx(hash: Hex): InvalidTx | undefined
  invalidTxHashesByTime(startNs: bigint, endNs: bigint, limit: number): Hex[]
  blocksByTime(startNs: bigint, endNs: bigint): { count: number; first?: number; last?: number }
  countTxs(): number
  /** transactions through an index of the store (keyspaces 30–33), in chain order or reversed */
  scanTxIndex(index: TxIndexName, prefix: Buffer, from: number, to: number, backward: boolean): Iterable<IndexedTx>
  countInvalidTxs(): number
  /** invalid transactions of a block, in execution order */
  getBlockInvalidTxHashes(number: number): Hex[]
  listInvalidTxHashes(limit: number): Hex[]
  getDeployedList(creator: Hex): Hex[]
  /** number of the archived block holding tx `hash`, once archive_archive moved it out */
  archivedBlockOf(hash: Hex): number | undefined
  /** number of the archived block with this hash */
  archivedBlockOfHash(hash: Hex): number | undefined
  archiveRecord(): ArchiveRecord
  readonly state: StateReader
  /** issue 28: the world state before a recent block (store/repos/state-undo.ts), until `close`; undefined for an older one */
  stateBefore(number: number): PastState | undefined
}
