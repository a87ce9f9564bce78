/** What the chain thread's metrics read from the node that no module counts for them. */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** bytes of the files under `dir` (a missing directory counts 0): read at each scrape */
export function directoryBytes(dir: string): number {
  let total = 0
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return 0
  }
  for (const entry of entries) {
    const path = join(dir, entry)
    try {
      const stat = statSync(path)
      total += stat.isDirectory() ? directoryBytes(path) : stat.size
    } catch {
      // removed between the listing and the stat (a compacted pool-log segment)
    }
  }
  return total
}

/** a view change that finished, as the consensus module raises it (events/status.ts viewChangeFinished) */
export const isViewChangeFinished = (status: { module: string; subType: string; status: boolean }): boolean =>
  status.module === 'consensus' && status.subType === 'viewchange' && status.status
