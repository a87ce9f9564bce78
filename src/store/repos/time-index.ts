/** Range reads over the time-ordered index keyspaces (10 txTime, 11 invalidTxTime, 12 blockTime): keys start with time64. */
import { clampTime, time64 } from '../codec.ts'
import type { Db } from '../db.ts'

/** Sorts after every key whose first 8 bytes equal the bound: time64(end) ‖ 0xff… longer than any suffix. */
const AFTER_SUFFIX = Buffer.alloc(33, 0xff)

/** Keys of `db` whose time part lies in [startNs, endNs], in key order, at most `limit` (no limit when undefined). */
export function keysInTime(db: Db, startNs: bigint, endNs: bigint, limit?: number): Buffer[] {
  if (startNs > endNs || (limit !== undefined && limit <= 0)) return []
  const start = time64(clampTime(startNs), 'start')
  const end = Buffer.concat([time64(clampTime(endNs), 'end'), AFTER_SUFFIX])
  const keys: Buffer[] = []
  for (const key of db.getKeys({ start, end, limit })) keys.push(key as Buffer)
  return keys
}

/** time64 ‖ suffix */
export function timeKey(ns: bigint, what: string, suffix: Buffer): Buffer {
  return Buffer.concat([time64(ns, what), suffix])
}
