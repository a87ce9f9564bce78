/**
 * Keyspace 34 `stateUndo` (issue 28): for each of the last STATE_UNDO_BLOCKS blocks, the world-state
 * entries it changed with their bytes before it, and the order in which it executed its valid and
 * discarded transactions. Keel keeps only the latest world state (keyspaces 16–19); with these
 * records the state before a recent block is the latest state with the records of that block and
 * every later one laid over it, so debug_traceTransaction re-executes a transaction on the state it
 * ran on, as a full node keeps its recent states (geth: the last 128). The bytes come from the
 * block's entry diffs, which the commit reads anyway (world.ts diffWorld), so the commit path only
 * copies them; the record of the block STATE_UNDO_BLOCKS back is removed in the same transaction.
 *
 * Record layout (bytes):
 *   u32be count of executed transactions (0xffffffff: order not recorded)
 *   ceil(count / 8) bytes: bit i (most significant first) set when the i-th executed transaction
 *     was valid, so the block's valid (keyspace 4) and discarded (keyspace 5) lists, each in
 *     execution order, interleave back into the order of execution
 *   then per changed entry: u8 kind (state-codec.ts EntryKind) ‖ u8 key length ‖ key ‖
 *     u32be (length of the bytes before + 1; 0 = the entry was absent) ‖ the bytes before
 */
import type { StateReader } from '../../domain.ts'
import type { Db, Write } from '../db.ts'
import type { EntryDiff, EntryKindValue } from '../state-codec.ts'
import { keyspaceOfKind, stateReaderOver, type WorldKeyspace } from './world-state.ts'

/** blocks whose state before them stays readable (geth's full node keeps 128 recent states) */
export const STATE_UNDO_BLOCKS = 128

const ORDER_UNKNOWN = 0xffffffff

/** The record of one block: its diffs' bytes before, and `executed[i]` = the i-th executed transaction was valid. */
export function encodeStateUndo(diffs: readonly EntryDiff[], executed: readonly boolean[] | undefined): Buffer {
  const count = executed?.length ?? 0
  const orderBytes = Math.ceil(count / 8)
  let size = 4 + orderBytes
  for (const d of diffs) size += 2 + d.key.length + 4 + (d.old?.length ?? 0)
  const out = Buffer.allocUnsafe(size)
  out.writeUInt32BE(executed === undefined ? ORDER_UNKNOWN : count, 0)
  out.fill(0, 4, 4 + orderBytes)
  if (executed !== undefined) for (let i = 0; i < count; i++) if (executed[i]) out[4 + (i >> 3)] |= 0x80 >> (i & 7)
  let at = 4 + orderBytes
  for (const d of diffs) {
    out[at++] = d.kind
    out[at++] = d.key.length
    // TypedArray.set: cheaper than Buffer.copy for these short runs
    out.set(d.key, at)
    at += d.key.length
    const length = d.old === undefined ? 0 : d.old.length + 1
    out[at++] = length >>> 24
    out[at++] = (length >>> 16) & 0xff
    out[at++] = (length >>> 8) & 0xff
    out[at++] = length & 0xff
    if (d.old !== undefined) {
      out.set(d.old, at)
      at += d.old.length
    }
  }
  return out
}

interface DecodedUndo {
  executed: boolean[] | undefined
  entries: { kind: EntryKindValue; key: Buffer; old: Buffer | undefined }[]
}

export function decodeStateUndo(bytes: Buffer): DecodedUndo {
  const raw = bytes.readUInt32BE(0)
  const count = raw === ORDER_UNKNOWN ? 0 : raw
  const executed =
    raw === ORDER_UNKNOWN ? undefined : Array.from({ length: count }, (_, i) => (bytes[4 + (i >> 3)] & (0x80 >> (i & 7))) !== 0)
  let at = 4 + Math.ceil(count / 8)
  const entries: DecodedUndo['entries'] = []
  while (at < bytes.length) {
    const kind = bytes[at++] as EntryKindValue
    const keyLength = bytes[at++]
    const key = bytes.subarray(at, at + keyLength)
    at += keyLength
    const length = bytes.readUInt32BE(at)
    at += 4
    const old = length === 0 ? undefined : bytes.subarray(at, at + length - 1)
    at += length === 0 ? 0 : length - 1
    entries.push({ kind, key, old })
  }
  return { executed, entries }
}

/** The world state before a block, read from one LMDB snapshot; `close` ends the snapshot. */
export interface PastState {
  readonly state: StateReader
  /** the block's executed transactions in order: true = valid (its next of keyspace 4), false = discarded (keyspace 5) */
  readonly executed: readonly boolean[] | undefined
  close(): void
}

type ReadTransaction = { done(): void }

export class StateUndoRepo {
  constructor(
    private readonly db: Db,
    private readonly world: Record<WorldKeyspace, Db>,
  ) {}

  /** block `number`'s record, and the removal of the one that falls out of the window */
  writes(out: Write[], number: number, record: Buffer): void {
    out.push({ db: this.db, key: number, value: record })
    if (number > STATE_UNDO_BLOCKS) out.push({ db: this.db, key: number - STATE_UNDO_BLOCKS, value: undefined })
  }

  /**
   * The world state before block `number`: the latest state of the snapshot `transaction` with the
   * records of `number` and of every later block laid over it (the earliest record of an entry
   * holds its bytes before `number`). Undefined when a record in that range is missing: pruned
   * (older than the window), or the block was written before records were kept.
   */
  stateBefore(number: number, transaction: ReadTransaction): PastState | undefined {
    const before = new Map<string, Buffer | undefined>()
    let next = number
    let executed: boolean[] | undefined
    for (const { key, value } of this.db.getRange({ start: number, transaction } as never) as Iterable<{ key: number; value: Buffer }>) {
      if (key !== next) return undefined
      const decoded = decodeStateUndo(Buffer.from(value))
      if (key === number) executed = decoded.executed
      for (const entry of decoded.entries) {
        const id = `${entry.kind}:${entry.key.toString('hex')}`
        if (!before.has(id)) before.set(id, entry.old)
      }
      next++
    }
    if (next === number) return undefined
    const state = stateReaderOver((kind, key) => {
      const id = `${kind}:${key.toString('hex')}`
      if (before.has(id)) return before.get(id)
      return this.world[keyspaceOfKind[kind]].get(key, { transaction } as never) as Buffer | undefined
    })
    return { state, executed, close: () => transaction.done() }
  }
}
