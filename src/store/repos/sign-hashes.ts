/** Keyspace 9 `signHashes`: (from, signHash) -> tx hash over pending, committed and invalid txs (ARCHITECTURE.md decision 4). */
import type { Hex } from '../../domain.ts'
import { bytesToHex, fixedBytes, tryFixedBytes } from '../codec.ts'
import type { Db } from '../db.ts'

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

  /** inside a write transaction; the first tx recorded under a key keeps it */
  putIfAbsent(key: Buffer, hash: Buffer): void {
    if (!this.db.doesExist(key)) this.db.putSync(key, hash)
  }
}
