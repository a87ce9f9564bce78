/**
 * Methods of Ethereum's JSON-RPC that Keel knows and does not serve (issue 28): the dispatcher
 * answers each with Ethereum's -32601 naming why, instead of a bare "does not exist".
 */
const NODE_KEYS = 'node-held accounts (eth_accounts is empty: sign in the client and send with eth_sendRawTransaction)'
const MINING = 'mining (blocks are ordered by the VPs, never mined)'

export const ETHEREUM_MISSING: Readonly<Record<string, string>> = {
  eth_sendTransaction: NODE_KEYS,
  eth_sign: NODE_KEYS,
  eth_signTransaction: NODE_KEYS,
  eth_signTypedData_v4: NODE_KEYS,
  personal_sign: NODE_KEYS,
  eth_coinbase: MINING,
  eth_mining: MINING,
  eth_hashrate: MINING,
  eth_getWork: MINING,
  eth_submitWork: MINING,
  eth_getProof: 'Merkle-Patricia proofs (Keel keeps its own state root, not Ethereum tries)',
  eth_getUncleByBlockHashAndIndex: 'uncles (BFT blocks have none)',
  eth_getUncleByBlockNumberAndIndex: 'uncles (BFT blocks have none)',
  eth_sendRawTransactionConditional: 'conditional transactions',
  debug_traceBlockByNumber: 'block tracers (debug_traceTransaction traces one transaction of a recent block)',
  debug_traceBlockByHash: 'block tracers (debug_traceTransaction traces one transaction of a recent block)',
}
