/** Handlers of the `node_` service. */
import type { NodeHandlers } from '../../generated/handlers.ts'
import { nodeHash } from '../crypto/hash.ts'

export interface NodeIdentity {
  hostname: string
  namespace: string
}

export function createNodeHandlers(modules: { identity: NodeIdentity }): Pick<NodeHandlers, 'node_getNodeHash'> {
  const hash = nodeHash(modules.identity.hostname, modules.identity.namespace)
  return {
    node_getNodeHash: () => hash,
  }
}
