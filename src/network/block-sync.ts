/**
 * Committed blocks between nodes: a VP serves them, a VP that fell behind (state transfer,
 * consensus.md §5) and an NVP (§6) fetch and replay them. A block travels as what is needed to
 * execute it again: its number, parent, time, the batch as the proof names it (tx hashes), the
 * bodies of the transactions the block executed (as signed, so the receiver admits them afresh;
 * the rest of the batch was already committed earlier and is skipped alike everywhere), the
 * consensus view and the commit proof. The
 * receiver checks the proof against the VPs it knows (`verify`), replays the batch and commits
 * the block only if it reaches the same hash (`apply`); so no single peer is trusted, and a node
 * whose execution differs stops instead of forking (consensus.md §10.5, §10.9).
 *
 * On the wire (msgpack, wire/binary.ts) a request is `[from, to]`; a reply is a list of blocks,
 * each packed on its own (so the reply stops growing at MAX_REPLY_BYTES), its transactions as
 * tx-relay.ts's `[kind, params]` pairs.
 *
 * The fetch walks forward from the local tip and each block must name the tip as its parent,
 * so a peer cannot splice in a block of another chain; it stops at the target and checks its hash.
 */
import { batchDigest } from '../consensus/bft/messages.ts'
import type { Hex, SignedTx } from '../domain.ts'
import type { Logger } from '../log.ts'
import type { BlockBatch } from '../store/index.ts'
import { pack, unpack } from '../wire/binary.ts'
import { Channel } from './channels.ts'
import { decodeProof } from './proof.ts'
import { decodeTxs, type WireTx, wireTxs } from './tx-relay.ts'

/** why a proof may fail on an honest network: said with every refused proof */
export const PROOF_HINT =
  "; if every VP's blocks are refused so, this node's genesis VP group is not the chain's: set keel.toml [network] genesisVps (default: the VPs of peerconfig.toml)"

export interface SyncedBlock {
  number: number
  hash: Hex
  parentHash: Hex
  /** the batch's own time, ns, which its proof signs; the block's time is this, or its parent's + 1 when this is not later */
  timestamp: bigint
  view: number
  proof: Uint8Array
  /** the batch as the proof names it */
  txHashes: Hex[]
  /** the transactions the block executed, in batch order (the batch less those committed before) */
  txs: SignedTx[]
}

/** blocks per request (Hyperchain's max_block_fetch) */
export const BLOCKS_PER_REQUEST = 50
/** a reply stops growing past this many bytes, so one request never asks a peer for a huge message */
export const MAX_REPLY_BYTES = 8 * 1024 * 1024
const REQUEST_TIMEOUT_MS = 60_000

/** what serving reads from the store */
export interface BlockSource {
  height(): number
  getBlock(number: number): { number: number; hash: Hex; parentHash: Hex; writeTime: bigint } | undefined
  getBlockBatch(number: number): BlockBatch | undefined
  getTx(hash: Hex): { tx: SignedTx; blockNumber: number } | undefined
  getInvalidTx(hash: Hex): { tx: SignedTx; blockNumber: number } | undefined
}

export interface SyncNetwork {
  onRequest(channel: number, handler: (from: { hostname: string }, payload: Uint8Array) => Promise<Uint8Array>): void
  request(hostname: string, channel: number, payload: Uint8Array, timeoutMs: number): Promise<Uint8Array>
}

/** a synced block as it travels: its transactions in the binary codec's form */
type WireBlock = Omit<SyncedBlock, 'txs'> & { txs: WireTx[] }

