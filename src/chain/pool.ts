/**
 * The transaction pool: duplicate detection, back-pressure, batched signature verification and
 * durability.
 *
 * A transaction is admitted in this order: its signature is checked (the verify pool, batched;
 * or it arrives checked by the request thread that decoded it), it reserves its hash and its
 * (from, sign hash) against the pool and the chain (decision 4), it is appended to the pool log,
 * and only once that group commit is on disk does `add` resolve and the hash get answered, so a
 * hash that was returned survives kill -9 (decision 8). The log is a group commit of its own
 * (src/store/pool-log.ts): an admission waits for one fsync, never for a block commit. On restart
 * the log is replayed (`restore`): whatever no block holds is pending again, in arrival order.
 */
import { copyWith } from '../copy-with.ts'
import type { Hex, SignedTx } from '../domain.ts'
import { DuplicateTransaction, InvalidParams, RpcError, SystemBusy } from '../errors.ts'
import type { Logger } from '../log.ts'
import { type PoolLog, PoolLogError } from '../store/pool-log.ts'
import { decodeAdmitted, encodeAdmitted } from '../wire/tx-codec.ts'
import type { RateLimit } from './rate-limit.ts'

export interface PendingStore {
  /** committed, valid or invalid */
  hasTx(hash: Hex): boolean
  findBySignHash(from: Hex, signHash: Hex): Hex | undefined
  readonly poolLog: PoolLog
  /** pending txs an older store layout kept in LMDB (moved into the log at restore) */
  legacyPending(): SignedTx[]
  dropLegacyPending(): Promise<void>
}

/** One transaction's signature check. */
export interface SignatureCheckResult {
  /** the signature recovers `from` over a sign string that covers every field the transaction carries */
  valid: boolean
  /** it recovers `from` over a sign string that leaves out a field the transaction carries: the -32602 message refusing it */
  uncovered?: string
}

/** Verifies signatures of many transactions at once, in input order. */
export interface SignatureVerifier {
  verify(txs: readonly SignedTx[]): Promise<SignatureCheckResult[]>
}

export interface ReadyTx {
  tx: SignedTx
  signatureValid: boolean
}

interface Entry {
  tx: SignedTx
  /** undefined until the verifier answers (only transactions restored from an older store layout wait for it) */
  signatureValid: boolean | undefined
  arrivedAt: number
  /** in a batch being ordered: out of the queue until it commits or is given back */
  taken: boolean
  /** the pool-log segment holding it, once it is on disk */
  segment?: number
  /** a block committed it before its log append finished (a peer's batch named it) */
  settled?: boolean
}

/** What `add` may be told about a transaction it is given. */
export interface AddOptions {
  /** relayed by a peer: not refused for a full pool (see TxPool.add) */
  fromPeer?: boolean
  /** its signature was checked already (by the request thread that decoded it) */
  signatureValid?: boolean
  /** its bytes as wire/tx-codec.ts encodeAdmitted wrote them with this check, when the caller has them */
  record?: Uint8Array
  /**
   * Judges it once its signature is checked, before it is taken in: throws to refuse it. A request
   * thread's admission checks the signature and its coverage before the chain thread judges the
   * transaction; the pool's own check does the same for a transaction submitted on the chain thread.
   */
  permit?: (tx: SignedTx) => void
}

export interface TxPool {
  /**
   * Admits a checked transaction; resolves once it is durable. A transaction relayed by a peer
   * (`fromPeer`) is not refused for a full pool: the peer that admitted it already answered the
   * client, and every VP must hold it to order it (consensus.md §3 step 2).
   */
  add(tx: SignedTx, options?: AddOptions): Promise<void>
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
  /** Replays the pool log after a restart: what no block holds is pending again, in arrival order. */
  restore(): Promise<number>
  /** Called whenever transactions become ready. */
  onReady(listener: () => void): void
}

/**
 * issue 28: whether a waiting transaction may be taken now. src/chain/eth-nonce-gate.ts holds back an
 * Ethereum transaction whose nonce is ahead of its sender's next one (a nonce gap waits, as on
 * Ethereum), until the transactions before it are taken.
 */
export interface TakeGate {
  ready(tx: SignedTx): boolean
  taken(tx: SignedTx): void
  /** a taken transaction given back uncommitted (requeue) */
  returned(tx: SignedTx): void
  /** throws the refusal of a client's transaction that would wait when the gate is full */
  admit(tx: SignedTx): void
  /** keeps a pooled transaction whose turn has not come, out of the queue */
  hold(entry: Held): void
  /** takes out up to `max` held transactions whose turn came (and, with each, the next one's) */
  release(max: number): Held[]
  /** a transaction reached the chain: its sender's turn may have moved; true when it was held */
  forget(tx: SignedTx): boolean
  /** held transactions whose turn came */
  readyCount(): number
  /** when the oldest held transaction whose turn came arrived (ms) */
  oldestReady(): number | undefined
  heldOlderThan(arrivedBefore: number): Iterable<Held>
  size(): number
}

