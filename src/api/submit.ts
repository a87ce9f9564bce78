/** The door through which signed transactions enter the chain (implemented in src/chain/). */
import type { Hex, TxKind } from '../chain/types.ts'

export interface TxSubmitter {
  /**
   * Checks a submission (protocol.md §4), persists it and returns its hash at once; the outcome is
   * read later from the receipt. Throws InvalidParams, SystemBusy or DuplicateTransaction.
   */
  submit(kind: TxKind, params: object): Promise<Hex>
  /** The hash a client signs in the 2017 format (tx_getSignHash). */
  signHash(params: object): Hex
}

/** The JSON-RPC method that submits each kind of transaction; a relayed one is checked against its params schema. */
export const SUBMIT_METHOD: Readonly<Record<TxKind, string>> = {
  transfer: 'tx_sendTransaction',
  deploy: 'contract_deployContract',
  invoke: 'contract_invokeContract',
  maintain: 'contract_maintainContract',
}
