/**
 * Keyspace 23 `consensus`: what this VP's consensus must remember across a crash (its view, its
 * own votes, checkpoints, batches it may have to re-propose), as opaque records the consensus
 * codec writes. Keys are chosen by the consensus layer, e.g. `vote/<view>/<seq>`, so a range read
 * by prefix finds one kind; values are its bytes.
 */
import type { RootDatabase } from 'lmdb'
import type { Db } from '../db.ts'

export interface ConsensusWrite {
  key: string
  /** undefined deletes the record */
  value: Uint8Array | undefined
}

export class ConsensusLogRepo {
  constructor(
    private readonly env: RootDatabase,
    private readonly db: Db,
  ) {}

  /**
   * Writes all in one LMDB transaction and resolves once it is on disk (not only committed):
   * the node is about to tell peers what it wrote (consensus.md §10.2).
   */
  async write(writes: readonly ConsensusWrite[]): Promise<void> {
    await this.env.transaction(() => {
      for (const { key, value } of writes) {
        if (value === undefined) this.db.removeSync(key)
        else this.db.putSync(key, value)
      }
    })
    await this.env.flushed
  }

  /** records whose key starts with `prefix`, in key order */
  *read(prefix = ''): Generator<{ key: string; value: Uint8Array }> {
    for (const { key, value } of this.db.getRange({ start: prefix })) {
      if (typeof key !== 'string' || !key.startsWith(prefix)) return
      yield { key, value: value as Uint8Array }
    }
  }
}