/** The consensus blocks `from`..`to` this node holds (at most BLOCKS_PER_REQUEST and MAX_REPLY_BYTES), encoded. */
export function readBlocks(source: BlockSource, from: number, to: number): Uint8Array {
  const out: Uint8Array[] = []
  let bytes = 0
  const last = Math.min(to, source.height(), from + BLOCKS_PER_REQUEST - 1)
  for (let number = from; number <= last && bytes < MAX_REPLY_BYTES; number++) {
    const header = source.getBlock(number)
    const batch = source.getBlockBatch(number)
    // a block archived away or written by solo ordering cannot be replayed from here
    if (header === undefined || batch === undefined) break
    const txs: SignedTx[] = []
    for (const hash of batch.txHashes) {
      const found = source.getTx(hash) ?? source.getInvalidTx(hash)
      if (found === undefined) throw new Error(`block ${number} names ${hash}, which the store does not hold`)
      if (found.blockNumber === number) txs.push(found.tx)
    }
    const wire: WireBlock = {
      number,
      hash: header.hash,
      parentHash: header.parentHash,
      timestamp: signedTime(number, header.writeTime, batch),
      view: batch.view,
      proof: batch.proof,
      txHashes: batch.txHashes,
      txs: wireTxs(txs),
    }
    const packed = pack(wire)
    bytes += packed.length
    out.push(packed)
  }
  return pack(out)
}

/**
 * The time a stored batch's proof signs: kept with the batch (BlockBatch.timestamp). A record written
 * before it was kept has the block's time, which is the batch's unless the producer moved it past
 * its parent's — as for a view change's empty batch (time 0): that one is recognised by its proof.
 */
function signedTime(number: number, blockTime: bigint, batch: BlockBatch): bigint {
  if (batch.timestamp !== undefined) return batch.timestamp
  if (batch.txHashes.length > 0) return blockTime
  try {
    const { commits, votes } = decodeProof(batch.proof)
    const empty = batchDigest(number, 0n, [], votes)
    if (commits.some((commit) => commit.body.digest === empty)) return 0n
  } catch {}
  return blockTime
}

const HASH = /^0x[0-9a-f]{64}$/

/** Blocks from a peer's reply; throws on anything malformed. Transactions are admitted again (time window off). */
export function decodeBlocks(payload: Uint8Array, nowNs: () => bigint): SyncedBlock[] {
  const items = unpack(payload, 'a block list')
  if (!Array.isArray(items)) throw new Error('a block list must be a list')
  if (items.length > BLOCKS_PER_REQUEST) throw new Error(`more than ${BLOCKS_PER_REQUEST} blocks in one reply`)
  return items.map((item: unknown, index) => {
    if (!(item instanceof Uint8Array)) throw new Error(`block ${index} of the reply is malformed`)
    const wire = (unpack(item, `block ${index} of the reply`) ?? {}) as Partial<Record<keyof WireBlock, unknown>>
    const number = wire.number
    const timestamp = typeof wire.timestamp === 'number' ? BigInt(wire.timestamp) : wire.timestamp
    const ok =
      Number.isSafeInteger(number) &&
      (number as number) > 0 &&
      typeof wire.hash === 'string' &&
      HASH.test(wire.hash) &&
      typeof wire.parentHash === 'string' &&
      HASH.test(wire.parentHash) &&
      typeof timestamp === 'bigint' &&
      // 0 is a null slot's (a view change found nothing prepared there): an empty block
      (timestamp > 0n || (timestamp === 0n && Array.isArray(wire.txHashes) && wire.txHashes.length === 0)) &&
      Number.isSafeInteger(wire.view) &&
      (wire.view as number) >= 0 &&
      wire.proof instanceof Uint8Array &&
      Array.isArray(wire.txHashes) &&
      wire.txHashes.every((hash) => typeof hash === 'string' && HASH.test(hash)) &&
      Array.isArray(wire.txs)
    if (!ok) throw new Error(`block ${index} of the reply is malformed`)
    const txs = decodeTxs(wire.txs as unknown[], { nowNs, timeWindow: false })
    // the bodies must be the batch's, in its order (which of them ran is for the replay to decide)
    const named = wire.txHashes as Hex[]
    let at = 0
    for (const tx of txs) {
      while (at < named.length && named[at] !== tx.hash) at++
      if (at === named.length)
        throw new Error(`block ${index} of the reply carries ${tx.hash}, which its batch does not name in that place`)
      at++
    }
    return {
      number: number as number,
      hash: wire.hash as Hex,
      parentHash: wire.parentHash as Hex,
      timestamp: timestamp as bigint,
      view: wire.view as number,
      proof: wire.proof as Uint8Array,
      txHashes: named,
      txs,
    }
  })
}

