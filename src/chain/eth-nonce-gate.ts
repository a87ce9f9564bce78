/**
 * The pool's gate for Ethereum nonces (issue 28): an Ethereum transaction is taken for a block
 * only when its nonce is its sender's next one, counting the transactions of that sender already
 * taken for a block not yet committed. One whose nonce is ahead waits here, out of the pool's
 * queue (a nonce gap waits, as on Ethereum), until the one before it is taken; one whose nonce is
 * behind is taken at once, and execution discards it (the executor checks the nonce again, on
 * every node alike). Transactions of the Hyperchain dialect pass straight through.
 *
 * What waits is indexed by sender, in nonce order, so a take or a ready count looks only at the
 * senders whose turn may have moved since (one of theirs was taken, given back or reached the
 * chain), never at every waiting transaction. And it is bounded as geth bounds its queue of
 * future transactions: at most 64 per sender (AccountQueue) and 1024 in all (GlobalQueue); past
 * either, a client's transaction that would wait is refused with geth's "txpool is full".
 */

import type { Hex, SignedTx } from '../domain.ts'
import { TransactionRejected } from '../eth/errors.ts'
import { isEthereumTx } from '../eth/transaction.ts'
import type { Held, TakeGate } from './pool.ts'

/** geth's txpool defaults (core/txpool/legacypool: AccountQueue, GlobalQueue) */
export const GATE_PER_SENDER = 64
export const GATE_TOTAL = 1024

export interface NonceGateLimits {
  perSender?: number
  total?: number
}

export function createNonceGate(committedNonce: (address: Hex) => bigint, limits: NonceGateLimits = {}): TakeGate {
  const perSender = limits.perSender ?? GATE_PER_SENDER
  const total = limits.total ?? GATE_TOTAL
  /** per sender, the nonce after the highest one taken and not yet committed */
  const taken = new Map<Hex, bigint>()
  /** per sender, what waits, in nonce order (arrival order among equal nonces) */
  const held = new Map<Hex, Held[]>()
  let heldCount = 0
  /** senders with something held whose turn may have come since they were last looked at */
  const moved = new Set<Hex>()

  const expected = (from: Hex): bigint => {
    const committed = committedNonce(from)
    const after = taken.get(from)
    if (after === undefined) return committed
    if (after <= committed) {
      taken.delete(from)
      return committed
    }
    return after
  }
  const ready = (tx: SignedTx): boolean => !isEthereumTx(tx) || tx.nonce <= expected(tx.from)
  const touch = (from: Hex): void => {
    if (held.has(from)) moved.add(from)
  }
  const remove = (entry: Held): boolean => {
    const list = held.get(entry.tx.from)
    const at = list?.indexOf(entry) ?? -1
    if (list === undefined || at < 0) return false
    list.splice(at, 1)
    heldCount--
    if (list.length === 0) {
      held.delete(entry.tx.from)
      moved.delete(entry.tx.from)
    }
    return true
  }
  /** the held entries of `from` whose turn came, in nonce order; a sender with none is no longer looked at */
  const readyOf = (from: Hex): Held[] => {
    const list = held.get(from)
    if (list === undefined) return []
    const next = expected(from)
    let end = 0
    while (end < list.length && list[end].tx.nonce <= next) end++
    if (end === 0) moved.delete(from)
    return list.slice(0, end)
  }

  const markTaken = (tx: SignedTx): void => {
    if (!isEthereumTx(tx)) return
    if (tx.nonce + 1n > (taken.get(tx.from) ?? 0n)) taken.set(tx.from, tx.nonce + 1n)
    touch(tx.from)
  }

  return {
    ready,
    taken: markTaken,
    // the block that held it was not committed: count again from the chain
    returned(tx) {
      if (!isEthereumTx(tx)) return
      taken.delete(tx.from)
      touch(tx.from)
    },
    admit(tx) {
      if (ready(tx)) return
      const mine = held.get(tx.from)?.length ?? 0
      if (mine >= perSender)
        throw new TransactionRejected(
          `txpool is full: ${mine} transactions of ${tx.from} already wait for an earlier nonce (at most ${perSender}); send the missing nonce ${expected(tx.from)} first`,
        )
      if (heldCount >= total)
        throw new TransactionRejected(
          `txpool is full: ${heldCount} transactions wait for an earlier nonce (at most ${total}); send again once the missing nonces arrive`,
        )
    },
    hold(entry) {
      const from = entry.tx.from
      let list = held.get(from)
      if (list === undefined) {
        list = []
        held.set(from, list)
      }
      let at = list.length
      while (at > 0 && list[at - 1].tx.nonce > entry.tx.nonce) at--
      list.splice(at, 0, entry)
      heldCount++
      // it may have become ready while it was checked (a take in between)
      moved.add(from)
    },
    release(max) {
      const out: Held[] = []
      for (const from of [...moved]) {
        // a run of consecutive nonces goes together: each one taken makes the next one's turn come
        for (let run = readyOf(from); run.length > 0; run = readyOf(from)) {
          for (const entry of run) {
            if (out.length >= max) return out
            remove(entry)
            out.push(entry)
            markTaken(entry.tx)
          }
        }
      }
      return out
    },
    forget(tx) {
      const entry = held.get(tx.from)?.find((candidate) => candidate.tx.hash === tx.hash)
      const wasHeld = entry !== undefined && remove(entry)
      // a block took one of this sender's: the committed nonce moved
      touch(tx.from)
      return wasHeld
    },
    readyCount() {
      let count = 0
      for (const from of [...moved]) count += readyOf(from).length
      return count
    },
    oldestReady() {
      let oldest: number | undefined
      for (const from of [...moved])
        for (const entry of readyOf(from)) if (oldest === undefined || entry.arrivedAt < oldest) oldest = entry.arrivedAt
      return oldest
    },
    *heldOlderThan(before) {
      for (const list of held.values()) for (const entry of list) if (entry.arrivedAt <= before) yield entry
    },
    size: () => heldCount,
  }
}
