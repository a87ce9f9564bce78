/**
 * The world-state changes of one executed block, as handed to the store.
 *
 * Only final values, only what differs from the state the block was executed on. Keys are
 * lower-case `0x` hex; every map is in ascending key order (so two nodes hand the store the
 * same sequence). Storage slots and values are 32-byte `0x` hex; a value of `0x` deletes the slot.
 */
import type { Account, ContractMeta, Hex } from '../domain.ts'

export interface WorldChanges {
  /** full new value per changed account */
  accounts: Map<Hex, Account>
  /** new code per address (`0x` removes) */
  code: Map<Hex, Hex>
  /** address -> 32-byte slot -> 32-byte value (`0x` deletes) */
  storage: Map<Hex, Map<Hex, Hex>>
  /** new or changed contract metadata */
  contracts: Map<Hex, ContractMeta>
}

/** A WorldChanges with nothing in it. */
export function emptyChanges(): WorldChanges {
  return { accounts: new Map(), code: new Map(), storage: new Map(), contracts: new Map() }
}
