/**
 * Keyspaces 16 `accounts`, 17 `code`, 18 `storage`, 19 `contracts`: the world state as of the
 * latest committed block, stored in the canonical encodings of state-codec.ts.
 */
import { type Account, type ContractMeta, type Hex, type StateReader, ZERO_WORD } from '../../domain.ts'
import { bytesToHex, tryFixedBytes, word32 } from '../codec.ts'
import type { Db, Write } from '../db.ts'
import { decodeAccount, decodeContractMeta, EntryKind, type EntryKindValue } from '../state-codec.ts'

export type WorldKeyspace = 'accounts' | 'code' | 'storage' | 'contracts'

export const keyspaceOfKind: Record<EntryKindValue, WorldKeyspace> = {
  [EntryKind.account]: 'accounts',
  [EntryKind.code]: 'code',
  [EntryKind.storage]: 'storage',
  [EntryKind.contract]: 'contracts',
}

export class WorldStateRepo implements StateReader {
  constructor(private readonly dbs: Record<WorldKeyspace, Db>) {}

  getAccount(address: Hex): Account | undefined {
    const key = tryFixedBytes(address, 20)
    const bytes: Buffer | undefined = key && this.dbs.accounts.get(key)
    return bytes === undefined ? undefined : decodeAccount(bytes)
  }

  getCode(address: Hex): Hex {
    const key = tryFixedBytes(address, 20)
    const bytes: Buffer | undefined = key && this.dbs.code.get(key)
    return bytes === undefined ? '0x' : bytesToHex(bytes)
  }

  getStorage(address: Hex, slot: Hex): Hex {
    const addr = tryFixedBytes(address, 20)
    if (addr === undefined) return ZERO_WORD
    let slotBytes: Buffer
    try {
      slotBytes = word32(slot, 'slot')
    } catch {
      return ZERO_WORD
    }
    const bytes: Buffer | undefined = this.dbs.storage.get(Buffer.concat([addr, slotBytes]))
    return bytes === undefined ? ZERO_WORD : bytesToHex(bytes)
  }

  getContractMeta(address: Hex): ContractMeta | undefined {
    const key = tryFixedBytes(address, 20)
    const bytes: Buffer | undefined = key && this.dbs.contracts.get(key)
    return bytes === undefined ? undefined : decodeContractMeta(bytes)
  }

  /** the stored canonical bytes of one entry */
  raw(kind: EntryKindValue, key: Buffer): Buffer | undefined {
    return this.dbs[keyspaceOfKind[kind]].get(key)
  }

  /** the write of one entry; `value` undefined deletes it */
  writes(out: Write[], kind: EntryKindValue, key: Buffer, value: Buffer | undefined): void {
    out.push({ db: this.dbs[keyspaceOfKind[kind]], key, value })
  }
}
