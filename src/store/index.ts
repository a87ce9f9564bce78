/**
 * Keel's storage layer: one LMDB environment (lmdb-js), keyspace.ts for the layout, one
 * repository per keyspace in ./repos, the world-state root in state-hash.ts.
 *
 * Pending transactions are not in LMDB: they become durable in the pool log (pool-log.ts, a group
 * commit of its own), so a submission never waits behind a block commit.
 *
 * Writes:
 * - commitBlock / initGenesis: an lmdb-js *child* transaction, so an exception anywhere inside
 *   (an unencodable record, a failed check) aborts everything the block wrote, while txs queued in
 *   the same batch still commit. They run one at a time, in call order.
 * - archive moves (startArchive … finishArchiveOp): plain lmdb-js transactions of a bounded batch
 *   of old blocks each, driven by src/archive/service.ts. They touch blocks below the tip only,
 *   so they interleave with commitBlock freely; meta 'archive' (the genesis and the operation in
 *   progress) is what keeps readers and a restart consistent between them.
 *
 * Why one file of ~600 lines: the write paths above share the store's own state (the tip, the
 * state lanes, the root planned by stateRootAfter, the writes in flight) and its one exclusive
 * queue; split apart, each part would reach into the others' fields.
 */
import type { RootDatabase } from 'lmdb'
import { keccak256 } from '../crypto/hash.ts'
import type { Hex, Receipt, SignedTx, WorldChanges } from '../domain.ts'
import { failpoint } from '../failpoints.ts'
import { turnBudget } from '../turns.ts'
import { bytesToHex, EMPTY, fixedBytes, u32be } from './codec.ts'
import { applyWrites, type Db, type Dbs, ledgerWrite, openEnvironment, openKeyspaces, type Write } from './db.ts'
import { Keyspace, type KeyspaceName, keyspaceEncoding, SCHEMA_VERSION } from './keyspace.ts'
import { openPoolLog, type PoolLog } from './pool-log.ts'
import { LmdbReader } from './reader.ts'
import type { ArchivedRange, ArchiveRecord } from './repos/archive.ts'
import { ConsensusLogRepo, type ConsensusWrite } from './repos/consensus-log.ts'
import { MetaRepo } from './repos/meta.ts'
import { PendingRepo } from './repos/pending.ts'
import { signKey } from './repos/sign-hashes.ts'
import { encodeStateUndo } from './repos/state-undo.ts'
import type { TcertRecord } from './repos/tcerts.ts'
import { timeKey } from './repos/time-index.ts'
import { indexEntries } from './repos/tx-indexes.ts'
import { keyspaceOfKind } from './repos/world-state.ts'
import { EntryKind, type EntryKindValue, encodeAccount } from './state-codec.ts'
import { addLanes, changeLanes, emptyLanes, lanesFromBytes, lanesRoot } from './state-hash.ts'
import type { StateHasher } from './state-hasher.ts'
import type { ArchivedBlock, BlockCommit, GenesisAccount, OpenStoreOptions, RawEntry, Store, WorldSnapshot } from './types.ts'
import { applyDiffs, type ChangedEntry, diffWorld, diffWorldInTurns, type EntryDiff, newContracts, sameChanges } from './world.ts'

export { ZERO_HASH } from './codec.ts'
export { Keyspace } from './keyspace.ts'
export type { PoolLog } from './pool-log.ts'
export { type LmdbReader, openStoreReader, type StoreTip } from './reader.ts'
export type { ArchivedRange, ArchiveRecord } from './repos/archive.ts'
export type { BlockBatch } from './repos/block-batches.ts'
export type { ConsensusWrite } from './repos/consensus-log.ts'
export { type PastState, STATE_UNDO_BLOCKS } from './repos/state-undo.ts'
export type { TcertRecord } from './repos/tcerts.ts'
export { addressKey, extraIdKey } from './repos/tx-indexes.ts'
export { EMPTY_STATE_ROOT, hashedEntryCount } from './state-hash.ts'
export type {
  ArchivedBlock,
  BlockCommit,
  BlocksByTime,
  GenesisAccount,
  IndexedTx,
  OpenStoreOptions,
  RawEntry,
  Store,
  StoreReads,
  TxIndexName,
  WorldSnapshot,
} from './types.ts'
export { rootOfEntries } from './world.ts'

