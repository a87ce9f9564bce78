/**
 * eth_newFilter, eth_newBlockFilter and their polling (issue 28). Filters live in the memory of the
 * thread that made them, as geth keeps them in the node's memory, and lapse after five minutes
 * without a poll (geth's deadline). With several request threads a client must poll through the
 * connection that made the filter (an HTTP keep-alive or WebSocket connection stays on one thread).
 */
import { randomBytes } from 'node:crypto'
import type { Hex } from '../../domain.ts'
import { InvalidParams } from '../../errors.ts'
import { TransactionRejected } from '../../eth/errors.ts'
import type { ChainReader } from '../chain-reader.ts'
import { type LogFilter, logQuery, logsIn } from './query.ts'

const LAPSE_MS = 5 * 60_000
const MAX_FILTERS = 10_000

interface Filter {
  kind: 'logs' | 'blocks' | 'pending'
  filter?: LogFilter
  /** the last block whose changes were handed out */
  seen: number
  polledAt: number
}

export function createEthFilters(chain: ChainReader, allLogs: (filter: LogFilter) => unknown[]) {
  const filters = new Map<string, Filter>()
  const sweep = (): void => {
    const now = Date.now()
    for (const [id, filter] of filters) if (now - filter.polledAt > LAPSE_MS) filters.delete(id)
  }
  const install = (filter: Omit<Filter, 'seen' | 'polledAt'>): Hex => {
    sweep()
    if (filters.size >= MAX_FILTERS) throw new TransactionRejected(`too many filters: at most ${MAX_FILTERS}; uninstall some`)
    const id = `0x${randomBytes(16).toString('hex')}`
    filters.set(id, { ...filter, seen: chain.height(), polledAt: Date.now() })
    return id
  }
  const get = (raw: unknown): Filter => {
    if (typeof raw !== 'string') throw new InvalidParams('invalid argument 0: a filter id')
    const filter = filters.get(raw.toLowerCase())
    if (filter === undefined) throw new TransactionRejected('filter not found')
    filter.polledAt = Date.now()
    return filter
  }
  return {
    newLogFilter(filter: LogFilter) {
      logQuery(chain, filter) // refuses a malformed filter now, not at its first poll
      return install({ kind: 'logs', filter: filter ?? {} })
    },
    newBlockFilter: () => install({ kind: 'blocks' }),
    newPendingFilter: () => install({ kind: 'pending' }),
    changes(id: unknown) {
      const filter = get(id)
      const height = chain.height()
      const from = filter.seen + 1
      filter.seen = height
      if (filter.kind === 'pending') return []
      if (filter.kind === 'blocks') {
        const hashes: Hex[] = []
        for (let number = from; number <= height; number++) {
          const header = chain.getBlock(number)
          if (header !== undefined) hashes.push(header.hash)
        }
        return hashes
      }
      if (from > height) return []
      // only the new blocks, within the filter's own range
      const query = logQuery(chain, { ...filter.filter, fromBlock: undefined, toBlock: undefined })
      // the filter's own bounds, when it names them (no fromBlock: from its installation on)
      const own = logQuery(chain, {
        ...filter.filter,
        fromBlock: filter.filter?.fromBlock ?? 'earliest',
        toBlock: filter.filter?.toBlock ?? 'latest',
      })
      return logsIn(chain, { ...query, from: Math.max(from, own.from), to: Math.min(height, own.to) })
    },
    logs(id: unknown) {
      const filter = get(id)
      if (filter.kind !== 'logs') throw new TransactionRejected('filter not found: not a log filter')
      return allLogs(filter.filter ?? {})
    },
    uninstall(id: unknown) {
      if (typeof id !== 'string') throw new InvalidParams('invalid argument 0: a filter id')
      return filters.delete(id.toLowerCase())
    },
  }
}
