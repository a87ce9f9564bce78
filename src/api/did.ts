/**
 * Handlers of the `did_` service. The official SDK asks did_getChainID at every start (to name
 * DID accounts `did:hpc:<chainId>:…`); Keel's chain id is its namespace. DID documents and
 * credentials themselves are a missing feature (missing-features.ts).
 */
import type { DidHandlers } from '../../generated/handlers.ts'

export function createDidHandlers(modules: { namespace: string }): DidHandlers {
  return { did_getChainID: () => modules.namespace }
}