/**
 * Opens (creating if needed) the store in directory `path`. Refuses a store written with another
 * layout version, or whose saved world-state root disagrees with its latest block's merkleRoot.
 */
export async function openStore(path: string, options: OpenStoreOptions = {}): Promise<Store> {
  const root = openEnvironment(path, options.mapSizeBytes)
  try {
    const dbs = openKeyspaces(root)
    const meta = new MetaRepo(dbs.meta)
    const schema = meta.schema()
    if (schema === undefined) await meta.putSchema(SCHEMA_VERSION)
    else if (schema !== SCHEMA_VERSION)
      throw new Error(`openStore: ${path} has store layout ${schema}; this build reads layout ${SCHEMA_VERSION}`)
    const store = new LmdbStore(root, dbs, await ConsensusLogRepo.open(path, dbs.consensus), openPoolLog(path), path)
    await store.ensureTxIndexes()
    return store
  } catch (error) {
    await root.close()
    throw error
  }
}

/** meta 'txIndexes' once keyspaces 30–33 hold every live block */
const TX_INDEXES_VERSION = 1
/** blocks indexed per LMDB transaction when a store written before the indexes is opened */
const INDEX_BATCH_BLOCKS = 500

/** A stateRootAfter result kept for the commitBlock that usually follows with the same changes. */
interface RootPlan {
  stateVersion: number
  diffs: EntryDiff[]
  lanes: Uint16Array
  /** every entry the changes named, to tell that commitBlock got the same changes */
  entries: ChangedEntry[]
}

class LmdbStore extends LmdbReader implements Store {
  private readonly pending: PendingRepo
  /** LMDB database by keyspace number, for raw entries */
  private readonly bySpace: Map<number, { db: Db; uint32: boolean }>

  private lanes: Uint16Array
  private root: Hex
  /** bumped by every state write, so a RootPlan from before it is not reused */
  private stateVersion = 0
  private plan: RootPlan | undefined
  /** commitBlock/initGenesis calls not finished yet */
  private writesInFlight = 0
  private queue: Promise<void> = Promise.resolve()
  private closed = false

  constructor(
    env: RootDatabase,
    dbs: Dbs,
    private readonly consensusLog: ConsensusLogRepo,
    readonly poolLog: PoolLog,
    /** the store's directory, named when a write fails */
    private readonly path: string,
  ) {
    super(env, dbs)
    this.pending = new PendingRepo(dbs.pending, dbs.pendingByHash)
    this.bySpace = new Map(
      (Object.keys(Keyspace) as KeyspaceName[]).map((name) => [
        Keyspace[name],
        { db: dbs[name], uint32: keyspaceEncoding[name].keyEncoding === 'uint32' },
      ]),
    )
    this.lanes = this.meta.lanes() ?? emptyLanes()
    this.root = lanesRoot(this.lanes)
    if (this.tip > 0) {
      const expected = this.blocks.get(this.tip)!.merkleRoot.toLowerCase()
      if (expected !== this.root)
        throw new Error(`openStore: saved state root ${this.root} differs from block ${this.tip}'s merkleRoot ${expected}`)
    }
  }

  /**
   * Builds keyspaces 30–33 for every live block of a store written before they existed (or whose
   * build was cut short), a batch of blocks per LMDB transaction; then records that they hold all.
   */
  async ensureTxIndexes(): Promise<void> {
    if (this.meta.txIndexes() === TX_INDEXES_VERSION) return
    if (this.tip > 0) {
      await this.txIndexes.clear()
      for (let first = this.archived.genesis; first <= this.tip; first += INDEX_BATCH_BLOCKS) {
        const last = Math.min(this.tip, first + INDEX_BATCH_BLOCKS - 1)
        await this.env.transaction(() => {
          for (let number = first; number <= last; number++) void applyWrites(this.rawWrites(this.storedIndexEntries(number)))
        })
      }
    }
    await this.meta.putTxIndexes(TX_INDEXES_VERSION)
  }

