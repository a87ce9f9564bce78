/** Keyspaces 4 `blockTxs`, 5 `blockInvalidTxs`: each block's tx hashes, packed as 32-byte runs. */
import type { Hex } from '../../domain.ts'
import { isBlockNumber, unpackHex } from '../codec.ts'
import type { Db } from '../db.ts'

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

  /** inside a write transaction; hash keys are 32 raw bytes each */
  put(number: number, valid: Buffer[], invalid: Buffer[]): void {
    this.valid.putSync(number, Buffer.concat(valid))
    this.invalid.putSync(number, Buffer.concat(invalid))
  }
}
