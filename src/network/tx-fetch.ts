/**
 * Transactions a batch names that this node does not hold (its relay was lost, or the node was
 * down): asked for by hash from a peer that has them, the primary first (consensus.md §3 step 6).
 * Whatever comes back is admitted again and must hash to what was asked; a peer cannot slip in
 * another transaction.
 */
import type { TxPool } from '../chain/pool.ts'
import type { Hex, SignedTx } from '../domain.ts'
import { DuplicateTransaction } from '../errors.ts'
import type { Logger } from '../log.ts'
import { parseJson, stringifyJson } from '../wire/json.ts'
import { Channel } from './channels.ts'
import { decodeTxs, encodeTxs } from './tx-relay.ts'

export interface FetchNetwork {
  onRequest(channel: number, handler: (from: { hostname: string; vp: boolean }, payload: Uint8Array) => Promise<Uint8Array>): void
  request(hostname: string, channel: number, payload: Uint8Array, timeoutMs: number): Promise<Uint8Array>
}

/** most hashes one request may name (a batch holds at most this many) */
export const MAX_FETCH = 1000
const FETCH_TIMEOUT_MS = 5000
const HASH = /^0x[0-9a-f]{64}$/

/** where a node finds a transaction's body: its pool, else its chain */
export interface TxBodies {
  pooled(hash: Hex): SignedTx | undefined
  committed(hash: Hex): SignedTx | undefined
}

/** Answers peers asking for transactions by hash with those this node holds (the rest are left out). */
export function serveTxFetches(network: FetchNetwork, bodies: TxBodies): void {
  network.onRequest(Channel.fetchTxs, async (from, payload) => {
    if (!from.vp) throw new Error('only VPs fetch transactions for batches')
    const hashes = parseJson(Buffer.from(payload).toString('utf8'), { maxDepth: 2 })
    if (!Array.isArray(hashes) || hashes.length > MAX_FETCH || !hashes.every((hash) => typeof hash === 'string' && HASH.test(hash))) {
      throw new Error(`a transaction fetch is a JSON array of at most ${MAX_FETCH} lower-case 0x hashes`)
    }
    const found: SignedTx[] = []
    for (const hash of hashes as Hex[]) {
      const tx = bodies.pooled(hash) ?? bodies.committed(hash)
      if (tx !== undefined) found.push(tx)
    }
    return encodeTxs(found)
  })
}

/**
 * Asks `peers` in turn for `hashes` and pools what they return (as relayed transactions).
 * Resolves with the hashes still missing after every peer was asked.
 */
export async function fetchMissingTxs(options: {
  network: FetchNetwork
  pool: TxPool
  peers: readonly string[]
  hashes: readonly Hex[]
  nowNs(): bigint
  log: Logger
}): Promise<Hex[]> {
  let missing = new Set(options.hashes)
  for (const peer of options.peers) {
    if (missing.size === 0) break
    let txs: SignedTx[]
    try {
      const asked = [...missing].slice(0, MAX_FETCH)
      const reply = await options.network.request(peer, Channel.fetchTxs, Buffer.from(stringifyJson(asked)), FETCH_TIMEOUT_MS)
      txs = decodeTxs(reply, { nowNs: options.nowNs, timeWindow: false })
    } catch (error) {
      options.log.warn(`fetching ${missing.size} transactions from ${peer} failed: ${(error as Error).message}`)
      continue
    }
    const stillMissing = new Set(missing)
    for (const tx of txs) {
      if (!missing.has(tx.hash)) {
        options.log.warn(`${peer} answered a transaction fetch with ${tx.hash}, which was not asked for; ignored`)
        continue
      }
      try {
        await options.pool.add(tx, { fromPeer: true })
      } catch (error) {
        // pooled meanwhile (a relay arrived): it is there all the same
        if (!(error instanceof DuplicateTransaction)) throw error
      }
      stillMissing.delete(tx.hash)
    }
    missing = stillMissing
  }
  return [...missing]
}