  /** The index entries of a stored block, from its records. */
  private storedIndexEntries(number: number): RawEntry[] {
    const txs = this.blockTxs.validHashes(number).map((hash) => this.txs.get(hash)!)
    const receipts = txs.map(({ tx }) => this.receipts.get(tx.hash)!)
    const invalid = this.blockTxs.invalidHashes(number).map((hash) => this.invalidTxs.get(hash)!)
    return indexEntries(number, txs, receipts, invalid)
  }

  private rawWrites(entries: readonly RawEntry[]): Write[] {
    return entries.map((entry) => {
      const { db, key } = this.placeOf(entry)
      return { db, key, value: entry.value }
    })
  }

  // ---- TCerts

  async putTcert(record: TcertRecord): Promise<void> {
    this.assertOpen()
    await this.tcerts.put(record)
  }

  // ---- consensus log (a VP's own votes, view, checkpoints)

  /** one transaction, resolved once on disk */
  async writeConsensus(writes: readonly ConsensusWrite[]): Promise<void> {
    this.assertOpen()
    await this.consensusLog.write(writes)
  }

  readConsensus(prefix?: string): Generator<{ key: string; value: Uint8Array }> {
    return this.consensusLog.read(prefix)
  }

  // ---- state

  stateRoot(): Hex {
    return this.root
  }

  stateRootAfter(changes: WorldChanges): Hex {
    this.assertRootable('stateRootAfter')
    const { diffs, entries } = diffWorld(this.world, changes)
    return this.planRoot(diffs, changeLanes(diffs), entries)
  }

  async stateRootAfterOn(hasher: StateHasher, changes: WorldChanges): Promise<Hex> {
    const version = this.stateVersion
    this.assertRootable('stateRootAfterOn')
    const { diffs, entries } = await diffWorldInTurns(this.world, changes, turnBudget())
    if (this.stateVersion !== version) throw new Error('stateRootAfterOn: the state changed while its changes were being read')
    const delta = await hasher.changeLanes(diffs)
    if (this.stateVersion !== version) throw new Error('stateRootAfterOn: the state changed while its root was being hashed')
    return this.planRoot(diffs, delta, entries)
  }

  /** The entries `changes` make differ from the latest committed state (read here, on this thread). */
  /** a root relative to the latest committed state: refused while a write of the state is in flight */
  private assertRootable(caller: string): void {
    this.assertOpen()
    if (this.writesInFlight > 0) {
      throw new Error(`${caller}: a commitBlock/initGenesis is still in flight; the root is relative to the latest committed state`)
    }
  }

  /** Keeps the lanes after `diffs` for the commitBlock that usually follows; returns their root. */
  private planRoot(diffs: EntryDiff[], delta: Uint16Array, entries: ChangedEntry[]): Hex {
    const lanes = addLanes(this.lanes, delta)
    this.plan = { stateVersion: this.stateVersion, diffs, lanes, entries }
    return lanesRoot(lanes)
  }

  /**
   * The diffs of `changes` and the lanes after them. The caller may have changed the changes since
   * the root was planned, so they are checked again; when they still name the same entries with the
   * same bytes and the state has not moved (the usual case: the producer asked for the root just
   * before), the planned diffs and lanes are used as they are, without reading the state again.
   */
  private async diffsAndLanes(
    changes: WorldChanges,
    turn: () => Promise<void> | undefined,
  ): Promise<{ diffs: EntryDiff[]; lanes: Uint16Array }> {
    const plan = this.plan
    this.plan = undefined
    if (plan !== undefined && plan.stateVersion === this.stateVersion) {
      const version = this.stateVersion
      if ((await sameChanges(changes, plan.entries, turn)) && this.stateVersion === version) return { diffs: plan.diffs, lanes: plan.lanes }
    }
    const { diffs } = await diffWorldInTurns(this.world, changes, turn)
    return { diffs, lanes: applyDiffs(this.lanes, diffs) }
  }

  // ---- pending (an older layout's; the pool log holds them now)

  legacyPending(): SignedTx[] {
    return this.pending.all()
  }

  async dropLegacyPending(): Promise<void> {
    this.assertOpen()
    await this.env.transaction(() => this.pending.clear())
  }

  // ---- commit

  commitBlock(block: BlockCommit): Promise<void> {
    return this.exclusive(() => this.commit(block))
  }

