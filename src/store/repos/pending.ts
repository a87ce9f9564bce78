/**
 * Keyspaces 13 `pending` and 14 `pendingByHash`, retired: pending txs of an older store layout, in
 * arrival order. The pool log (../pool-log.ts) holds pending txs now; the pool moves what it finds
 * here into its log at start, then clears these.
 */
import type { SignedTx } from '../../domain.ts'
import type { Db } from '../db.ts'

export class PendingRepo {
  constructor(
    private readonly bySeq: Db,
    private readonly byHash: Db,
  ) {}

  all(): SignedTx[] {
    const out: SignedTx[] = []
    for (const { value } of this.bySeq.getRange({})) out.push(value)
    return out
  }

  /** inside a write transaction */
  clear(): void {
    for (const key of this.bySeq.getKeys({})) this.bySeq.removeSync(key)
    for (const key of this.byHash.getKeys({})) this.byHash.removeSync(key)
  }
}
