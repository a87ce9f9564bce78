/**
 * eth_subscribe over WebSocket (issue 28): `newHeads` pushes each new block's header, `logs` each
 * matching log, in Ethereum's notification shape (`eth_subscription`). src/rpc/ws.ts holds the
 * subscriptions with the Hyperchain dialect's, under the same per-connection limit; this module
 * gives it the Ethereum shapes, read from the store after each block.
 */

import { InvalidParams } from '../../errors.ts'
import type { EthereumPush } from '../../eth/envelope.ts'
import type { ChainReader } from '../chain-reader.ts'
import type { EthereumSettings } from './handlers.ts'
import { type LogFilter, logMatches, logQuery } from './query.ts'
import { ethBlock, ethLog, firstLogIndexes, placedTxs } from './shapes.ts'

export function createEthereumPush(chain: ChainReader, settings: EthereumSettings): EthereumPush {
  const chainId = BigInt(settings.chainId)
  return {
    subscription(params) {
      const [kind, filter] = params
      if (kind === 'newHeads') return { kind }
      if (kind === 'logs') {
        const query = logQuery(chain, {
          address: (filter as LogFilter | undefined)?.address,
          topics: (filter as LogFilter | undefined)?.topics,
        })
        return { kind, matches: (log) => logMatches(log, query) }
      }
      throw new InvalidParams(`invalid argument 0: Keel pushes "newHeads" and "logs"; got ${JSON.stringify(kind)?.slice(0, 64)}`)
    },
    head(number) {
      const header = chain.getBlock(number)
      if (header === undefined) return null
      const {
        transactions: _,
        uncles: __,
        ...head
      } = ethBlock(chain, header, false, chainId, BigInt(settings.blockGasLimit), BigInt(settings.txGasLimit))
      return head
    },
    logs(number) {
      const header = chain.getBlock(number)
      if (header === undefined) return []
      const placed = placedTxs(chain, header)
      const firsts = firstLogIndexes(placed)
      return placed.flatMap((item) =>
        (item.receipt?.logs ?? []).map((log, i) => ({ log, shaped: ethLog(log, item, firsts[item.index] + i) })),
      )
    },
  }
}
