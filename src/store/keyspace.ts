/**
 * The LMDB keyspace (style.md §7): a numbered, append-only list. Each number is one named
 * sub-database of the single LMDB environment, and the number IS its LMDB name, so renaming an
 * entry here never moves data. Numbers are never reused: a retired entry stays as a comment with
 * the version that retired it. Every block's entries are written in one LMDB transaction
 * (index.ts commitBlock), so the sub-databases never disagree after a crash.
 *
 * Notation: `hash32` / `addr20` are raw bytes of a `0x` hash / address; `u32be`, `u64be` are
 * big-endian unsigned integers; `time64` is an int64 nanosecond time plus 2^63 as u64be, so that
 * byte order is time order; `‖` is concatenation; `u32` keys use lmdb-js's native uint32 keys;
 * `msgpack` values are lmdb-js's msgpackr with the bigint extension (bigints round-trip exactly).
 * One repository module per keyspace (or per group of keyspaces written together) in ./repos.
 */
export const Keyspace = {
  /**
   * 'schema' -> 1; 'lanes' -> Uint8Array(2048), the world-state LtHash lanes (state-hash.ts); 'genesis' -> GenesisRecord (msgpack);
   * 'archive' -> ArchiveRecord (msgpack, repos/archive.ts): the live genesis block, the archived ranges, the archive/restore in progress;
   * 'txIndexes' -> 1 once keyspaces 30–33 hold every live block (a store written before them is indexed at open)
   */
  meta: 1,
  /** u32 block number -> BlockHeader (msgpack) */
  blocks: 2,
  /** hash32 block hash -> block number (msgpack) */
  blockByHash: 3,
  /** u32 block number -> hash32 ‖ hash32 ‖ … valid tx hashes in block order */
  blockTxs: 4,
  /** u32 block number -> hash32 ‖ hash32 ‖ … invalid tx hashes in execution order */
  blockInvalidTxs: 5,
  /** hash32 tx hash -> CommittedTx (record: record-codec.ts; entries written before it are plain msgpack) */
  txs: 6,
  /** hash32 tx hash -> Receipt (record) */
  receipts: 7,
  /** hash32 tx hash -> InvalidTx (record) */
  invalidTxs: 8,
  /** addr20 from ‖ hash32 signHash -> hash32 tx hash, for committed and invalid txs (duplicate detection, ARCHITECTURE.md decision 4; the pool keeps pending ones; older layouts wrote pending ones too) */
  signHashes: 9,
  /** time64 tx timestamp ‖ hash32 tx hash -> empty (committed valid txs) */
  txTime: 10,
  /** time64 tx timestamp ‖ hash32 tx hash -> empty (invalid txs) */
  invalidTxTime: 11,
  /** time64 block writeTime ‖ u32be block number -> empty */
  blockTime: 12,
  /**
   * arrival sequence number (lmdb-js ordered number key) -> SignedTx (msgpack); pending txs in arrival order.
   * Retired for new records (issue 14): pending txs are durable in the pool log (`<ledger>/pool`, pool-log.ts),
   * a group commit of its own; entries found here (an older layout) are moved there at start, then removed.
   */
  pending: 13,
  /** hash32 tx hash -> arrival sequence number (msgpack). Retired with 13. */
  pendingByHash: 14,
  /** addr20 creator ‖ u32be deployment index -> addr20 contract address */
  deployed: 15,
  /** addr20 -> canonical account bytes (state-codec.ts encodeAccount) */
  accounts: 16,
  /** addr20 -> contract code bytes (absent = no code) */
  code: 17,
  /** addr20 ‖ hash32 slot -> 32-byte value (absent = zero) */
  storage: 18,
  /** addr20 -> canonical contract meta bytes (state-codec.ts encodeContractMeta) */
  contracts: 19,
  /** sha256 of the certificate's PEM bytes (32 bytes) -> TcertRecord (msgpack): every TCert cert_getTCert issued */
  tcerts: 20,
  /** u32 trigger height -> snapshot id string (msgpack); snapshots requested for a block not written yet (src/archive/) */
  snapshotRequests: 21,
  /** hash32 tx hash -> u32be number of its archived block; valid and invalid txs moved out by archive_archive */
  archivedTxs: 22,
  /**
   * utf8 key chosen by the consensus layer (e.g. `vote/…`) -> record bytes; a VP's own votes, view and checkpoints.
   * Retired for new records (2026-11-24): the consensus log has its own environment, `<ledger>/consensus`
   * (repos/consensus-log.ts), with the same keys and values; records found here are moved there at open.
   */
  consensus: 23,
  /** u32 block number -> BlockBatch (msgpack: view, hash32 ‖ hash32 ‖ … every tx the batch named, in order, proof bytes, the batch's own time (absent in older records) as u64be, which the proof signs); blocks ordered by consensus only (repos/block-batches.ts) */
  blockBatches: 24,
  /**
   * Transaction indexes for the SDK's filtered and paged queries (repos/tx-indexes.ts), written with
   * their block; `pos` is u32be block number ‖ u32be index of the transaction in its block (among
   * the block's invalid transactions for 33), so key order is chain order.
   * 30: addr20 sender ‖ pos -> hash32 (valid txs)
   */
  txsByFrom: 30,
  /** addr20 receiver ‖ pos -> hash32 (valid txs): the receiver is `to`, or for a deployment the contract it created */
  txsByReceiver: 31,
  /** extra id element ‖ pos -> hash32 (valid txs): 0x00 ‖ int64 as u64be + 2^63, 0x01 ‖ u16be length ‖ utf8 (≤ 255 bytes), 0x02 ‖ keccak256(utf8) (longer) */
  txsByExtraId: 32,
  /** addr20 `to` ‖ pos -> hash32 (invalid txs; a deployment's `to` is the zero address) */
  invalidTxsByTo: 33,
  /**
   * issue 28: u32 block number -> StateUndo (repos/state-undo.ts, binary): the world-state entries
   * the block changed with their bytes before it, and the order it executed its valid and discarded
   * transactions in; written with the block, kept for the last STATE_UNDO_BLOCKS (128) blocks, so
   * debug_traceTransaction re-executes on the state before a recent block
   */
  stateUndo: 34,
} as const