  private async commit(block: BlockCommit): Promise<void> {
    failpoint('store.commitBlock')
    const { header, txs, receipts, invalid, changes } = block
    const number = header.number
    const expected = this.tip + 1
    if (number !== expected) throw new Error(`commitBlock: block number ${number} is not height + 1 (${expected})`)
    if (typeof header.parentHash !== 'string' || header.parentHash.toLowerCase() !== this.tipHash) {
      const parent = this.tip === 0 ? 'the zero hash (first block)' : `block ${this.tip}'s hash ${this.tipHash}`
      throw new Error(`commitBlock: block ${number} parentHash ${header.parentHash} is not ${parent}`)
    }
    const blockHash = fixedBytes(header.hash, 32, 'header.hash').toString('hex')
    if (this.blocks.numberOf(header.hash) !== undefined) throw new Error(`commitBlock: block hash ${header.hash} is already stored`)
    if (header.txCount !== txs.length) throw new Error(`commitBlock: header.txCount ${header.txCount} but ${txs.length} txs`)
    if (receipts.length !== txs.length) throw new Error(`commitBlock: ${receipts.length} receipts for ${txs.length} txs`)

    // long blocks are checked and encoded in turns of about a millisecond (src/turns.ts); the write
    // transaction itself only copies bytes
    const turn = turnBudget()
    const seen = new Set<string>()
    const fresh = (hash: Hex, what: string): Buffer => {
      const key = fixedBytes(hash, 32, what)
      const hex = key.toString('hex')
      if (seen.has(hex)) throw new Error(`commitBlock: tx ${hash} appears twice in block ${number}`)
      seen.add(hex)
      if (this.txs.has(key) || this.invalidTxs.has(key) || this.archive.hasArchivedTx(key))
        throw new Error(`commitBlock: tx ${hash} is already committed`)
      return key
    }
    const validKeys: Buffer[] = []
    for (const [i, t] of txs.entries()) {
      const key = fresh(t.tx.hash, `txs[${i}].tx.hash`)
      if (t.blockNumber !== number || t.txIndex !== i || t.blockHash?.toLowerCase().slice(2) !== blockHash) {
        throw new Error(
          `commitBlock: txs[${i}] says block ${t.blockNumber} ${t.blockHash} index ${t.txIndex}, expected block ${number} ${header.hash} index ${i}`,
        )
      }
      const r = receipts[i]
      if (r.txHash?.toLowerCase().slice(2) !== key.toString('hex') || r.blockNumber !== number || r.txIndex !== i) {
        throw new Error(`commitBlock: receipts[${i}] (tx ${r.txHash}, block ${r.blockNumber}, index ${r.txIndex}) does not match txs[${i}]`)
      }
      validKeys.push(key)
      await turn()
    }
    const invalidKeys = invalid.map((t, i) => {
      const key = fresh(t.tx.hash, `invalid[${i}].tx.hash`)
      if (t.blockNumber !== number) throw new Error(`commitBlock: invalid[${i}].blockNumber ${t.blockNumber}, expected ${number}`)
      return key
    })
    // the batch may name more than the block holds: a tx already committed (or named twice) is
    // skipped at execution on every node alike; but every tx of the block must come from it
    const batchKeys = block.batch?.txHashes.map((hash, i) => fixedBytes(hash, 32, `batch.txHashes[${i}]`))
    if (batchKeys !== undefined) {
      const named = new Set(batchKeys.map((key) => key.toString('hex')))
      for (const hex of seen) if (!named.has(hex)) throw new Error(`commitBlock: tx 0x${hex} of block ${number} is not in its batch`)
    }
    const validSignKeys = txs.map((t) => signKey(t.tx.from, t.tx.signHash))
    // a transaction whose signature failed reserves nothing: anyone can forge such a copy of a
    // transaction in flight, and it must not stop the genuine one (ARCHITECTURE.md decision 4)
    const invalidSignKeys = invalid.map((t) => (t.invalidMsg === 'SIGFAILED' ? undefined : signKey(t.tx.from, t.tx.signHash)))

    const { diffs, lanes } = await this.diffsAndLanes(changes, turn)
    const root = lanesRoot(lanes)
    if (typeof header.merkleRoot !== 'string' || header.merkleRoot.toLowerCase() !== root) {
      throw new Error(`commitBlock: header.merkleRoot ${header.merkleRoot} is not the state root after the block's changes (${root})`)
    }
    const deployments = this.deploymentsOf(diffs, changes, receipts)
    const indexed = indexEntries(number, txs, receipts, invalid)

    // every record's bytes before the write transaction: one that cannot be encoded fails the block here
    const encodedHeader = this.blocks.encode(header)
    const encodedTxs: Buffer[] = []
    const encodedReceipts: Buffer[] = []
    for (let i = 0; i < txs.length; i++) {
      encodedTxs.push(this.txs.encode(txs[i]))
      encodedReceipts.push(this.receipts.encode(receipts[i]))
      await turn()
    }
    const encodedInvalid = invalid.map((t) => this.invalidTxs.encode(t))

    // every write keyed and encoded first (any of them may fail the block here, before one is made);
    // then made in one synchronous run, so lmdb-js commits them as one transaction (db.ts applyWrites)
    const writes: Write[] = []
    this.blocks.writes(writes, header, encodedHeader)
    this.blockTxs.writes(writes, number, validKeys, invalidKeys)
    if (block.batch !== undefined && batchKeys !== undefined)
      this.blockBatches.writes(writes, number, { ...block.batch, txKeys: batchKeys })
    for (let i = 0; i < txs.length; i++) {
      this.txs.writes(writes, validKeys[i], txs[i], encodedTxs[i])
      this.receipts.writes(writes, validKeys[i], receipts[i], encodedReceipts[i])
    }
    for (let i = 0; i < invalid.length; i++) this.invalidTxs.writes(writes, invalidKeys[i], invalid[i], encodedInvalid[i])
    const signed = validSignKeys.map((key, i) => ({ key, hash: validKeys[i] }))
    for (const [i, key] of invalidSignKeys.entries()) if (key !== undefined) signed.push({ key, hash: invalidKeys[i] })
    this.signHashes.writesIfAbsent(writes, signed)
    for (const d of diffs) this.world.writes(writes, d.kind, d.key, d.next)
    // issue 28: the bytes these writes replace, for re-executing recent blocks (keyspace 34)
    this.stateUndo.writes(writes, number, encodeStateUndo(diffs, block.executionOrder))
    this.deployed.writes(writes, deployments)
    writes.push(...this.rawWrites(indexed))
    this.meta.lanesWrites(writes, lanes)
    await ledgerWrite(applyWrites(writes), this.path)
    this.tip = number
    this.tipHash = `0x${blockHash}`
    this.setState(lanes, root)
  }

