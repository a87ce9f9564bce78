/**
 * Block tags and log queries of the Ethereum dialect (issue 28).
 *
 * Tags: latest, pending, safe and finalized are all the latest block (BFT blocks are final when
 * written; Keel shows no pending block); earliest is block 0, which Keel shows as an empty block
 * before its first (shapes.ts genesisHeader). Keel keeps the latest state only, so a state query
 * about an older block is refused with a message saying so rather than answered from newer state.
 */

import type { Hex, Log } from '../../domain.ts'
import { InvalidParams } from '../../errors.ts'
import { TransactionRejected } from '../../eth/errors.ts'
import type { ChainReader } from '../chain-reader.ts'
import { ethLog, firstLogIndexes, placedTxs } from './shapes.ts'

/** A block parameter: a tag, a 0x number, or EIP-1898's {blockNumber} / {blockHash}. */
export type BlockSelector = string | { blockNumber?: string; blockHash?: string; requireCanonical?: boolean } | undefined | null

const QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/
const HASH = /^0x[0-9a-fA-F]{64}$/

/** The block number a selector names (undefined: past the head, or a hash no block has). */
export function blockOfTag(chain: ChainReader, selector: BlockSelector): number | undefined {
  if (selector === undefined || selector === null) return chain.height()
  if (typeof selector === 'object') {
    if (typeof selector.blockHash === 'string') {
      if (!HASH.test(selector.blockHash)) throw new InvalidParams('invalid argument: blockHash must be a 32-byte 0x hash')
      return chain.getBlockByHash(selector.blockHash.toLowerCase())?.number
    }
    return blockOfTag(chain, selector.blockNumber)
  }
  switch (selector) {
    case 'latest':
    case 'pending':
    case 'safe':
    case 'finalized':
      return chain.height()
    case 'earliest':
      return 0
  }
  if (typeof selector !== 'string' || !QUANTITY.test(selector))
    throw new InvalidParams(
      `invalid argument: a block is latest, pending, safe, finalized, earliest, a 0x block number or {blockHash}; got ${JSON.stringify(selector).slice(0, 80)}`,
    )
  const number = BigInt(selector)
  return number > BigInt(chain.height()) ? undefined : Number(number)
}

/** Checks that a state query's block is the latest: Keel keeps no older state. */
export function stateBlock(chain: ChainReader, selector: BlockSelector): void {
  const number = blockOfTag(chain, selector)
  if (number === undefined) throw new TransactionRejected('header not found')
  if (number !== chain.height())
    throw new TransactionRejected(
      `missing trie node: Keel keeps the latest state only (block ${chain.height()}); block ${number} is older (use latest)`,
    )
}

export interface LogFilter {
  fromBlock?: BlockSelector
  toBlock?: BlockSelector
  blockHash?: string
  address?: string | string[] | null
  topics?: (string | string[] | null)[] | null
}

/** most blocks one eth_getLogs may span (geth has no bound; Keel's Hyperchain dialect allows 5000 for sub_getLogs) */
export const MAX_LOG_RANGE = 5000

export interface LogQuery {
  from: number
  to: number
  addresses: Set<Hex> | undefined
  topics: (Set<Hex> | undefined)[]
}

export function logQuery(chain: ChainReader, filter: LogFilter | undefined | null): LogQuery {
  const f = filter ?? {}
  if (typeof f !== 'object' || Array.isArray(f)) throw new InvalidParams('invalid argument 0: the filter must be an object')
  let from: number | undefined
  let to: number | undefined
  if (f.blockHash !== undefined) {
    if (f.fromBlock !== undefined || f.toBlock !== undefined)
      throw new InvalidParams('invalid argument 0: blockHash cannot be combined with fromBlock/toBlock')
    from = to = blockOfTag(chain, { blockHash: f.blockHash })
    if (from === undefined) throw new TransactionRejected('unknown block')
  } else {
    from = blockOfTag(chain, f.fromBlock ?? 'latest') ?? chain.height() + 1
    to = blockOfTag(chain, f.toBlock ?? 'latest') ?? chain.height()
  }
  if ((to as number) - from + 1 > MAX_LOG_RANGE)
    throw new TransactionRejected(`query exceeds max block range ${MAX_LOG_RANGE}: ask for fewer blocks`)
  const addresses =
    f.address === undefined || f.address === null
      ? undefined
      : new Set((Array.isArray(f.address) ? f.address : [f.address]).map((a) => checkedHex(a, 20, 'address')))
  const topics = (f.topics ?? []).map((topic) =>
    topic === null ? undefined : new Set((Array.isArray(topic) ? topic : [topic]).map((t) => checkedHex(t, 32, 'topic'))),
  )
  if (topics.length > 4) throw new InvalidParams('invalid argument 0: at most 4 topic positions')
  return { from: Math.max(from, 1), to: to as number, addresses, topics }
}

function checkedHex(raw: unknown, bytes: number, what: string): Hex {
  if (typeof raw !== 'string' || !new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(raw))
    throw new InvalidParams(`invalid argument 0: ${what} must be ${bytes} bytes of 0x hex; got ${JSON.stringify(raw)?.slice(0, 80)}`)
  return raw.toLowerCase()
}

export function logMatches(log: Log, query: Pick<LogQuery, 'addresses' | 'topics'>): boolean {
  if (query.addresses !== undefined && !query.addresses.has(log.address.toLowerCase())) return false
  for (const [i, wanted] of query.topics.entries()) {
    if (wanted === undefined || wanted.size === 0) continue
    const topic = log.topics[i]
    if (topic === undefined || !wanted.has(topic.toLowerCase())) return false
  }
  return true
}

/** The logs a filter selects, in chain order, in Ethereum's shape. */
export function ethLogs(chain: ChainReader, filter: LogFilter | undefined | null, _chainId: bigint, _txGasLimit: bigint) {
  return logsIn(chain, logQuery(chain, filter))
}

export function logsIn(chain: ChainReader, query: LogQuery) {
  const out: ReturnType<typeof ethLog>[] = []
  for (let number = query.from; number <= query.to; number++) {
    const header = chain.getBlock(number)
    if (header === undefined) continue
    // a block whose bloom is empty has no logs (a header written before blooms has none recorded: scanned)
    if (header.logsBloom !== undefined && header.logsBloom.length === 0) continue
    const placed = placedTxs(chain, header)
    const firsts = firstLogIndexes(placed)
    for (const item of placed) {
      for (const [i, log] of (item.receipt?.logs ?? []).entries())
        if (logMatches(log, query)) out.push(ethLog(log, item, firsts[item.index] + i))
    }
  }
  return out
}