/** Answers peers' block requests from the store. */
export function serveBlocks(network: SyncNetwork, source: BlockSource): void {
  network.onRequest(Channel.fetchBlocks, async (_from, payload) => {
    const asked = unpack(payload, 'a block request')
    const [from, to] = Array.isArray(asked) ? asked : []
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || (from as number) < 1 || (to as number) < (from as number)) {
      throw new Error('a block request is [from, to] with 1 <= from <= to')
    }
    return readBlocks(source, from as number, to as number)
  })
}

export interface BlockSyncOptions {
  network: SyncNetwork
  /** the local chain's tip */
  tip(): { number: number; hash: Hex }
  /** true when the proof shows a quorum of the known VPs committed this block's batch */
  verify(block: SyncedBlock): boolean
  /** replays the block and commits it; throws (committing nothing) when the result's hash differs */
  apply(block: SyncedBlock): Promise<void>
  nowNs(): bigint
  log: Logger
}

export class SyncError extends Error {
  override name = 'SyncError'
}

export interface BlockSync {
  /**
   * Fetches and applies blocks until the tip is `target.number`, asking `peers` in turn, and
   * checks the tip's hash is `target.hash` when given; resolves when there, rejects with
   * SyncError when no peer could bring it there.
   */
  syncTo(target: { number: number; hash?: Hex }, peers: readonly string[]): Promise<void>
}

export function createBlockSync(options: BlockSyncOptions): BlockSync {
  const { network, log } = options

  /** one request to one peer; resolves with how many blocks it applied */
  const fetchOnce = async (peer: string, to: number): Promise<number> => {
    const from = options.tip().number + 1
    const reply = await network.request(peer, Channel.fetchBlocks, pack([from, to]), REQUEST_TIMEOUT_MS)
    const blocks = decodeBlocks(reply, options.nowNs)
    let applied = 0
    for (const block of blocks) {
      const tip = options.tip()
      if (block.number !== tip.number + 1) throw new SyncError(`${peer} sent block ${block.number} where ${tip.number + 1} was asked`)
      if (block.parentHash !== tip.hash)
        throw new SyncError(`${peer} sent block ${block.number} whose parent is not this node's block ${tip.number}`)
      if (!options.verify(block)) throw new SyncError(`${peer} sent block ${block.number} without a valid commit proof${PROOF_HINT}`)
      await options.apply(block)
      applied++
    }
    return applied
  }

  return {
    async syncTo(target, peers) {
      if (peers.length === 0) throw new SyncError('no peer to fetch blocks from')
      let turn = 0
      let fruitless = 0
      while (options.tip().number < target.number) {
        const peer = peers[turn % peers.length]
        turn++
        try {
          const applied = await fetchOnce(peer, target.number)
          fruitless = applied === 0 ? fruitless + 1 : 0
        } catch (error) {
          fruitless++
          log.warn(`block sync from ${peer} failed: ${(error as Error).message}`)
        }
        if (fruitless >= peers.length) {
          throw new SyncError(`no peer brought block ${options.tip().number + 1} of ${target.number} (asked ${peers.join(', ')})`)
        }
      }
      const tip = options.tip()
      if (target.hash !== undefined && tip.number === target.number && tip.hash !== target.hash) {
        throw new SyncError(`block ${target.number} here is ${tip.hash}, the quorum's is ${target.hash}: this node's chain differs`)
      }
    },
  }
}
