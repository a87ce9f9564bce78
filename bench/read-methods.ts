/** The read mix of the benchmark, in equal shares; each method is also measured alone. */
export const READ_METHODS = ['tx_getTransactionByHash', 'tx_getTransactionReceipt', 'block_latestBlock', 'block_getBlockByNumber'] as const
export type ReadMethod = (typeof READ_METHODS)[number]