/** a pooled transaction as the gate keeps it */
export interface Held {
  readonly tx: SignedTx
  readonly arrivedAt: number
}

export interface PoolOptions {
  store: PendingStore
  verifier: SignatureVerifier
  /** most transactions waiting at once; past it submissions get -32006 */
  capacity: number
  /** largest batch handed to the verifier at once */
  verifyBatch: number
  log: Logger
  /** told what each client's transaction was answered: 0 (admitted) or the refusal's code */
  observeAdmission?: (code: number) => void
  /** the admission rate limit for clients' transactions (rate-limit.ts); none when undefined */
  rateLimit?: RateLimit
  /** issue 28: holds back transactions that may not be taken yet (an Ethereum nonce gap) */
  gate?: TakeGate
}

/** a transaction's (from, sign hash) as one map key: the content a signature covers, whatever the signature */
export const signKey = (tx: SignedTx): string => `${tx.from}|${tx.signHash}`

/** verifier batches in flight at once: enough to keep every verify worker busy */
const VERIFY_IN_FLIGHT = 4

/**
 * Long because: one state machine over shared maps. Every operation below reads and updates the
 * same byHash / bySign maps, the arrival queue with its head and dead-slot count, and the take gate
 * together; cut apart, each piece would need all of them handed in. The parts that stand alone
 * are outside: the batched signature checks (batchedSignatureChecks) and reading the log at a
 * restart (pendingInLog).
 */
