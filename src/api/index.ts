/**
 * Every handler built so far, and where each missing service is planned. A method without a
 * handler answers -32601 "not implemented yet (planned in issue N)", never a made-up result.
 */
import { createNodeHandlers, type NodeIdentity } from './node.ts'
import { createTxHandlers, type ProtocolInfo } from './tx.ts'

export interface ApiModules {
  identity: NodeIdentity
  protocol: ProtocolInfo
}

export function createHandlers(modules: ApiModules): Record<string, unknown> {
  return {
    ...createTxHandlers(modules),
    ...createNodeHandlers(modules),
  }
}

/** Service prefix → the issue that builds its handlers. */
export const plannedByService: Readonly<Record<string, string>> = {
  tx: 'issue 3',
  contract: 'issue 3',
  block: 'issue 3',
  account: 'issue 3',
  sub: 'issue 4',
  node: 'issue 6',
  cert: 'issue 7',
  archive: 'issue 7',
}
