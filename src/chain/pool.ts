/**
 * The transaction pool: duplicate detection, back-pressure, durability and batched signature
 * verification off the request path.
 *
 * A submission is answered only after its LMDB write commits, so a hash that was returned survives
 * kill -9 (decision 8); on restart the pending table is reloaded. Duplicates are keyed on the tx
 * hash and on (from, sign hash), across the pool and the chain (decision 4).
 */

import type { Hex, SignedTx } from '../domain.ts'
import { DuplicateTransaction, SystemBusy } from '../errors.ts'
import type { Logger } from '../log.ts'
import { DuplicateTxError } from '../store/index.ts'

export interface PendingStore {
  hasTx(hash: Hex): boolean
  findBySignHash(from: Hex, signHash: Hex): Hex | undefined
  putPending(tx: SignedTx): Promise<void>
  getPending(): SignedTx[]
}

/** Verifies signatures of many transactions at once; true where the signature recovers `from`. */
export interface SignatureVerifier {
  verify(txs: readonly SignedTx[]): Promise<boolean[]>
}

export interface ReadyTx {
  tx: SignedTx
  signatureValid: boolean
}

interface Entry {
  tx: SignedTx
  /** undefined until the verifier answers */
  signatureValid: boolean | undefined
  arrivedAt: number
  /** in a batch being ordered: out of the queue until it commits or is given back */
  taken: boolean
}

export interface TxPool {
  /**
   * Admits a checked transaction; resolves once it is durable. A transaction relayed by a peer
   * (`fromPeer`) is not refused for a full pool: the peer that admitted it already answered the
   * client, and every VP must hold it to order it (consensus.md §3 step 2).
   */
  add(tx: SignedTx, options?: { fromPeer?: boolean }): Promise<void>
  /** The pooled transaction with this hash (waiting or taken), and its signature check once known. */
  get(hash: Hex): { tx: SignedTx; signatureValid: boolean | undefined } | undefined
  /** Transactions waiting (not taken) that arrived more than `olderThanMs` ago, oldest first, at most `max`. */
  waiting(olderThanMs: number, max: number): SignedTx[]
  /** Gives taken transactions that were not committed back to the head of the queue, in the order given. */
  requeue(hashes: readonly Hex[]): void
  /** Verified transactions at the head of the queue, in arrival order, taken out of the queue. */
  take(max: number): ReadyTx[]
  /** Verified transactions waiting at the head of the queue. */
  readyCount(): number
  /** When the oldest waiting transaction arrived (ms), or undefined when none waits. */
  oldestArrival(): number | undefined
  /** Forgets transactions that reached the chain, taken or not (another node's batch may have held them). */
  settle(hashes: readonly Hex[]): void
  /** Transactions admitted and not yet in a block. */
  size(): number
  /** Reloads the durable pending table after a restart. */
  restore(): Promise<number>
  /** Called whenever transactions become ready. */
  onReady(listener: () => void): void
}

export interface PoolOptions {
  store: PendingStore
  verifier: SignatureVerifier
  /** most transactions waiting at once; past it submissions get -32006 */
  capacity: number
  /** largest batch handed to the verifier */
  verifyBatch: number
  log: Logger
}

const signKey = (tx: SignedTx): string => `${tx.from}|${tx.signHash}`

