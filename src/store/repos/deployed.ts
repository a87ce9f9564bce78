/** Keyspace 15 `deployed`: each creator's contracts in deployment order. */
import type { Hex } from '../../domain.ts'
import { bytesToHex, fixedBytes, tryFixedBytes, u32be } from '../codec.ts'
import type { Db, Write } from '../db.ts'

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

  /** the writes that append `deployments` after each creator's last stored entry, in their order */
  writes(out: Write[], deployments: readonly { creator: Hex; address: Hex }[]): void {
    const next = new Map<string, number>()
    for (const { creator, address } of deployments) {
      const prefix = fixedBytes(creator, 20, 'contract.creator')
      const id = prefix.toString('hex')
      let index = next.get(id)
      if (index === undefined) {
        index = 0
        for (const key of this.db.getKeys({ start: Buffer.concat([prefix, PAST_INDEX]), end: prefix, reverse: true, limit: 1 })) {
          index = (key as Buffer).readUInt32BE(20) + 1
        }
      }
      next.set(id, index + 1)
      out.push({ db: this.db, key: Buffer.concat([prefix, u32be(index)]), value: fixedBytes(address, 20, 'contract address') })
    }
  }
}
