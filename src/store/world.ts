/**
 * Turning WorldChanges into entry diffs (old and new canonical bytes per changed key) and the
 * lane vector they produce. Only keys whose bytes really change are hashed and written.
 */
import { type Hex, type WorldChanges, ZERO_WORD } from '../domain.ts'
import { bytesToHex, fixedBytes, hexToBytes } from './codec.ts'
import { Keyspace } from './keyspace.ts'
import { keyspaceOfKind, type WorldStateRepo } from './repos/world-state.ts'
import { EntryKind, type EntryKindValue, encodeAccount, encodeContractMeta } from './state-codec.ts'
import { addEntry, addLanes, changeLanes, emptyLanes, lanesRoot } from './state-hash.ts'
import type { RawEntry } from './types.ts'

export interface EntryDiff {
  kind: EntryKindValue
  key: Buffer
  /** stored bytes before; undefined = absent */
  old: Buffer | undefined
  /** bytes after; undefined = deleted */
  next: Buffer | undefined
}

/** Reads the current bytes of every changed key; drops changes that leave the bytes as they are. */
export function diffWorld(world: WorldStateRepo, changes: WorldChanges): EntryDiff[] {
  const diffs: EntryDiff[] = []
  for (const _ of diffSteps(world, changes, diffs));
  return diffs
}

/** The same, in turns (src/turns.ts): a block's thousands of changed keys are read between the thread's other work. */
export async function diffWorldInTurns(
  world: WorldStateRepo,
  changes: WorldChanges,
  turn: () => Promise<void> | undefined,
): Promise<EntryDiff[]> {
  const diffs: EntryDiff[] = []
  for (const _ of diffSteps(world, changes, diffs)) await turn()
  return diffs
}

/** Fills `diffs`, one changed key per step. */
function* diffSteps(world: WorldStateRepo, changes: WorldChanges, diffs: EntryDiff[]): Generator<void, void, undefined> {
  const seen = new Set<string>()
  const push = (kind: EntryKindValue, key: Buffer, next: Buffer | undefined, what: string): void => {
    const id = `${kind}:${key.toString('hex')}`
    if (seen.has(id)) throw new TypeError(`changes: ${what} appears twice (keys differing only in case?)`)
    seen.add(id)
    const old = world.raw(kind, key)
    if (old === undefined ? next === undefined : next !== undefined && old.equals(next)) return
    diffs.push({ kind, key, old, next })
  }
  for (const [address, account] of changes.accounts) {
    const what = `accounts[${address}]`
    push(EntryKind.account, fixedBytes(address, 20, what), encodeAccount(account, what), what)
    yield
  }
  for (const [address, code] of changes.code) {
    const what = `code[${address}]`
    const bytes = hexToBytes(code, what)
    push(EntryKind.code, fixedBytes(address, 20, what), bytes.length === 0 ? undefined : bytes, what)
    yield
  }
  for (const [address, slots] of changes.storage) {
    const addr = fixedBytes(address, 20, `storage[${address}]`)
    for (const [slot, value] of slots) {
      const what = `storage[${address}][${slot}]`
      const key = Buffer.concat([addr, fixedBytes(slot, 32, `${what} slot`)])
      const word = fixedBytes(value, 32, `${what} value (ZERO_WORD deletes a slot)`)
      push(EntryKind.storage, key, value.toLowerCase() === ZERO_WORD ? undefined : word, what)
      yield
    }
  }
  for (const [address, meta] of changes.contracts) {
    const what = `contracts[${address}]`
    push(EntryKind.contract, fixedBytes(address, 20, what), encodeContractMeta(meta, what), what)
    yield
  }
}

/** base + Σ(new entries) − Σ(old entries), as a new vector (base untouched). */
export function applyDiffs(base: Uint16Array, diffs: EntryDiff[]): Uint16Array {
  return addLanes(base, changeLanes(diffs))
}

const sameBytes = (a: Buffer | undefined, b: Buffer | undefined): boolean =>
  a === undefined ? b === undefined : b !== undefined && a.equals(b)

export function sameDiffs(a: EntryDiff[], b: EntryDiff[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]
    const y = b[i]
    if (x.kind !== y.kind || !x.key.equals(y.key) || !sameBytes(x.old, y.old) || !sameBytes(x.next, y.next)) return false
  }
  return true
}

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