  /** Contracts new in this block with their creators, in the order of the receipts that created them. */
  private deploymentsOf(diffs: EntryDiff[], changes: WorldChanges, receipts: Receipt[]): { creator: Hex; address: Hex }[] {
    const created = newContracts(diffs)
    if (created.length === 0) return []
    const metaByAddress = new Map<Hex, Hex>()
    for (const [address, meta] of changes.contracts) metaByAddress.set(address.toLowerCase(), meta.creator)
    const receiptIndex = new Map<Hex, number>()
    receipts.forEach((r, i) => {
      if (typeof r.contractAddress === 'string') receiptIndex.set(r.contractAddress.toLowerCase(), i)
    })
    const rank = (address: Hex): number => receiptIndex.get(address) ?? Number.MAX_SAFE_INTEGER
    return created
      .map((address, order) => ({ address, order, creator: metaByAddress.get(address)! }))
      .sort((a, b) => rank(a.address) - rank(b.address) || a.order - b.order)
      .map(({ address, creator }) => ({ address, creator }))
  }

  async initGenesis(alloc: GenesisAccount[]): Promise<void> {
    return this.exclusive(async () => {
      const accounts = new Map<Hex, { balance: bigint; nonce: bigint }>()
      const entries: Buffer[] = []
      for (const [i, { address, balance }] of alloc.entries()) {
        const key = fixedBytes(address, 20, `alloc[${i}].address`)
        const lower = bytesToHex(key)
        if (accounts.has(lower)) throw new Error(`initGenesis: address ${lower} appears twice in the alloc`)
        const account = { balance, nonce: 0n }
        entries.push(Buffer.concat([key, encodeAccount(account, `alloc[${i}]`)]))
        accounts.set(lower, account)
      }
      entries.sort(Buffer.compare)
      const digest = bytesToHex(keccak256(Buffer.concat(entries)))
      const existing = this.meta.genesis()
      if (existing !== undefined) {
        if (existing.digest === digest) return
        throw new Error(
          `initGenesis: this store already holds a different genesis (${existing.accounts} accounts, digest ${existing.digest}); ` +
            `refusing alloc of ${accounts.size} accounts (digest ${digest}). Use a fresh data directory for another genesis.`,
        )
      }
      if (this.tip > 0) throw new Error(`initGenesis: the store already has ${this.tip} blocks and no genesis record`)
      const { diffs } = diffWorld(this.world, { accounts, code: new Map(), storage: new Map(), contracts: new Map() })
      const lanes = applyDiffs(this.lanes, diffs)
      const root = lanesRoot(lanes)
      const writes: Write[] = []
      for (const d of diffs) this.world.writes(writes, d.kind, d.key, d.next)
      this.meta.lanesWrites(writes, lanes)
      await this.env.childTransaction(() => {
        void applyWrites(writes)
        this.meta.putGenesis({ digest, accounts: accounts.size, root })
      })
      this.setState(lanes, root)
    })
  }

