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

/**
 * A StateReader over one function that gives an entry's stored canonical bytes: the latest state's
 * (WorldStateRepo) or a past one's (repos/state-undo.ts lays a block's undo records over it).
 */
export function stateReaderOver(raw: (kind: EntryKindValue, key: Buffer) => Buffer | undefined): StateReader {
  return {
    getAccount(address: Hex): Account | undefined {
      const key = tryFixedBytes(address, 20)
      const bytes = key === undefined ? undefined : raw(EntryKind.account, key)
      return bytes === undefined ? undefined : decodeAccount(bytes)
    },
    getCode(address: Hex): Hex {
      const key = tryFixedBytes(address, 20)
      const bytes = key === undefined ? undefined : raw(EntryKind.code, key)
      return bytes === undefined ? '0x' : bytesToHex(bytes)
    },
    getStorage(address: Hex, slot: Hex): Hex {
      const addr = tryFixedBytes(address, 20)
      if (addr === undefined) return ZERO_WORD
      let slotBytes: Buffer
      try {
        slotBytes = word32(slot, 'slot')
      } catch {
        return ZERO_WORD
      }
      const bytes = raw(EntryKind.storage, Buffer.concat([addr, slotBytes]))
      return bytes === undefined ? ZERO_WORD : bytesToHex(bytes)
    },
    getContractMeta(address: Hex): ContractMeta | undefined {
      const key = tryFixedBytes(address, 20)
      const bytes = key === undefined ? undefined : raw(EntryKind.contract, key)
      return bytes === undefined ? undefined : decodeContractMeta(bytes)
    },
  }
}

export class WorldStateRepo implements StateReader {
  private readonly reader: StateReader

  constructor(private readonly dbs: Record<WorldKeyspace, Db>) {
    this.reader = stateReaderOver((kind, key) => this.raw(kind, key))
  }

  getAccount(address: Hex): Account | undefined {
    return this.reader.getAccount(address)
  }

  getCode(address: Hex): Hex {
    return this.reader.getCode(address)
  }

  getStorage(address: Hex, slot: Hex): Hex {
    return this.reader.getStorage(address, slot)
  }

  getContractMeta(address: Hex): ContractMeta | undefined {
    return this.reader.getContractMeta(address)
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