export function createTxPool(options: PoolOptions): TxPool {
  const { store, verifier, log } = options
  const poolLog = store.poolLog
  const byHash = new Map<Hex, Entry>()
  const bySign = new Map<string, Hex>()
  const queue: Entry[] = []
  let head = 0
  /** entries after `head` settled or taken while still queued: skipped, dropped by compact() */
  let dead = 0
  const listeners: (() => void)[] = []
  // issue 28: entries the gate holds back are out of the queue, in the gate (eth-nonce-gate.ts)
  const gate = options.gate
  /** takes the held entries whose turn came, up to `max` in all */
  const takeHeld = (ready: ReadyTx[], max: number): void => {
    if (ready.length >= max) return
    for (const held of (gate as TakeGate).release(max - ready.length)) {
      const entry = held as Entry
      ready.push({ tx: entry.tx, signatureValid: entry.signatureValid as boolean })
      entry.taken = true
    }
  }
  const notify = (): void => {
    for (const listener of listeners) listener()
  }

  /** the signature check of one transaction, batched with the others of this turn */
  const check = batchedSignatureChecks({ verifier, verifyBatch: options.verifyBatch, log })

  /**
   * Refuses a transaction already known by its hash and, unless its signature failed or a peer
   * relayed it, by its (from, sign hash). Only a transaction whose signature verifies holds that key
   * (reserve): a copy with a garbage signature, which anyone who sees a transaction in flight can
   * make, is pooled and discarded as SIGFAILED without stopping the genuine one.
   */
  const refuseDuplicate = (tx: SignedTx, signatureValid?: boolean, fromPeer?: boolean): void => {
    if (byHash.has(tx.hash) || store.hasTx(tx.hash)) throw new DuplicateTransaction(`Repeated transaction ${tx.hash}`)
    // a peer's copy is held all the same: its VP answered a client with its hash, and a batch may
    // name it; of two valid copies only the first ordered commits (producer.ts repeatedCopies)
    if (signatureValid === false || fromPeer === true) return
    if (bySign.has(signKey(tx)) || store.findBySignHash(tx.from, tx.signHash) !== undefined) {
      throw new DuplicateTransaction(`Repeated transaction ${tx.hash}`)
    }
  }

  /** holds (from, sign hash) for a transaction whose signature verified (or is not checked yet) */
  const holdSignKey = (entry: Entry): void => {
    if (entry.signatureValid !== false && !bySign.has(signKey(entry.tx))) bySign.set(signKey(entry.tx), entry.tx.hash)
  }

  const releaseSignKey = (tx: SignedTx): void => {
    if (bySign.get(signKey(tx)) === tx.hash) bySign.delete(signKey(tx))
  }

  const reserve = (tx: SignedTx, signatureValid: boolean | undefined, fromPeer?: boolean): Entry => {
    refuseDuplicate(tx, signatureValid, fromPeer)
    const entry: Entry = { tx, signatureValid, arrivedAt: Date.now(), taken: false }
    byHash.set(tx.hash, entry)
    holdSignKey(entry)
    return entry
  }

  const enqueue = (entry: Entry): void => {
    queue.push(entry)
    if (entry.signatureValid !== undefined) return
    void check(entry.tx).then(({ valid }) => {
      entry.signatureValid = valid
      if (!valid) releaseSignKey(entry.tx)
      notify()
    })
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

  const add: TxPool['add'] = async (tx, addOptions = {}) => {
    if (byHash.size >= options.capacity && addOptions.fromPeer !== true) throw new SystemBusy()
    // a copy already known is refused before its signature costs anything (by its hash, or by a
    // (from, sign hash) a verified transaction holds: the genuine one is never refused for a forgery)
    refuseDuplicate(tx, undefined, addOptions.fromPeer)
    // issue 28: one that would wait for an earlier nonce, when too many wait already
    if (addOptions.fromPeer !== true) gate?.admit(tx)
    // after the duplicate check (a resubmission learns it is known), before the pool's own signature check
    // (a request thread checked it already: the limit guards the pool, log and chain, not the verify workers)
    if (addOptions.fromPeer !== true) options.rateLimit?.take()
    let signatureValid = addOptions.signatureValid
    if (signatureValid === undefined) {
      const checked = await check(tx)
      // a client's transaction with content its signature does not cover is refused; a peer's
      // (which its VP should have refused) is discarded as SIGFAILED, alike on every node
      if (checked.uncovered !== undefined && addOptions.fromPeer !== true) throw new InvalidParams(checked.uncovered)
      signatureValid = checked.valid
    }
    addOptions.permit?.(tx)
    // reserved before the log append, checked again: a copy may have raced in during the check
    const entry = reserve(tx, signatureValid, addOptions.fromPeer)
    let segment: number
    try {
      segment = await poolLog.append(
        addOptions.record !== undefined && addOptions.signatureValid !== undefined ? addOptions.record : encodeAdmitted(tx, signatureValid),
      )
    } catch (error) {
      if (byHash.get(tx.hash) === entry) {
        byHash.delete(tx.hash)
        releaseSignKey(tx)
      }
      if (error instanceof PoolLogError)
        throw SystemBusy.because(`this node could not make the transaction durable (${error.message}); it was not accepted`)
      throw error
    }
    if (entry.settled === true) {
      poolLog.release(segment)
      return
    }
    entry.segment = segment
    // issue 28: one whose turn has not come waits in the gate, not in the queue
    if (gate !== undefined && entry.signatureValid !== undefined && !gate.ready(tx)) gate.hold(entry)
    else enqueue(entry)
    notify()
  }

  return {
    async add(tx, addOptions = {}) {
      const observe = addOptions.fromPeer === true ? undefined : options.observeAdmission
      try {
        await add(tx, addOptions)
        observe?.(0)
      } catch (error) {
        observe?.(error instanceof RpcError ? error.code : -32603)
        throw error
      }
    },
    get(hash) {
      const entry = byHash.get(hash)
      return entry === undefined ? undefined : { tx: entry.tx, signatureValid: entry.signatureValid }
    },
    take(max) {
      const ready: ReadyTx[] = []
      if (gate !== undefined) takeHeld(ready, max)
      skipDead()
      while (head < queue.length && ready.length < max) {
        const entry = queue[head]
        if (live(entry)) {
          if (entry.signatureValid === undefined) break
          if (gate !== undefined && !gate.ready(entry.tx)) gate.hold(entry)
          else {
            ready.push({ tx: entry.tx, signatureValid: entry.signatureValid })
            entry.taken = true
            gate?.taken(entry.tx)
          }
        } else dead--
        head++
      }
      // a held transaction whose predecessor this batch took goes with it
      if (gate !== undefined) takeHeld(ready, max)
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
      // issue 28: held ones wait as long (a peer may lack them too)
      if (gate !== undefined)
        for (const held of gate.heldOlderThan(before)) {
          if (out.length >= max) break
          out.push(held.tx)
        }
      return out
    },
    requeue(hashes) {
      const back: Entry[] = []
      for (const hash of hashes) {
        const entry = byHash.get(hash)
        if (entry === undefined || !entry.taken) continue
        entry.taken = false
        gate?.returned(entry.tx)
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
        // issue 28: one the gate holds back is not ready (else solo ordering would cut empty blocks for it)
        if (gate !== undefined && !gate.ready(entry.tx)) continue
        count++
      }
      if (gate !== undefined) count += gate.readyCount()
      return count
    },
    oldestArrival() {
      skipDead()
      let oldest = head < queue.length ? queue[head].arrivedAt : undefined
      // issue 28: a held transaction whose turn came has waited since it arrived
      const held = gate?.oldestReady()
      if (held !== undefined && (oldest === undefined || held < oldest)) oldest = held
      return oldest
    },
    settle(hashes) {
      for (const hash of hashes) {
        const entry = byHash.get(hash)
        if (entry === undefined) continue
        // issue 28: held (a peer's batch committed it): out of the gate, its sender's turn moved
        const held = gate?.forget(entry.tx) === true
        // still queued (a peer's batch committed it): it becomes a dead queue slot
        if (!entry.taken && !held && entry.segment !== undefined) dead++
        byHash.delete(hash)
        releaseSignKey(entry.tx)
        if (entry.segment === undefined) entry.settled = true
        else poolLog.release(entry.segment)
      }
      compact()
    },
    size: () => byHash.size,
    async restore() {
      const { pending, segment } = await pendingInLog({ store, known: (hash) => byHash.has(hash), log })
      for (const { tx, signatureValid } of pending) {
        const entry: Entry = { tx, signatureValid, arrivedAt: Date.now(), taken: false, segment }
        byHash.set(tx.hash, entry)
        holdSignKey(entry)
        enqueue(entry)
      }
      if (pending.length > 0) notify()
      return pending.length
    },
    onReady(listener) {
      listeners.push(listener)
    },
  }
}

/**
 * Signature checks batched per turn: the checks asked for in one turn go to the verifier together,
 * at most VERIFY_IN_FLIGHT batches at once. A verifier fault retries the batch after a pause: it
 * must not stall the chain nor wrongly pass a signature.
 */
function batchedSignatureChecks(options: {
  verifier: SignatureVerifier
  verifyBatch: number
  log: Pick<Logger, 'error'>
}): (tx: SignedTx) => Promise<SignatureCheckResult> {
  const { verifier, log } = options
  const toVerify: { tx: SignedTx; done(result: SignatureCheckResult): void }[] = []
  let verifying = 0

  const pump = (): void => {
    while (verifying < VERIFY_IN_FLIGHT && toVerify.length > 0) {
      const batch = toVerify.splice(0, options.verifyBatch)
      verifying++
      verifier
        .verify(batch.map((item) => item.tx))
        .then(
          (results) => {
            for (const [i, item] of batch.entries()) item.done(results[i])
          },
          (error: unknown) => {
            // a verifier fault must not stall the chain nor wrongly pass a signature: retry the batch,
            // after a pause (a closed verifier fails at once; unref'd so a stopped node can exit)
            log.error('signature verification failed; retrying the batch in 1 s', error)
            setTimeout(() => {
              toVerify.unshift(...batch)
              pump()
            }, 1000).unref()
          },
        )
        .finally(() => {
          verifying--
          pump()
        })
    }
  }

  return (tx) =>
    new Promise((resolve) => {
      toVerify.push({ tx, done: resolve })
      if (toVerify.length === 1) setImmediate(pump)
    })
}

/**
 * What a restart finds pending: the pool log's records (and an older store layout's pending
 * transactions) that no block holds and the pool does not know, once each, in arrival order; the
 * log is compacted to them (`segment` holds them) and the older layout's copies dropped.
 */
async function pendingInLog(options: {
  store: PendingStore
  known(hash: Hex): boolean
  log: Pick<Logger, 'warn'>
}): Promise<{ pending: { tx: SignedTx; signatureValid: boolean | undefined }[]; segment: number }> {
  const { store, log } = options
  const poolLog = store.poolLog
  const found: { tx: SignedTx; signatureValid: boolean | undefined; record?: Uint8Array }[] = []
  const legacy = store.legacyPending()
  for (const tx of legacy) found.push({ tx, signatureValid: undefined })
  for (const { payload } of poolLog.replay()) {
    try {
      found.push(copyWith(decodeAdmitted(payload), { record: payload }))
    } catch (error) {
      log.warn(`pool log: a record that is no transaction skipped (${(error as Error).message})`)
    }
  }
  const seen = new Set<Hex>()
  const pending = found.filter(({ tx }) => {
    if (seen.has(tx.hash) || options.known(tx.hash) || store.hasTx(tx.hash)) return false
    seen.add(tx.hash)
    return true
  })
  const segment = await poolLog.compact(pending.map((item) => item.record ?? encodeAdmitted(item.tx, item.signatureValid)))
  if (legacy.length > 0) await store.dropLegacyPending()
  return { pending, segment }
}