export type KeyspaceName = keyof typeof Keyspace

export interface KeyspaceEncoding {
  keyEncoding: 'binary' | 'uint32' | 'ordered-binary'
  /** `record`: record-codec.ts's tagged form (hex as bytes, keys as one byte; its v1 msgpack and plain msgpack still read) */
  encoding: 'msgpack' | 'binary' | 'record'
}

const msgpackBy = (keyEncoding: KeyspaceEncoding['keyEncoding']): KeyspaceEncoding => ({ keyEncoding, encoding: 'msgpack' })
const binaryBy = (keyEncoding: KeyspaceEncoding['keyEncoding']): KeyspaceEncoding => ({ keyEncoding, encoding: 'binary' })
const recordBy = (keyEncoding: KeyspaceEncoding['keyEncoding']): KeyspaceEncoding => ({ keyEncoding, encoding: 'record' })

/** How each keyspace's keys and values are encoded; changing one for an existing number is a data migration. */
export const keyspaceEncoding: Record<KeyspaceName, KeyspaceEncoding> = {
  meta: msgpackBy('ordered-binary'),
  blocks: msgpackBy('uint32'),
  blockByHash: msgpackBy('binary'),
  blockTxs: binaryBy('uint32'),
  blockInvalidTxs: binaryBy('uint32'),
  txs: recordBy('binary'),
  receipts: recordBy('binary'),
  invalidTxs: recordBy('binary'),
  signHashes: binaryBy('binary'),
  txTime: binaryBy('binary'),
  invalidTxTime: binaryBy('binary'),
  blockTime: binaryBy('binary'),
  pending: msgpackBy('ordered-binary'),
  pendingByHash: msgpackBy('binary'),
  deployed: binaryBy('binary'),
  accounts: binaryBy('binary'),
  code: binaryBy('binary'),
  storage: binaryBy('binary'),
  contracts: binaryBy('binary'),
  tcerts: msgpackBy('binary'),
  snapshotRequests: msgpackBy('uint32'),
  archivedTxs: binaryBy('binary'),
  consensus: binaryBy('ordered-binary'),
  blockBatches: msgpackBy('uint32'),
  txsByFrom: binaryBy('binary'),
  txsByReceiver: binaryBy('binary'),
  txsByExtraId: binaryBy('binary'),
  invalidTxsByTo: binaryBy('binary'),
  stateUndo: binaryBy('uint32'),
}

/** Layout version in meta 'schema'; a store written with another version is refused at open. */
export const SCHEMA_VERSION = 1
