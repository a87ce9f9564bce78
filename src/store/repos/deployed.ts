/** Keyspace 15 `deployed`: each creator's contracts in deployment order. */
import type { Hex } from '../../domain.ts'
import { bytesToHex, fixedBytes, tryFixedBytes, u32be } from '../codec.ts'
import type { Db } from '../db.ts'

const PAST_INDEX = Buffer.alloc(5, 0xff)

export class DeployedRepo {
  constructor(private readonly db: Db) {}

  list(creator: Hex): Hex[] {
    const prefix = tryFixedBytes(creator, 20)
    if (prefix === undefined) return []
    const out: Hex[] = []
    for (const { value } of this.db.getRange({ start: prefix, end: Buffer.concat([prefix, PAST_INDEX]) })) out.push(bytesToHex(value))
    return out
  }

  /** inside a write transaction: appends after the creator's last entry (reads see the transaction's own writes) */
  append(creator: Hex, contract: Hex): void {
    const prefix = fixedBytes(creator, 20, 'contract.creator')
    let index = 0
    for (const key of this.db.getKeys({ start: Buffer.concat([prefix, PAST_INDEX]), end: prefix, reverse: true, limit: 1 })) {
      index = (key as Buffer).readUInt32BE(20) + 1
    }
    this.db.putSync(Buffer.concat([prefix, u32be(index)]), fixedBytes(contract, 20, 'contract address'))
  }
}