  private setState(lanes: Uint16Array, root: Hex): void {
    this.lanes = lanes
    this.root = root
    this.stateVersion++
  }

  /** Runs state writers one at a time in call order; a failed one does not stop the next. */
  private exclusive(work: () => Promise<void>): Promise<void> {
    this.assertOpen()
    this.writesInFlight++
    const run = this.queue.then(work).finally(() => {
      this.writesInFlight--
    })
    this.queue = run.catch(() => {})
    return run
  }

  // ---- archive

  worldAt(height: number): WorldSnapshot | undefined {
    this.assertOpen()
    const header = this.blocks.get(height)
    if (header === undefined) return undefined
    const transaction = this.env.useReadTransaction()
    const lanes: Uint8Array | undefined = this.dbs.meta.get('lanes', { transaction })
    const root = lanes === undefined ? lanesRoot(emptyLanes()) : lanesRoot(lanesFromBytes(lanes))
    if (root !== header.merkleRoot.toLowerCase()) {
      transaction.done()
      return undefined
    }
    const dbs = this.dbs
    return {
      height,
      hash: header.hash,
      root,
      *entries() {
        for (const kind of Object.values(EntryKind) as EntryKindValue[]) {
          const name = keyspaceOfKind[kind]
          for (const { key, value } of dbs[name].getRange({ transaction })) {
            yield { space: Keyspace[name], key: Buffer.from(key as Buffer), value: Buffer.from(value as Buffer) }
          }
        }
      },
      close: () => transaction.done(),
    }
  }

  blockEntries(number: number): ArchivedBlock {
    const header = this.blocks.get(number)
    if (header === undefined) throw new Error(`blockEntries: block ${number} is not in the live store`)
    const entries: RawEntry[] = []
    const raw = (name: KeyspaceName, key: Buffer | number): void => {
      const value = this.dbs[name].getBinary(key)
      if (value === undefined) throw new Error(`blockEntries: block ${number} has no ${name} entry ${String(key)}`)
      entries.push({ space: Keyspace[name], key: typeof key === 'number' ? u32be(key) : key, value: Buffer.from(value) })
    }
    const empty = (name: KeyspaceName, key: Buffer): void => {
      entries.push({ space: Keyspace[name], key, value: EMPTY })
    }
    raw('blocks', number)
    empty('blockTime', timeKey(header.writeTime, 'header.writeTime', u32be(number)))
    raw('blockTxs', number)
    raw('blockInvalidTxs', number)
    if (this.blockBatches.get(number) !== undefined) raw('blockBatches', number)
    for (const hash of this.blockTxs.validHashes(number)) {
      const key = fixedBytes(hash, 32, 'tx hash')
      raw('txs', key)
      raw('receipts', key)
      empty('txTime', timeKey(this.txs.get(hash)!.tx.timestamp, 'tx.timestamp', key))
    }
    for (const hash of this.blockTxs.invalidHashes(number)) {
      const key = fixedBytes(hash, 32, 'tx hash')
      raw('invalidTxs', key)
      empty('invalidTxTime', timeKey(this.invalidTxs.get(hash)!.tx.timestamp, 'invalid tx.timestamp', key))
    }
    entries.push(...this.storedIndexEntries(number))
    return { number, entries }
  }

