/** Keyspaces 4 `blockTxs`, 5 `blockInvalidTxs`: each block's tx hashes, packed as 32-byte runs. */
import type { Hex } from '../../domain.ts'
import { isBlockNumber, unpackHex } from '../codec.ts'
import type { Db, Write } from '../db.ts'

export class BlockTxsRepo {
  constructor(
    private readonly valid: Db,
    private readonly invalid: Db,
  ) {}

  validHashes(number: number): Hex[] {
    return isBlockNumber(number) ? unpackHex(this.valid.get(number), 32) : []
  }

  invalidHashes(number: number): Hex[] {
    return isBlockNumber(number) ? unpackHex(this.invalid.get(number), 32) : []
  }

  /** the writes that store block `number`'s tx hashes; hash keys are 32 raw bytes each */
  writes(out: Write[], number: number, valid: Buffer[], invalid: Buffer[]): void {
    out.push({ db: this.valid, key: number, value: Buffer.concat(valid) }, { db: this.invalid, key: number, value: Buffer.concat(invalid) })
  }
}
