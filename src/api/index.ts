/**
 * Every handler of the node, grouped by service. A method of openrpc.json without a handler would
 * answer -32601 "not implemented yet", never a made-up result (src/rpc/dispatch.ts).
 */
import type { ArchiveService } from '../archive/service.ts'
import type { Compiler } from '../compile/solc-pool.ts'
import type { Hex, TxSubmitter } from '../domain.ts'
import type { PollingSubscriptions } from '../events/subscriptions.ts'
import { createAccountHandlers } from './account.ts'
import { createArchiveHandlers } from './archive.ts'
import { createBlockHandlers } from './block.ts'
import { type CertModules, createCertHandlers } from './cert.ts'
import type { ChainReader } from './chain-reader.ts'
import { createContractHandlers } from './contract.ts'
import { createNodeHandlers, type NodeDirectory, type NodeIdentity } from './node.ts'
import { createSubHandlers } from './sub.ts'
import { createTxHandlers, type ProtocolInfo } from './tx.ts'

export interface ApiModules {
  identity: NodeIdentity
  /** the namespace's nodes; absent for a node running alone */
  directory?: NodeDirectory
  protocol: ProtocolInfo
  chain: ChainReader
  /** why ordering stopped for good, once it has */
  ordering?: { halted(): string | undefined }
  submitter: TxSubmitter
  compiler: Compiler
  subscriptions: PollingSubscriptions
  cert: CertModules
  archive: ArchiveService
}

export function createHandlers(modules: ApiModules): Record<string, unknown> {
  const state = () => modules.chain.state
  return {
    ...createTxHandlers(modules),
    ...createBlockHandlers(modules),
    ...createContractHandlers({
      state,
      deployedList: (creator: Hex) => modules.chain.getDeployedList(creator),
      submitter: modules.submitter,
      compiler: modules.compiler,
    }),
    ...createAccountHandlers({ state }),
    ...createNodeHandlers(modules),
    ...createSubHandlers(modules),
    ...createCertHandlers(modules.cert),
    ...createArchiveHandlers(modules),
  }
}
