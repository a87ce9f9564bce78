/** The "Not found" answers of the query services for data that archive_archive moved out (-32001). */
import type { Hex } from '../domain.ts'
import { DataNotFound } from '../errors.ts'
import { toHex } from '../wire/format.ts'
import type { ChainReader } from './chain-reader.ts'

/**
 * `Not found <what> <key>`, plus, when `archivedBlock` is an archived block's number, where it
 * went and how to get it back. The message keeps the plain form's prefix, so a client matching
 * on it still does.
 */
export function notFound(
  chain: Pick<ChainReader, 'archiveRecord'>,
  what: string,
  key: Hex,
  archivedBlock: number | undefined,
): DataNotFound {
  if (archivedBlock === undefined) return new DataNotFound(`Not found ${what} ${key}`)
  const range = chain.archiveRecord().ranges.find((r) => r.from <= archivedBlock && archivedBlock <= r.to)
  const where = range === undefined ? 'was archived' : `was archived with snapshot ${range.snapshotId}`
  const back = range === undefined ? 'archive_restore brings it back' : `archive_restore ${range.snapshotId} brings it back`
  const subject = what === 'block hash' ? 'block' : 'its block'
  return new DataNotFound(`Not found ${what} ${key}: ${subject} ${toHex(archivedBlock)} ${where}; ${back}`)
}