  /** The database of a raw entry and its key as that database takes it (uint32 keyspaces: a number). */
  private placeOf(entry: RawEntry): { db: Db; key: Buffer | number } {
    const found = this.bySpace.get(entry.space)
    if (found === undefined) throw new Error(`archive entry of unknown keyspace ${entry.space}`)
    return { db: found.db, key: found.uint32 ? entry.key.readUInt32BE(0) : entry.key }
  }

  private txKeysOf(block: ArchivedBlock): Buffer[] {
    return block.entries.filter((e) => e.space === Keyspace.txs || e.space === Keyspace.invalidTxs).map((e) => e.key)
  }

  private async writeRecord(record: ArchiveRecord, also?: () => void): Promise<void> {
    await this.env.transaction(() => {
      also?.()
      this.archive.putRecord(record)
    })
    this.archived = record
  }

  async startArchive(range: ArchivedRange): Promise<void> {
    this.assertOpen()
    const current = this.archived
    if (current.op !== undefined) throw new Error(`startArchive: a ${current.op.kind} of ${current.op.range.snapshotId} is in progress`)
    if (range.from !== current.genesis || range.to < range.from || range.to >= this.tip)
      throw new Error(
        `startArchive: range ${range.from}-${range.to} must start at the genesis ${current.genesis} and end below ${this.tip}`,
      )
    await this.writeRecord({ ...current, genesis: range.to + 1, op: { kind: 'archive', range } })
  }

  async removeArchived(blocks: ArchivedBlock[]): Promise<void> {
    this.assertOpen()
    await this.env.transaction(() => {
      for (const block of blocks) {
        for (const entry of block.entries) {
          const { db, key } = this.placeOf(entry)
          db.removeSync(key)
        }
        for (const key of this.txKeysOf(block)) this.archive.markArchived(key, block.number)
      }
    })
  }

  async startRestore(range: ArchivedRange): Promise<void> {
    this.assertOpen()
    const current = this.archived
    if (current.op !== undefined) throw new Error(`startRestore: a ${current.op.kind} of ${current.op.range.snapshotId} is in progress`)
    const last = current.ranges.at(-1)
    if (last === undefined || last.snapshotId !== range.snapshotId || last.from !== range.from || last.to !== range.to)
      throw new Error(`startRestore: ${range.snapshotId} (${range.from}-${range.to}) is not the latest archived range`)
    await this.writeRecord({ ...current, op: { kind: 'restore', range } })
  }

  async putRestored(blocks: ArchivedBlock[]): Promise<void> {
    this.assertOpen()
    await this.env.transaction(() => {
      for (const block of blocks) {
        void applyWrites(this.rawWrites(block.entries))
        // an archive written before keyspaces 30–33 existed holds none of their entries (read after the block's own)
        void applyWrites(this.rawWrites(this.storedIndexEntries(block.number)))
        for (const key of this.txKeysOf(block)) this.archive.unmarkArchived(key)
      }
    })
  }

  async finishArchiveOp(): Promise<void> {
    this.assertOpen()
    const { op, ...current } = this.archived
    if (op === undefined) return
    if (op.kind === 'archive') await this.writeRecord({ ...current, ranges: [...current.ranges, op.range] })
    else await this.writeRecord({ genesis: op.range.from, ranges: current.ranges.slice(0, -1) })
  }

  putSnapshotRequest(height: number, snapshotId: string): Promise<void> {
    this.assertOpen()
    return this.archive.putSnapshotRequest(height, snapshotId)
  }

  removeSnapshotRequest(height: number): Promise<void> {
    this.assertOpen()
    return this.archive.removeSnapshotRequest(height)
  }

  // ---- lifecycle

  async flushed(): Promise<void> {
    await this.env.flushed
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.queue
    await this.poolLog.close()
    await this.consensusLog.close()
    await this.env.close()
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('store is closed')
  }
}
