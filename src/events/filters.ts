/**
 * Filter rules of the spec's Events section (spec-notes.md) and protocol.md §6.
 *
 * Logs: `addresses` is a set of emitting contracts (case-insensitive, 0x optional); `topics` is
 * position-wise: a string must equal the log's topic at that position, a list matches any of its
 * topics, `null` (or an empty list) matches anything; a log with fewer topics than the filter has
 * positions does not match. Block bounds are inclusive.
 *
 * System status: per dimension (modules, subtypes, error codes) a non-empty include list wins,
 * otherwise the value must not be in the exclude list; all three must pass.
 *
 * Bounds (FILTER_LIMITS): a subscription keeps its filter for as long as it lives, so a filter is
 * refused with -32602 naming the limit when a list in it has more than 1000 entries (addresses,
 * the alternatives at one topic position, each status list), when it has more than 4 topic
 * positions (a log has at most 4 topics), or when it is over 64 KiB as JSON. 1000 subscriptions
 * with filters at the limit hold about 100 MB.
 */
import type { BlockNumber, LogFilter, SystemStatusFilter } from '../../generated/types.ts'
import { InvalidParams } from '../errors.ts'
import { stringifyJson } from '../wire/json.ts'
import type { SystemStatusMessage, WireLog } from './types.ts'

export const FILTER_LIMITS = {
  /** entries of one list: addresses, the alternatives at one topic position, a status list */
  listEntries: 1000,
  /** a log has at most 4 topics (LOG0…LOG4) */
  topicPositions: 4,
  /** the filter as JSON */
  bytes: 64 * 1024,
} as const

function checkList(kind: string, name: string, list: readonly unknown[] | null | undefined): void {
  if (list != null && list.length > FILTER_LIMITS.listEntries)
    throw new InvalidParams(`invalid params: a ${kind} filter may list at most ${FILTER_LIMITS.listEntries} ${name}; got ${list.length}`)
}

function checkBytes(kind: string, filter: object): void {
  const bytes = Buffer.byteLength(stringifyJson(filter))
  if (bytes > FILTER_LIMITS.bytes)
    throw new InvalidParams(`invalid params: a ${kind} filter may be at most ${FILTER_LIMITS.bytes} bytes as JSON; got ${bytes}`)
}

export interface LogCriteria {
  fromBlock?: number
  toBlock?: number
  /** lower-case, 0x-prefixed; undefined: any */
  addresses?: ReadonlySet<string>
  /** per position: the accepted topics (lower-case), or undefined for any */
  topics?: readonly (ReadonlySet<string> | undefined)[]
}

export interface LogFilterInput {
  addresses?: readonly string[]
  topics?: readonly (string | readonly string[] | null)[]
}

const normalAddress = (address: string): string =>
  (address.startsWith('0x') || address.startsWith('0X') ? `0x${address.slice(2)}` : `0x${address}`).toLowerCase()

/** The address and topic part of a filter (block bounds are resolved by the caller). */
export function compileLogCriteria(filter: LogFilterInput | undefined, bounds: { fromBlock?: number; toBlock?: number } = {}): LogCriteria {
  if (filter !== undefined) {
    checkList('log', 'addresses', filter.addresses)
    if (filter.topics != null && filter.topics.length > FILTER_LIMITS.topicPositions)
      throw new InvalidParams(
        `invalid params: a log filter may have at most ${FILTER_LIMITS.topicPositions} topic positions (a log has at most 4 topics); got ${filter.topics.length}`,
      )
    for (const entry of filter.topics ?? []) if (Array.isArray(entry)) checkList('log', 'alternative topics at one position', entry)
    checkBytes('log', filter)
  }
  const criteria: LogCriteria = { ...bounds }
  if (filter?.addresses !== undefined && filter.addresses.length > 0) criteria.addresses = new Set(filter.addresses.map(normalAddress))
  if (filter?.topics !== undefined && filter.topics.length > 0) {
    criteria.topics = filter.topics.map((entry) => {
      if (entry === null) return undefined
      const alternatives = typeof entry === 'string' ? [entry] : entry
      return alternatives.length === 0 ? undefined : new Set(alternatives.map((topic) => topic.toLowerCase()))
    })
  }
  return criteria
}

export function matchLog(criteria: LogCriteria, log: Pick<WireLog, 'address' | 'topics' | 'blockNumber'>): boolean {
  const number = Number(log.blockNumber)
  if (criteria.fromBlock !== undefined && number < criteria.fromBlock) return false
  if (criteria.toBlock !== undefined && number > criteria.toBlock) return false
  if (criteria.addresses !== undefined && !criteria.addresses.has(log.address.toLowerCase())) return false
  if (criteria.topics !== undefined) {
    if (log.topics.length < criteria.topics.length) return false
    for (let i = 0; i < criteria.topics.length; i++) {
      const accepted = criteria.topics[i]
      if (accepted !== undefined && !accepted.has(log.topics[i].toLowerCase())) return false
    }
  }
  return true
}

function dimension<T>(include: readonly T[] | undefined, exclude: readonly T[] | undefined): (value: T) => boolean {
  if (include !== undefined && include.length > 0) {
    const wanted = new Set(include)
    return (value) => wanted.has(value)
  }
  const unwanted = new Set(exclude ?? [])
  return (value) => !unwanted.has(value)
}

export type StatusMatcher = (message: Pick<SystemStatusMessage, 'module' | 'subType' | 'errorCode'>) => boolean

export function compileStatusFilter(filter: SystemStatusFilter | undefined): StatusMatcher {
  if (filter !== undefined) {
    for (const [name, list] of Object.entries(filter)) checkList('system status', name, Array.isArray(list) ? list : undefined)
    checkBytes('system status', filter)
  }
  const codes = (list: readonly (number | bigint)[] | undefined) => list?.map((code) => Number(code))
  const module = dimension(filter?.modules, filter?.modules_exclude)
  const subType = dimension(filter?.subtypes, filter?.subtypes_exclude)
  const errorCode = dimension(codes(filter?.error_codes), codes(filter?.error_codes_exclude))
  return (message) => module(message.module) && subType(message.subType) && errorCode(Number(message.errorCode))
}

/** A block number of a filter; `latest` is the current head. Past 2^53 it is simply "no limit". */
export function blockOf(raw: BlockNumber | undefined, latest: number): number | undefined {
  if (raw === undefined) return undefined
  if (raw === 'latest') return latest
  const value = BigInt(raw)
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value)
}

/** The criteria of a log subscription (polled or pushed): bounds resolved against the head `latest`. */
export function subscriptionCriteria(filter: LogFilter | undefined, latest: number): LogCriteria {
  const fromBlock = blockOf(filter?.fromBlock, latest)
  const toBlock = blockOf(filter?.toBlock, latest)
  if (fromBlock !== undefined && toBlock !== undefined && toBlock < fromBlock)
    throw new InvalidParams(`invalid params: toBlock ${toBlock} is below fromBlock ${fromBlock}`)
  return compileLogCriteria(filter, { fromBlock, toBlock })
}
