/**
 * Turns an ordered batch into a committed block: execute, compute roots and the block hash
 * (protocol.md §2), write everything in one LMDB transaction. Deterministic given the batch, the
 * parent and the block time, so another node executing the same batch reaches the same block.
 */
import { hexToBytes } from '@noble/hashes/utils.js'
import { logsBloom, orBloom } from '../crypto/log-bloom.ts'
import { blockHash, encodeConsensusReceipt, encodeConsensusTransaction, listRoot } from '../crypto/tx-hash.ts'
import {
  type BlockHeader,
  type CommittedBlock,
  type CommittedTx,
  type ExecutionOutcome,
  type Hex,
  type InvalidTx,
  RECORD_VERSION,
  type Receipt,
  type StateReader,
  type WorldChanges,
  ZERO_ADDRESS,
  ZERO_HASH,
} from '../domain.ts'
import type { Logger } from '../log.ts'
import type { StateHasher } from '../store/state-hasher.ts'
import { turnBudget } from '../turns.ts'
import { bytesToHex } from '../wire/hex.ts'
import { type ReadyTx, signKey } from './pool.ts'

export interface BlockExecutor {
  executeBlock(
    state: StateReader,
    txs: { tx: ReadyTx['tx']; signatureValid: boolean }[],
    context: { number: number; timestamp: bigint },
  ): Promise<{ outcomes: ExecutionOutcome[]; changes: WorldChanges }>
}

export interface BlockStore {
  height(): number
  /** the committed transaction (valid, or discarded but for its signature) holding (from, sign hash) */
  findBySignHash(from: Hex, signHash: Hex): Hex | undefined
  getBlock(number: number): BlockHeader | undefined
  readonly state: StateReader
  stateRootAfterOn(hasher: StateHasher, changes: WorldChanges): Promise<Hex>
  commitBlock(block: {
    header: BlockHeader
    txs: CommittedTx[]
    receipts: Receipt[]
    invalid: InvalidTx[]
    changes: WorldChanges
    executionOrder?: boolean[]
    batch?: { view: number; txHashes: Hex[]; proof: Uint8Array; timestamp?: bigint }
  }): Promise<void>
}

/** How a block ordered by consensus is produced (solo ordering passes none of it). */
export interface ProduceOptions {
  /** the batch's time, ns, the same on every node (instead of this node's clock) */
  timestamp?: bigint
  /** the batch as its commit proof names it, kept with the block so peers can replay it (keyspace 24) */
  batch?: { view: number; txHashes: Hex[]; proof: Uint8Array }
  /** a replayed block: its hash must come out as this, else nothing is committed and produce() throws */
  expectHash?: Hex
}

/** A replayed block whose result differs from the hash its source gave: this node's execution or the source is wrong. */
export class BlockMismatchError extends Error {
  override name = 'BlockMismatchError'
}

/** The receipt of a successful execution at its place in a block (or, for a simulation, where it would have been). */
export function receiptOf(
  tx: ReadyTx['tx'],
  outcome: Extract<ExecutionOutcome, { ok: true }>,
  place: { blockNumber: number; blockHash: Hex; txIndex: number },
): Receipt {
  return {
    txHash: tx.hash,
    vmType: tx.vmType,
    contractAddress: outcome.contractAddress ?? ZERO_ADDRESS,
    gasUsed: outcome.gasUsed,
    ret: outcome.ret,
    logs: outcome.logs,
    ...place,
    version: RECORD_VERSION,
  }
}

const bytes = (hex: Hex): Uint8Array => hexToBytes(hex.length % 2 === 0 ? hex.slice(2) : `0${hex.slice(2)}`)

async function mapInTurns<T, R>(turn: () => Promise<void> | undefined, items: readonly T[], map: (item: T) => R): Promise<R[]> {
  const out: R[] = []
  for (const item of items) {
    out.push(map(item))
    await turn()
  }
  return out
}

/** the block's log bloom, a receipt at a time (each log item costs a Keccak) */
async function bloomInTurns(turn: () => Promise<void> | undefined, receipts: readonly Receipt[]): Promise<Uint8Array> {
  let bloom: Uint8Array = new Uint8Array(0)
  for (const receipt of receipts) {
    if (receipt.logs.length === 0) continue
    bloom = orBloom(bloom, logsBloom(receipt.logs))
    await turn()
  }
  return bloom
}

/**
 * The transactions of `batch` whose signature verifies but whose (from, sign hash) a committed
 * transaction, or an earlier one of the batch, already holds, with their outcome: discarded as
 * REPEATED. Two VPs can each admit one of two valid copies of a transaction (the flipped-s
 * signature; the same content signed under two sign strings) before either hears of the other;
 * this rule, the same on every node, lets only the first commit (ARCHITECTURE.md decision 4).
 */
function repeatedCopies(store: BlockStore, batch: readonly ReadyTx[]): Map<number, ExecutionOutcome> {
  const repeated = new Map<number, ExecutionOutcome>()
  const held = new Map<string, Hex>()
  for (const [i, { tx, signatureValid }] of batch.entries()) {
    if (!signatureValid) continue
    const key = signKey(tx)
    const holder = held.get(key) ?? store.findBySignHash(tx.from, tx.signHash)
    if (holder === undefined || holder === tx.hash) {
      held.set(key, tx.hash)
      continue
    }
    const detail = `a copy of ${holder}: the same content from ${tx.from} under another signature`
    repeated.set(i, { ok: false, invalidMsg: 'REPEATED', detail, gasUsed: 0, executeTimeNs: 0 })
  }
  return repeated
}

