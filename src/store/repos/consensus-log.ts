/**
 * A VP's consensus log: what its consensus must remember across a crash (its view, its own votes,
 * checkpoints, batches it may have to re-propose), as opaque records the consensus codec writes.
 * Keys are chosen by the consensus layer, e.g. `vote/<view>/<seq>`, so a range read by prefix
 * finds one kind; values are its bytes.
 *
 * The log lives in an LMDB environment of its own (`<ledger>/consensus`), not in keyspace 23 of
 * the ledger: a vote must be on disk before it is sent (consensus.md §10.2), and in the ledger's
 * environment that wait queued behind the blocks and pooled transactions being written and synced
 * with them. Here a sync covers a few small pages: bench/consensus-log.ts, with the ledger busy,
 * p50 2.8–10.4 → 2.2–4.1 ms and p99 28–67 → 15–21 ms (three runs, a loaded machine); a VP waits
 * so three times per batch.
 */
import { join } from 'node:path'
import { open, type RootDatabase } from 'lmdb'
import type { Db } from '../db.ts'

export interface ConsensusWrite {
  key: string
  /** undefined deletes the record */
  value: Uint8Array | undefined
}

/** the consensus log's directory inside the ledger's */
export const CONSENSUS_LOG_DIR = 'consensus'
/** votes and checkpoints of a bounded window of slots: a few MiB at most */
const MAP_SIZE = 256 * 1024 * 1024

export class ConsensusLogRepo {
  private constructor(private readonly env: RootDatabase) {}

  /**
   * Opens the log in `ledgerPath`. Records an older layout kept in the ledger's keyspace 23
   * (`legacy`) are moved over once, so a VP upgraded in place still remembers its votes.
   */
  static async open(ledgerPath: string, legacy: Db): Promise<ConsensusLogRepo> {
    const env = open({ path: join(ledgerPath, CONSENSUS_LOG_DIR), mapSize: MAP_SIZE, keyEncoding: 'ordered-binary', encoding: 'binary' })
    const log = new ConsensusLogRepo(env)
    const moved: ConsensusWrite[] = []
    for (const { key, value } of legacy.getRange({})) {
      if (typeof key === 'string') moved.push({ key, value: value as Uint8Array })
    }
    if (moved.length > 0) {
      // written and synced here before they leave the ledger: a crash in between leaves both copies, and
      // the next open moves them again (same keys, same values)
      if (log.env.getKeysCount() === 0) await log.write(moved)
      await legacy.transaction(() => {
        for (const { key } of moved) legacy.removeSync(key)
      })
    }
    return log
  }

  /**
   * Writes all in one LMDB transaction and resolves once it is on disk (not only committed):
   * the node is about to tell peers what it wrote (consensus.md §10.2).
   */
  async write(writes: readonly ConsensusWrite[]): Promise<void> {
    await this.env.transaction(() => {
      for (const { key, value } of writes) {
        if (value === undefined) this.env.removeSync(key)
        else this.env.putSync(key, value)
      }
    })
    await this.env.flushed
  }

  /** records whose key starts with `prefix`, in key order */
  *read(prefix = ''): Generator<{ key: string; value: Uint8Array }> {
    for (const { key, value } of this.env.getRange({ start: prefix })) {
      if (typeof key !== 'string' || !key.startsWith(prefix)) return
      yield { key, value: value as Uint8Array }
    }
  }

  close(): Promise<void> {
    return this.env.close()
  }
}
