/**
 * The calls that submit and answer with the outcome instead of the hash: tx_sendTransactionReturnReceipt
 * (waits, bounded, for the transaction's block) and simulate_invokeContract (runs the call at once
 * against the latest state, never ordered).
 */
import type { SimulateHandlers, TxHandlers } from '../../generated/handlers.ts'
import type { Hex, TxSubmitter } from '../domain.ts'
import { DataNotFound } from '../errors.ts'
import type { ChainReader } from './chain-reader.ts'
import { proposalTransaction } from './contract.ts'
import { receiptOf } from './tx-records.ts'

export type SyncTxHandlers = Pick<TxHandlers, 'tx_sendTransactionReturnReceipt'>

/** How long tx_sendTransactionReturnReceipt waits for an outcome before answering -32001. */
export const RETURN_RECEIPT_WAIT_MS = 10_000
/** a safety net under the block events: the store is looked at this often while waiting */
const POLL_MS = 250

export interface SyncTxModules {
  chain: ChainReader
  submitter: TxSubmitter
  /** calls `listener` after each block this node writes; returns the unsubscribe function */
  onBlock(listener: () => void): () => void
  /** default RETURN_RECEIPT_WAIT_MS */
  receiptWaitMs?: number
}

export function createSyncTxHandlers(modules: SyncTxModules): SyncTxHandlers & SimulateHandlers {
  const { chain, submitter } = modules
  const waitMs = modules.receiptWaitMs ?? RETURN_RECEIPT_WAIT_MS

  const decided = (hash: Hex): boolean => chain.getReceipt(hash) !== undefined || chain.getInvalidTx(hash) !== undefined

  /** Resolves true once `hash` has an outcome here, false after `waitMs`. */
  const settled = (hash: Hex): Promise<boolean> => {
    if (decided(hash)) return Promise.resolve(true)
    return new Promise((resolve) => {
      const finish = (outcome: boolean): void => {
        unsubscribe()
        clearInterval(poll)
        clearTimeout(timer)
        resolve(outcome)
      }
      const check = (): void => {
        if (decided(hash)) finish(true)
      }
      const unsubscribe = modules.onBlock(check)
      const poll = setInterval(check, POLL_MS)
      const timer = setTimeout(() => finish(decided(hash)), waitMs)
    })
  }

  return {
    tx_sendTransactionReturnReceipt: async ([tx]) => {
      const hash = await submitter.submit('transfer', tx)
      if (!(await settled(hash.toLowerCase())))
        throw new DataNotFound(
          `Not found receipt ${hash}: accepted, but no outcome after ${waitMs / 1000} s; ask tx_getTransactionReceipt for it later`,
        )
      return receiptOf(chain, hash)
    },
    simulate_invokeContract: async ([tx]) => receiptOf(chain, await submitter.submit('invoke', { ...tx, simulate: true })),
    simulate_manageContractByVote: async ([tx]) =>
      receiptOf(chain, await submitter.submit('invoke', { ...proposalTransaction('simulate_manageContractByVote', tx), simulate: true })),
  }
}
