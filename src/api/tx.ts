/** Handlers of the `tx_` service. */
import type { TxHandlers } from '../../generated/handlers.ts'

export interface ProtocolInfo {
  /** transaction format version reported to SDKs (sdk-wire.md §2: must start with a positive integer) */
  txVersion: string
  /** gas price reported to SDKs; a JSON integer, since the SDK signs `price=0x<value in hex>` */
  gasPrice: number
}

export function createTxHandlers(modules: { protocol: ProtocolInfo }): Pick<TxHandlers, 'tx_getGasPrice' | 'tx_getTransactionsVersion'> {
  const { protocol } = modules
  return {
    tx_getGasPrice: () => protocol.gasPrice,
    tx_getTransactionsVersion: () => protocol.txVersion,
  }
}
