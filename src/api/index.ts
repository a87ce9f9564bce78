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
import { type ConfigModules, createConfigHandlers } from './config.ts'
import { createContractHandlers } from './contract.ts'
import { createDidHandlers } from './did.ts'
import { aloneDirectory, createNodeHandlers, type NodeDirectory, type NodeIdentity, type NodeStateReport } from './node.ts'
import { createSubHandlers } from './sub.ts'
import { createTxHandlers, type ProtocolInfo } from './tx.ts'
import { createFilterTxHandlers } from './tx-filter.ts'
import { createInvalidTxHandlers } from './tx-invalid.ts'
import { createPageTxHandlers } from './tx-pages.ts'
import type { ReceiptSigner } from './tx-records.ts'
import { createSyncTxHandlers } from './tx-sync.ts'
import { createVersionHandlers, type VersionModules } from './version.ts'

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
  /** signs tx_getTransactionReceiptWithSignature's answers */
  signer: ReceiptSigner
  /** calls `listener` after each block this node writes; returns the unsubscribe function */
  onBlock(listener: () => void): () => void
  /** tx_sendTransactionReturnReceipt's bound (default 10 s) */
  receiptWaitMs?: number
  /** this node's own state report (node_getNodeStates; its peers ask for it too) */
  selfState(): NodeStateReport
  versions: Omit<VersionModules, 'hostname' | 'directory'>
  config: Omit<ConfigModules, 'directory'>
}

export function createHandlers(modules: ApiModules): Record<string, unknown> {
  const state = () => modules.chain.state
  const directory = modules.directory ?? aloneDirectory(modules.identity)
  return {
    ...createTxHandlers(modules),
    ...createInvalidTxHandlers(modules),
    ...createSyncTxHandlers(modules),
    ...createPageTxHandlers(modules),
    ...createFilterTxHandlers(modules),
    ...createBlockHandlers(modules),
    ...createContractHandlers({
      state,
      deployedList: (creator: Hex) => modules.chain.getDeployedList(creator),
      submitter: modules.submitter,
      compiler: modules.compiler,
    }),
    ...createAccountHandlers({ state }),
    ...createNodeHandlers({ ...modules, directory }),
    ...createDidHandlers({ namespace: modules.identity.namespace }),
    ...createVersionHandlers({ ...modules.versions, hostname: modules.identity.hostname, directory }),
    ...createConfigHandlers({ ...modules.config, directory }),
    ...createSubHandlers(modules),
    ...createCertHandlers(modules.cert),
    ...createArchiveHandlers(modules),
  }
}