export function createBlockProducer(options: {
  store: BlockStore
  executor: BlockExecutor
  /** hashes the world-state changes, on a worker thread when it has one */
  hasher: StateHasher
  nowNs: () => bigint
  log: Logger
}) {
  const { store, executor, hasher, log } = options

  return {
    async produce(batch: ReadyTx[], produceOptions: ProduceOptions = {}): Promise<CommittedBlock> {
      const parent = store.getBlock(store.height())
      const number = store.height() + 1
      // block times strictly increase even if the clock (or a batch's time) steps back: a rule
      // every node applies alike, so a consensus block's time is still the same everywhere
      const wanted = produceOptions.timestamp ?? options.nowNs()
      const timestamp = parent === undefined || wanted > parent.writeTime ? wanted : parent.writeTime + 1n
      const started = performance.now()
      const repeated = repeatedCopies(store, batch)
      const executed = await executor.executeBlock(store.state, repeated.size === 0 ? batch : batch.filter((_, i) => !repeated.has(i)), {
        number,
        timestamp,
      })
      const changes = executed.changes
      let next = 0
      const outcomes: ExecutionOutcome[] = batch.map((_, i) => repeated.get(i) ?? executed.outcomes[next++])
      const parentHash = parent?.hash ?? ZERO_HASH

      const valid: { tx: ReadyTx['tx']; outcome: Extract<ExecutionOutcome, { ok: true }> }[] = []
      const invalid: InvalidTx[] = []
      for (const [i, outcome] of outcomes.entries()) {
        const tx = batch[i].tx
        if (outcome.ok) valid.push({ tx, outcome })
        else {
          invalid.push({ tx, invalidMsg: outcome.invalidMsg, detail: outcome.detail, blockNumber: number })
          log.debug(`tx ${tx.hash} discarded: ${outcome.invalidMsg} (${outcome.detail})`)
        }
      }

      // what follows execution runs in turns of about a millisecond (src/turns.ts): a block of 500
      // transactions must not hold this thread, which also admits, orders and commits, for long
      const turn = turnBudget()
      const txRoot = listRoot(
        await mapInTurns(turn, valid, ({ tx }) =>
          encodeConsensusTransaction({
            from: bytes(tx.from),
            to: tx.to === null ? null : bytes(tx.to),
            value: new Uint8Array(),
            timestamp: tx.timestamp,
            nonce: tx.nonce,
          }),
        ),
      )
      const receiptRoot = listRoot(
        await mapInTurns(turn, valid, ({ outcome }) =>
          encodeConsensusReceipt({
            gasUsed: BigInt(outcome.gasUsed),
            ret: bytes(outcome.ret),
            logs: new TextEncoder().encode(JSON.stringify(outcome.logs)),
          }),
        ),
      )
      const merkleRoot = await store.stateRootAfterOn(hasher, changes)
      const hash = bytesToHex(
        blockHash({ parentHash: bytes(parentHash), number: BigInt(number), timestamp, txRoot, receiptRoot, merkleRoot: bytes(merkleRoot) }),
      )
      const executeTimes = valid.map(({ outcome }) => outcome.executeTimeNs)
      const header: BlockHeader = {
        number,
        hash,
        parentHash,
        writeTime: timestamp,
        avgTimeMs: executeTimes.length === 0 ? 0 : executeTimes.reduce((a, b) => a + b, 0) / executeTimes.length / 1e6,
        txCount: valid.length,
        txRoot: bytesToHex(txRoot),
        receiptRoot: bytesToHex(receiptRoot),
        merkleRoot,
        version: RECORD_VERSION,
      }
      const txs: CommittedTx[] = valid.map(({ tx, outcome }, txIndex) => ({
        tx,
        blockNumber: number,
        blockHash: hash,
        txIndex,
        executeTimeNs: outcome.executeTimeNs,
      }))
      const receipts = valid.map(({ tx, outcome }, txIndex) => receiptOf(tx, outcome, { blockNumber: number, blockHash: hash, txIndex }))
      header.logsBloom = await bloomInTurns(turn, receipts)
      if (produceOptions.expectHash !== undefined && produceOptions.expectHash !== hash) {
        throw new BlockMismatchError(`block ${number} replayed to ${hash}, its source says ${produceOptions.expectHash}`)
      }
      // the batch keeps its own time: its proof signs that one, and the block's may have been moved past the parent's
      const ordered = produceOptions.batch === undefined ? undefined : { ...produceOptions.batch, timestamp: wanted }
      // issue 28: which of the executed were valid, in order, so a tracer can re-execute the block (keyspace 34)
      const executionOrder = outcomes.map((outcome) => outcome.ok)
      await store.commitBlock({ header, txs, receipts, invalid, changes, executionOrder, batch: ordered })
      log.debug(`block ${number}: ${valid.length} valid, ${invalid.length} invalid, ${(performance.now() - started).toFixed(1)} ms`)
      return { header, txs, receipts, invalid }
    },
  }
}
