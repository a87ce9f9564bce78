/**
 * The transaction pool: duplicate detection, back-pressure, durability and batched signature
 * verification off the request path.
 *
 * A submission is answered only after its LMDB write commits, so a hash that was returned survives
 * kill -9 (decision 8); on restart the pending table is reloaded. Duplicates are keyed on the tx
 * hash and on (from, sign hash), across the pool and the chain (decision 4).
 */
import { DuplicateTransaction, SystemBusy } from '../errors.ts'
import type { Logger } from '../log.ts'
import { DuplicateTxError } from '../store/index.ts'
import type { Hex, SignedTx } from './types.ts'

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
}

export interface TxPool {
  /** Admits a checked transaction; resolves once it is durable. */
  add(tx: SignedTx): Promise<void>
  /** Verified transactions at the head of the queue, in arrival order, taken out of the queue. */
  take(max: number): ReadyTx[]
  /** Verified transactions waiting at the head of the queue. */
  readyCount(): number
  /** When the oldest waiting transaction arrived (ms), or undefined when none waits. */
  oldestArrival(): number | undefined
  /** Forgets transactions that reached the chain. */
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
  const toVerify: Entry[] = []
  let verifying = false
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
          // a verifier fault must not stall the chain nor wrongly pass a signature: retry the batch
          log.error('signature verification failed; retrying the batch', error)
          toVerify.unshift(...batch)
        },
      )
      .finally(() => {
        verifying = false
        notify()
        if (toVerify.length > 0) setImmediate(pump)
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
    const entry: Entry = { tx, signatureValid: undefined, arrivedAt: Date.now() }
    byHash.set(tx.hash, entry)
    bySign.set(signKey(tx), tx.hash)
    return entry
  }

  const compact = (): void => {
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head)
      head = 0
    }
  }

  return {
    async add(tx) {
      if (byHash.size >= options.capacity) throw new SystemBusy()
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
    take(max) {
      const ready: ReadyTx[] = []
      while (head < queue.length && ready.length < max) {
        const entry = queue[head]
        if (entry.signatureValid === undefined) break
        ready.push({ tx: entry.tx, signatureValid: entry.signatureValid })
        head++
      }
      compact()
      return ready
    },
    readyCount() {
      let count = 0
      for (let i = head; i < queue.length && queue[i].signatureValid !== undefined; i++) count++
      return count
    },
    oldestArrival() {
      return head < queue.length ? queue[head].arrivedAt : undefined
    },
    settle(hashes) {
      for (const hash of hashes) {
        const entry = byHash.get(hash)
        if (entry === undefined) continue
        byHash.delete(hash)
        bySign.delete(signKey(entry.tx))
      }
    },
    size: () => byHash.size,
    async restore() {
      const pending = store.getPending()
      for (const tx of pending) {
        if (byHash.has(tx.hash)) continue
        const entry: Entry = { tx, signatureValid: undefined, arrivedAt: Date.now() }
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
