/**
 * Turning WorldChanges into entry diffs (old and new canonical bytes per changed key) and the
 * lane vector they produce. Only keys whose bytes really change are hashed and written.
 */
import { type Hex, type WorldChanges, ZERO_WORD } from '../domain.ts'
import { bytesToHex, fixedBytes, hexToBytes } from './codec.ts'
import { Keyspace } from './keyspace.ts'
import { keyspaceOfKind, type WorldStateRepo } from './repos/world-state.ts'
import { type EntryDiff, EntryKind, type EntryKindValue, encodeAccount, encodeContractMeta } from './state-codec.ts'
import { addEntry, addLanes, changeLanes, emptyLanes, lanesRoot } from './state-hash.ts'
import type { RawEntry } from './types.ts'

export type { EntryDiff } from './state-codec.ts'

/** One changed key as the changes give it: its canonical bytes after (undefined = deleted). */
export interface ChangedEntry {
  kind: EntryKindValue
  key: Buffer
  next: Buffer | undefined
}

/**
 * Diffs of `changes` against the latest committed state, and every entry the changes name (the
 * unchanged ones too), so that a later call with the same changes can tell cheaply that they are
 * the same (sameChanges) and reuse the diffs instead of reading the state again.
 */
export interface WorldDiff {
  diffs: EntryDiff[]
  entries: ChangedEntry[]
}

/** Reads the current bytes of every changed key; drops changes that leave the bytes as they are. */
export function diffWorld(world: WorldStateRepo, changes: WorldChanges): WorldDiff {
  const diff: WorldDiff = { diffs: [], entries: [] }
  for (const _ of diffSteps(world, changes, diff));
  return diff
}

/** The same, in turns (src/turns.ts): a block's thousands of changed keys are read between the thread's other work. */
export async function diffWorldInTurns(
  world: WorldStateRepo,
  changes: WorldChanges,
  turn: () => Promise<void> | undefined,
): Promise<WorldDiff> {
  const diff: WorldDiff = { diffs: [], entries: [] }
  for (const _ of diffSteps(world, changes, diff)) await turn()
  return diff
}

/**
 * Whether `changes` still name exactly `entries` (same kinds, keys and bytes, in order): then the
 * diffs made from them then still hold, as long as the state has not moved. Encodes the changes
 * again but reads nothing from the store (issue 27: a block's diff was computed twice, for its root
 * and for its commit).
 */
export async function sameChanges(
  changes: WorldChanges,
  entries: readonly ChangedEntry[],
  turn: () => Promise<void> | undefined,
): Promise<boolean> {
  let i = 0
  for (const entry of changedEntries(changes)) {
    const known = entries[i++]
    if (known === undefined || known.kind !== entry.kind || !known.key.equals(entry.key) || !sameBytes(known.next, entry.next)) return false
    await turn()
  }
  return i === entries.length
}

/** Fills `diff`, one changed key per step. */
function* diffSteps(world: WorldStateRepo, changes: WorldChanges, diff: WorldDiff): Generator<void, void, undefined> {
  const seen = new Set<string>()
  for (const entry of changedEntries(changes)) {
    const { kind, key, next } = entry
    const id = `${kind}:${key.toString('hex')}`
    if (seen.has(id)) throw new TypeError(`changes: ${entry.what} appears twice (keys differing only in case?)`)
    seen.add(id)
    diff.entries.push({ kind, key, next })
    const old = world.raw(kind, key)
    if (!(old === undefined ? next === undefined : next !== undefined && old.equals(next))) diff.diffs.push({ kind, key, old, next })
    yield
  }
}

/** Every key `changes` name with its canonical bytes after, in a fixed order; malformed values throw here. */
function* changedEntries(changes: WorldChanges): Generator<ChangedEntry & { what: string }, void, undefined> {
  for (const [address, account] of changes.accounts) {
    const what = `accounts[${address}]`
    yield { kind: EntryKind.account, key: fixedBytes(address, 20, what), next: encodeAccount(account, what), what }
  }
  for (const [address, code] of changes.code) {
    const what = `code[${address}]`
    const bytes = hexToBytes(code, what)
    yield { kind: EntryKind.code, key: fixedBytes(address, 20, what), next: bytes.length === 0 ? undefined : bytes, what }
  }
  for (const [address, slots] of changes.storage) {
    const addr = fixedBytes(address, 20, `storage[${address}]`)
    for (const [slot, value] of slots) {
      const what = `storage[${address}][${slot}]`
      const key = Buffer.concat([addr, fixedBytes(slot, 32, `${what} slot`)])
      const word = fixedBytes(value, 32, `${what} value (ZERO_WORD deletes a slot)`)
      yield { kind: EntryKind.storage, key, next: value.toLowerCase() === ZERO_WORD ? undefined : word, what }
    }
  }
  for (const [address, meta] of changes.contracts) {
    const what = `contracts[${address}]`
    yield { kind: EntryKind.contract, key: fixedBytes(address, 20, what), next: encodeContractMeta(meta, what), what }
  }
}

/** base + Σ(new entries) − Σ(old entries), as a new vector (base untouched). */
export function applyDiffs(base: Uint16Array, diffs: EntryDiff[]): Uint16Array {
  return addLanes(base, changeLanes(diffs))
}

const sameBytes = (a: Buffer | undefined, b: Buffer | undefined): boolean =>
  a === undefined ? b === undefined : b !== undefined && a.equals(b)

/** Addresses of contracts that did not exist before these diffs. */
export function newContracts(diffs: EntryDiff[]): Hex[] {
  return diffs.filter((d) => d.kind === EntryKind.contract && d.old === undefined).map((d) => bytesToHex(d.key))
}

const kindOfKeyspace = new Map<number, EntryKindValue>(
  (Object.entries(keyspaceOfKind) as [string, keyof typeof Keyspace][]).map(([kind, name]) => [
    Keyspace[name],
    Number(kind) as EntryKindValue,
  ]),
)

/**
 * The state root of a whole world state given as raw entries of the world keyspaces (a snapshot
 * file); undefined when an entry belongs to another keyspace.
 */
export async function rootOfEntries(entries: Iterable<RawEntry> | AsyncIterable<RawEntry>): Promise<Hex | undefined> {
  const lanes = emptyLanes()
  for await (const entry of entries) {
    const kind = kindOfKeyspace.get(entry.space)
    if (kind === undefined) return undefined
    addEntry(lanes, kind, entry.key, entry.value)
  }
  return lanesRoot(lanes)
}