export function createTxPool(options: PoolOptions): TxPool {
  const { store, verifier, log } = options
  const byHash = new Map<Hex, Entry>()
  const bySign = new Map<string, Hex>()
  const queue: Entry[] = []
  let head = 0
  /** entries after `head` settled or taken while still queued: skipped, dropped by compact() */
  let dead = 0
  const toVerify: Entry[] = []
  let verifying = false
  let retryAfterMs = 0
  const listeners: (() => void)[] = []

  const notify = (): void => {
    for (const listener of listeners) listener()
  }

  const pump = (): void => {
    if (verifying || toVerify.length === 0) return
    verifying = true
    const batch = toVerify.splice(0, options.verifyBatch)
    verifier
      .verify(batch.map((entry) => entry.tx))
      .then(
        (results) => {
          for (const [i, entry] of batch.entries()) entry.signatureValid = results[i] === true
        },
        (error: unknown) => {
          // a verifier fault must not stall the chain nor wrongly pass a signature: retry the batch,
          // after a pause (a closed verifier fails at once; unref'd so a stopped node can exit)
          log.error('signature verification failed; retrying the batch in 1 s', error)
          toVerify.unshift(...batch)
          retryAfterMs = 1000
        },
      )
      .finally(() => {
        verifying = false
        notify()
        if (toVerify.length === 0) return
        if (retryAfterMs === 0) setImmediate(pump)
        else setTimeout(pump, retryAfterMs).unref()
        retryAfterMs = 0
      })
  }

  const enqueue = (entry: Entry): void => {
    queue.push(entry)
    toVerify.push(entry)
    if (!verifying) setImmediate(pump)
  }

  const reserve = (tx: SignedTx): Entry => {
    if (byHash.has(tx.hash) || store.hasTx(tx.hash)) throw new DuplicateTransaction(`Repeated transaction ${tx.hash}`)
    if (bySign.has(signKey(tx)) || store.findBySignHash(tx.from, tx.signHash) !== undefined) {
      throw new DuplicateTransaction(`Repeated transaction ${tx.hash}`)
    }
    const entry: Entry = { tx, signatureValid: undefined, arrivedAt: Date.now(), taken: false }
    byHash.set(tx.hash, entry)
    bySign.set(signKey(tx), tx.hash)
    return entry
  }

  /** an entry still waiting in the queue */
  const live = (entry: Entry): boolean => !entry.taken && byHash.get(entry.tx.hash) === entry

  const compact = (): void => {
    if (dead > 1024 && dead * 2 > queue.length - head) {
      const kept = queue.slice(head).filter(live)
      queue.length = 0
      queue.push(...kept)
      head = 0
      dead = 0
    } else if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head)
      head = 0
    }
  }

  /** moves `head` past entries that no longer wait */
  const skipDead = (): void => {
    while (head < queue.length && !live(queue[head])) {
      head++
      dead--
    }
  }

  return {
    async add(tx, addOptions = {}) {
      if (byHash.size >= options.capacity && addOptions.fromPeer !== true) throw new SystemBusy()
      // reserved before the await, so two copies racing in cannot both pass
      const entry = reserve(tx)
      try {
        await store.putPending(tx)
      } catch (error) {
        byHash.delete(tx.hash)
        bySign.delete(signKey(tx))
        // the store checks again inside its write transaction, so a copy that raced in is caught here
        if (error instanceof DuplicateTxError) throw new DuplicateTransaction(`Repeated transaction ${tx.hash}`)
        throw error
      }
      enqueue(entry)
    },
    get(hash) {
      const entry = byHash.get(hash)
      return entry === undefined ? undefined : { tx: entry.tx, signatureValid: entry.signatureValid }
    },
    take(max) {
      const ready: ReadyTx[] = []
      skipDead()
      while (head < queue.length && ready.length < max) {
        const entry = queue[head]
        if (live(entry)) {
          if (entry.signatureValid === undefined) break
          ready.push({ tx: entry.tx, signatureValid: entry.signatureValid })
          entry.taken = true
        } else dead--
        head++
      }
      compact()
      return ready
    },
    waiting(olderThanMs, max) {
      const before = Date.now() - olderThanMs
      const out: SignedTx[] = []
      for (let i = head; i < queue.length && out.length < max; i++) {
        const entry = queue[i]
        if (entry.arrivedAt > before) break
        if (live(entry)) out.push(entry.tx)
      }
      return out
    },
    requeue(hashes) {
      const back: Entry[] = []
      for (const hash of hashes) {
        const entry = byHash.get(hash)
        if (entry === undefined || !entry.taken) continue
        entry.taken = false
        back.push(entry)
      }
      if (back.length === 0) return
      queue.splice(head, 0, ...back)
      notify()
    },
    readyCount() {
      let count = 0
      for (let i = head; i < queue.length; i++) {
        const entry = queue[i]
        if (!live(entry)) continue
        if (entry.signatureValid === undefined) break
        count++
      }
      return count
    },
    oldestArrival() {
      skipDead()
      return head < queue.length ? queue[head].arrivedAt : undefined
    },
    settle(hashes) {
      for (const hash of hashes) {
        const entry = byHash.get(hash)
        if (entry === undefined) continue
        // still queued (a peer's batch committed it): it becomes a dead queue slot
        if (!entry.taken) dead++
        byHash.delete(hash)
        bySign.delete(signKey(entry.tx))
      }
      compact()
    },
    size: () => byHash.size,
    async restore() {
      const pending = store.getPending()
      for (const tx of pending) {
        if (byHash.has(tx.hash)) continue
        const entry: Entry = { tx, signatureValid: undefined, arrivedAt: Date.now(), taken: false }
        byHash.set(tx.hash, entry)
        bySign.set(signKey(tx), tx.hash)
        enqueue(entry)
      }
      return pending.length
    },
    onReady(listener) {
      listeners.push(listener)
    },
  }
}
