/** Keyspace 9 `signHashes`: (from, signHash) -> tx hash over pending, committed and invalid txs (ARCHITECTURE.md decision 4). */
import type { Hex } from '../../domain.ts'
import { bytesToHex, fixedBytes, tryFixedBytes } from '../codec.ts'
import type { Db, Write } from '../db.ts'

export function signKey(from: Hex, signHash: Hex): Buffer {
  return Buffer.concat([fixedBytes(from, 20, 'tx.from'), fixedBytes(signHash, 32, 'tx.signHash')])
}

export class SignHashesRepo {
  constructor(private readonly db: Db) {}

  find(from: Hex, signHash: Hex): Hex | undefined {
    const a = tryFixedBytes(from, 20)
    const b = tryFixedBytes(signHash, 32)
    if (a === undefined || b === undefined) return undefined
    return this.findKey(Buffer.concat([a, b]))
  }

  findKey(key: Buffer): Hex | undefined {
    const hash: Buffer | undefined = this.db.get(key)
    return hash === undefined ? undefined : bytesToHex(hash)
  }

  /** the writes that record each (key, tx hash) whose key is not stored yet; the first of a key keeps it */
  writesIfAbsent(out: Write[], entries: readonly { key: Buffer; hash: Buffer }[]): void {
    const taken = new Set<string>()
    for (const { key, hash } of entries) {
      const id = key.toString('hex')
      if (taken.has(id)) continue
      taken.add(id)
      if (!this.db.doesExist(key)) out.push({ db: this.db, key, value: hash })
    }
  }
}
