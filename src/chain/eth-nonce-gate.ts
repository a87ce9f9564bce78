/**
 * The pool's gate for Ethereum nonces (issue 28): an Ethereum transaction is taken for a block
 * only when its nonce is its sender's next one, counting the transactions of that sender already
 * taken for a block not yet committed. One whose nonce is ahead waits in the pool (a nonce gap
 * waits, as on Ethereum) until the one before it is taken; one whose nonce is behind is taken at
 * once, and execution discards it (the executor checks the nonce again, on every node alike).
 * Transactions of the Hyperchain dialect pass straight through.
 */

import type { Hex, SignedTx } from '../domain.ts'
import { isEthereumTx } from '../eth/transaction.ts'
import type { TakeGate } from './pool.ts'

export function createNonceGate(committedNonce: (address: Hex) => bigint): TakeGate {
  /** per sender, the nonce after the highest one taken and not yet committed */
  const taken = new Map<Hex, bigint>()
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
  return {
    ready: (tx: SignedTx) => !isEthereumTx(tx) || tx.nonce <= expected(tx.from),
    taken(tx) {
      if (!isEthereumTx(tx)) return
      if (tx.nonce + 1n > (taken.get(tx.from) ?? 0n)) taken.set(tx.from, tx.nonce + 1n)
    },
    // the block that held it was not committed: count again from the chain
    returned(tx) {
      if (isEthereumTx(tx)) taken.delete(tx.from)
    },
  }
}
