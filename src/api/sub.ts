/**
 * Handlers of the `sub_` service: polling subscriptions (src/events/) and sub_getLogs over the
 * stored receipts; archive events come from src/archive/ through the event hub.
 */
import type { SubHandlers } from '../../generated/handlers.ts'
import type { BlockNumber, LogFilter, SubscriptionChanges, Log as WireLog } from '../../generated/types.ts'
import { bloomQuery } from '../crypto/log-bloom.ts'
import { InvalidParams, NoBlockGenerated } from '../errors.ts'
import { blockOf, compileLogCriteria, compileStatusFilter, matchLog, subscriptionCriteria } from '../events/filters.ts'
import type { PollingSubscriptions } from '../events/subscriptions.ts'
import { formatReceipt } from '../wire/format.ts'
import type { ChainReader } from './chain-reader.ts'

/** Most blocks one sub_getLogs call may span, and most logs it may return (reliability.md part B). */
export const MAX_LOG_RANGE = 5000
export const MAX_LOG_RESULTS = 10_000

export function createSubHandlers(modules: { chain: ChainReader; subscriptions: PollingSubscriptions }): SubHandlers {
  const { chain, subscriptions } = modules

  const getLogs = (filter: LogFilter = {}): WireLog[] => {
    const latest = chain.height()
    // with no block, only a filter bounded by the latest block (the default) asks about it; a
    // numbered bound falls to the range check below, as on any chain
    const numbered = (raw: BlockNumber | undefined): boolean => raw !== undefined && raw !== 'latest'
    if (latest === 0 && !numbered(filter.fromBlock) && !numbered(filter.toBlock)) throw new NoBlockGenerated()
    const genesis = chain.genesisNumber()
    const from = Math.max(blockOf(filter.fromBlock, latest) ?? genesis, genesis)
    const to = Math.min(blockOf(filter.toBlock, latest) ?? latest, latest)
    if (from > to) throw new InvalidParams(`invalid params. current genesis ${genesis}, current head ${latest}`)
    const span = to - from + 1
    if (span > MAX_LOG_RANGE) throw new InvalidParams(`range too large: at most ${MAX_LOG_RANGE} blocks per log query, asked for ${span}`)
    const criteria = compileLogCriteria(filter)
    const mayMatch = bloomQuery(criteria)
    const found: WireLog[] = []
    for (let number = from; number <= to; number++) {
      const bloom = chain.getBlock(number)?.logsBloom
      if (bloom !== undefined && !mayMatch(bloom)) continue
      for (const hash of chain.getBlockTxHashes(number)) {
        const receipt = chain.getReceipt(hash)
        if (receipt === undefined || receipt.logs.length === 0) continue
        for (const log of formatReceipt(receipt).log) {
          if (!matchLog(criteria, log)) continue
          if (found.length === MAX_LOG_RESULTS)
            throw new InvalidParams(`result too large: at most ${MAX_LOG_RESULTS} logs per call; narrow the range`)
          found.push(log)
        }
      }
    }
    return found
  }

  return {
    sub_newBlockSubscription: ([full]) => subscriptions.newBlockSubscription(full),
    sub_newEventSubscription: ([filter]) => subscriptions.newLogSubscription(subscriptionCriteria(filter, chain.height())),
    sub_getLogs: ([filter]) => getLogs(filter),
    sub_newSystemStatusSubscription: ([filter]) => subscriptions.newStatusSubscription(compileStatusFilter(filter)),
    sub_newArchiveSubscription: () => subscriptions.newArchiveSubscription(),
    sub_getSubscriptionChanges: ([id]) => subscriptions.changes(id) as SubscriptionChanges,
    sub_unSubscription: ([id]) => {
      subscriptions.remove(id)
      return true
    },
  }
}
