/**
 * BlockState: one block's writes held in memory over the latest committed state.
 *
 * Reads fall through to the base `StateReader` (cached for the block's lifetime: the base does not
 * change while a block executes). Writes go to per-kind maps. Nested `checkpoint()` /
 * `commit()` / `revert()` keep an undo journal of (map, key, previous value) triples, so a revert
 * costs O(writes since the checkpoint) and nothing is ever copied wholesale. Writes made with no
 * checkpoint open are final for the block and are not journaled at all.
 *
 * `changes()` reports only final values that differ from the base, in ascending key order.
 *
 * Conventions: addresses lower-case `0x` hex; storage slots and values 32-byte lower-case `0x`
 * hex, with zero reported by `getStorage` as the 32-byte zero word.
 */
import { type Account, type ContractMeta, type Hex, type StateReader, type WorldChanges, ZERO_WORD } from '../domain.ts'

export { ZERO_WORD }

const ABSENT = Symbol('absent')

/**
 * The base state could not be read. Not a property of the transaction: the executor lets it
 * propagate (the block fails to execute on this node) instead of recording a failed transaction
 * that other nodes would not record.
 */
export class StateReadError extends Error {
  constructor(what: string, cause: unknown) {
    super(`state read failed: ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = 'StateReadError'
  }
}

/** Normalises a storage word read from anywhere to 32-byte lower-case hex. */
export function toWord(value: Hex | undefined): Hex {
  if (value === undefined || value.length <= 2) return ZERO_WORD
  if (value.length === 66) return value
  return `0x${value.slice(2).toLowerCase().padStart(64, '0')}`
}

function sameMeta(a: ContractMeta, b: ContractMeta): boolean {
  return (
    a.creator === b.creator &&
    a.createdAt === b.createdAt &&
    a.createdInBlock === b.createdInBlock &&
    a.status === b.status &&
    a.vmType === b.vmType
  )
}

const byKey = <V>(a: [Hex, V], b: [Hex, V]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)

export class BlockState implements StateReader {
  readonly base: StateReader

  // this block's writes; an account value of null means deleted
  private readonly accounts = new Map<Hex, Account | null>()
  private readonly code = new Map<Hex, Hex>()
  private readonly storage = new Map<Hex, Map<Hex, Hex>>()
  /** addresses whose base storage is hidden (cleared within this block) */
  private readonly cleared = new Map<Hex, true>()
  private readonly metas = new Map<Hex, ContractMeta>()

  // read-through caches of the base
  private readonly baseAccounts = new Map<Hex, Account | null>()
  private readonly baseCode = new Map<Hex, Hex>()
  private readonly baseStorage = new Map<Hex, Map<Hex, Hex>>()
  private readonly baseMetas = new Map<Hex, ContractMeta | null>()

  /** undo journal, flat: map, key, previous value (ABSENT = key was not in the map) */
  private readonly journal: unknown[] = []
  /** journal length at each open checkpoint */
  private readonly marks: number[] = []

  constructor(base: StateReader) {
    this.base = base
  }

  /** Number of open checkpoints. */
  get depth(): number {
    return this.marks.length
  }

  checkpoint(): number {
    this.marks.push(this.journal.length)
    return this.marks.length
  }

  /** Closes the innermost checkpoint, keeping its writes (they now belong to the enclosing one). */
  commit(): void {
    if (this.marks.pop() === undefined) throw new Error('BlockState.commit without a checkpoint')
    if (this.marks.length === 0) this.journal.length = 0
  }

  /** Undoes every write since the innermost checkpoint and closes it. */
  revert(): void {
    const mark = this.marks.pop()
    if (mark === undefined) throw new Error('BlockState.revert without a checkpoint')
    const j = this.journal
    for (let i = j.length - 3; i >= mark; i -= 3) {
      const map = j[i] as Map<unknown, unknown>
      const prev = j[i + 2]
      if (prev === ABSENT) map.delete(j[i + 1])
      else map.set(j[i + 1], prev)
    }
    j.length = mark
  }

  /** Reverts until only `depth` checkpoints remain open (recovery after an interrupted run). */
  revertTo(depth: number): void {
    while (this.marks.length > depth) this.revert()
  }

  private set<K, V>(map: Map<K, V>, key: K, value: V): void {
    if (this.marks.length > 0) this.journal.push(map, key, map.has(key) ? map.get(key) : ABSENT)
    map.set(key, value)
  }

  // ---- base reads (cached) ----

  private baseAccount(address: Hex): Account | undefined {
    let a = this.baseAccounts.get(address)
    if (a === undefined) {
      try {
        a = this.base.getAccount(address) ?? null
      } catch (e) {
        throw new StateReadError(`account ${address}`, e)
      }
      this.baseAccounts.set(address, a)
    }
    return a ?? undefined
  }

  private baseCodeOf(address: Hex): Hex {
    let c = this.baseCode.get(address)
    if (c === undefined) {
      try {
        c = this.base.getCode(address) || '0x'
      } catch (e) {
        throw new StateReadError(`code ${address}`, e)
      }
      this.baseCode.set(address, c)
    }
    return c
  }

  private baseSlot(address: Hex, slot: Hex): Hex {
    let slots = this.baseStorage.get(address)
    if (slots === undefined) {
      slots = new Map()
      this.baseStorage.set(address, slots)
    }
    let v = slots.get(slot)
    if (v === undefined) {
      try {
        v = toWord(this.base.getStorage(address, slot))
      } catch (e) {
        throw new StateReadError(`storage ${address} ${slot}`, e)
      }
      slots.set(slot, v)
    }
    return v
  }

  private baseMeta(address: Hex): ContractMeta | undefined {
    let m = this.baseMetas.get(address)
    if (m === undefined) {
      try {
        m = this.base.getContractMeta(address) ?? null
      } catch (e) {
        throw new StateReadError(`contract ${address}`, e)
      }
      this.baseMetas.set(address, m)
    }
    return m ?? undefined
  }

  // ---- StateReader ----

  getAccount(address: Hex): Account | undefined {
    const a = this.accounts.get(address)
    if (a !== undefined) return a ?? undefined
    return this.baseAccount(address)
  }

  getCode(address: Hex): Hex {
    return this.code.get(address) ?? this.baseCodeOf(address)
  }

  getStorage(address: Hex, slot: Hex): Hex {
    const v = this.storage.get(address)?.get(slot)
    if (v !== undefined) return v
    if (this.cleared.has(address)) return ZERO_WORD
    return this.baseSlot(address, slot)
  }

  getContractMeta(address: Hex): ContractMeta | undefined {
    return this.metas.get(address) ?? this.baseMeta(address)
  }

  // ---- writes ----

  /** Sets an account (the object is kept: never mutate it afterwards). */
  putAccount(address: Hex, account: Account): void {
    this.set(this.accounts, address, account)
  }

  /** Removes an account with its code and storage (EIP-6780 self-destruct of a same-tx contract). */
  deleteAccount(address: Hex): void {
    this.set(this.accounts, address, null)
    this.putCode(address, '0x')
    this.clearStorage(address)
  }

  putCode(address: Hex, code: Hex): void {
    this.set(this.code, address, code)
  }

  /** `value` is a 32-byte word; zero may be given as the zero word or `0x`. */
  putStorage(address: Hex, slot: Hex, value: Hex): void {
    let slots = this.storage.get(address)
    if (slots === undefined) {
      slots = new Map()
      this.set(this.storage, address, slots)
    }
    this.set(slots, slot, value.length === 66 ? value : toWord(value))
  }

  /**
   * Zeroes every slot of an address. Slots written in this block are zeroed one by one; base slots
   * are hidden from reads. The base cannot be enumerated, so `changes()` reports deletions only for
   * slots this block wrote: the EVM clears only addresses it is creating, whose base storage is
   * empty.
   */
  clearStorage(address: Hex): void {
    if (!this.cleared.has(address)) this.set(this.cleared, address, true)
    const slots = this.storage.get(address)
    if (slots === undefined) return
    for (const slot of slots.keys()) this.set(slots, slot, ZERO_WORD)
  }

  putContractMeta(address: Hex, meta: ContractMeta): void {
    this.set(this.metas, address, meta)
  }

  // ---- result ----

  /** Final values of everything this block changed, compared with the base; keys ascending. */
  changes(): WorldChanges {
    if (this.marks.length > 0) throw new Error('BlockState.changes with an open checkpoint')
    const accounts = new Map<Hex, Account>()
    for (const [address, acc] of [...this.accounts].sort(byKey)) {
      const base = this.baseAccount(address)
      if (acc === null) {
        // deletion: the record shape has no tombstone, an existing account becomes empty
        if (base !== undefined && (base.balance !== 0n || base.nonce !== 0n)) accounts.set(address, { balance: 0n, nonce: 0n })
        continue
      }
      if (base !== undefined && base.balance === acc.balance && base.nonce === acc.nonce) continue
      accounts.set(address, { balance: acc.balance, nonce: acc.nonce })
    }
    const code = new Map<Hex, Hex>()
    for (const [address, c] of [...this.code].sort(byKey)) {
      if (c !== this.baseCodeOf(address)) code.set(address, c)
    }
    const storage = new Map<Hex, Map<Hex, Hex>>()
    for (const [address, slots] of [...this.storage].sort(byKey)) {
      let out: Map<Hex, Hex> | undefined
      for (const [slot, v] of [...slots].sort(byKey)) {
        if (v === this.baseSlot(address, slot)) continue
        out ??= new Map()
        out.set(slot, v)
      }
      if (out) storage.set(address, out)
    }
    const contracts = new Map<Hex, ContractMeta>()
    for (const [address, meta] of [...this.metas].sort(byKey)) {
      const base = this.baseMeta(address)
      if (base === undefined || !sameMeta(base, meta)) contracts.set(address, { ...meta })
    }
    return { accounts, code, storage, contracts }
  }
}
