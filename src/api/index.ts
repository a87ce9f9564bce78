/**
 * Every handler of the node, grouped by service. A method of openrpc.json without a handler would
 * answer -32601 "not implemented yet", never a made-up result (src/rpc/dispatch.ts).
 */
import type { DebugHandlers, EthHandlers, Handlers, NetHandlers, Web3Handlers } from '../../generated/handlers.ts'
import { methods } from '../../generated/methods.ts'
import type { ArchiveService } from '../archive/service.ts'
import type { Compiler } from '../compile/solc-pool.ts'
import type { Hex, TxSubmitter } from '../domain.ts'
import type { PollingSubscriptions } from '../events/subscriptions.ts'
import type { CallContext } from '../rpc/context.ts'
import type { MethodSpec } from '../rpc/method-spec.ts'
import { createOperatorGuard, type OperatorGuardOptions } from '../rpc/operator-auth.ts'
import { createAccountHandlers } from './account.ts'
import { type AnswerCache, createAnswerCache } from './answers.ts'
import { createArchiveHandlers } from './archive.ts'
import { createBlockHandlers } from './block.ts'
import { type CertModules, createCertHandlers } from './cert.ts'
import type { ChainReader } from './chain-reader.ts'
import { type ConfigModules, createConfigHandlers } from './config.ts'
import { createContractHandlers } from './contract.ts'
import { createDidHandlers } from './did.ts'
import { createEthHandlers, type EthereumSettings } from './eth/handlers.ts'
import { createGovernanceHandlers, type GovernanceModules } from './governance.ts'
import {
  aloneDirectory,
  createNodeHandlers,
  type NamespaceControl,
  type NodeDirectory,
  type NodeIdentity,
  type NodeStateReport,
} from './node.ts'
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
  /** issue 30: the namespaces of the process (chain thread only); absent: one namespace alone */
  namespaces?: NamespaceControl
  versions: Omit<VersionModules, 'hostname' | 'directory'>
  config: Omit<ConfigModules, 'directory'>
  /** who may call the operator methods (openrpc.json `x-operator`; rpc/operator-auth.ts) */
  operators: OperatorGuardOptions
  /** the governance records' genesis defaults and the latest block time (chain thread only) */
  governance: Omit<GovernanceModules, 'state'>
  /** committed records' texts, made once; one per thread (a request thread shares its own with its WebSocket push); made here when absent */
  answers?: AnswerCache
  /** issue 28: the Ethereum dialect's settings (src/eth/); without them its methods answer -32601 */
  ethereum?: EthereumSettings
}

/** issue 28: the Ethereum dialect's methods, served only with its settings (else they answer -32601) */
type EthereumMethod = keyof (EthHandlers & NetHandlers & Web3Handlers & DebugHandlers)

/**
 * A handler for every method of openrpc.json (generated/handlers.ts, with each method's parameter
 * and result types): a method left out, or a handler of the wrong shape, does not compile.
 */
export type ServedHandlers = Omit<Handlers, EthereumMethod> & Partial<Pick<Handlers, EthereumMethod>>

/**
 * Methods whose handlers need what only the chain thread holds: polling subscriptions fed by its
 * event hub, the archive service, the peer directory and consensus state, the CA and keys that
 * record TCerts and sign receipts, the node's configuration and governance records, the operator
 * methods' admin check and replay memory. openrpc.json marks each with `"x-thread": "chain"` (the
 * generated table's `thread`); a request thread (src/front/) forwards them to the chain thread, and
 * answers every other method where the request arrived, from the store's readers.
 */
export function isChainThreadMethod(name: string): boolean {
  return Object.hasOwn(methods, name) && (methods as Record<string, MethodSpec>)[name].thread === 'chain'
}

export function createHandlers(modules: ApiModules): ServedHandlers {
  const state = () => modules.chain.state
  const directory = modules.directory ?? aloneDirectory(modules.identity)
  const answers = modules.answers ?? createAnswerCache(modules.chain)
  const handlers: ServedHandlers = {
    ...createTxHandlers({ ...modules, answers }),
    ...createInvalidTxHandlers(modules),
    ...createSyncTxHandlers(modules),
    ...createPageTxHandlers(modules),
    ...createFilterTxHandlers(modules),
    ...createBlockHandlers({ chain: modules.chain, answers }),
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
    ...createGovernanceHandlers({ ...modules.governance, state }),
    ...createSubHandlers(modules),
    ...createCertHandlers(modules.cert),
    ...createArchiveHandlers(modules),
    // issue 28: the Ethereum dialect
    ...(modules.ethereum === undefined
      ? {}
      : createEthHandlers({ chain: modules.chain, submitter: modules.submitter, settings: modules.ethereum, onBlock: modules.onBlock })),
  }
  // one guard per set of handlers: on a node, the chain thread's (operator methods run there)
  const operators = createOperatorGuard(modules.operators)
  // the guard keeps a handler's parameters and answer: the table keeps its type, seen here by name
  const byName = handlers as unknown as Record<string, (params: never, context: CallContext) => unknown>
  for (const [name, spec] of Object.entries(methods as Record<string, MethodSpec>))
    if (spec.operator === true && Object.hasOwn(byName, name)) byName[name] = operators.guard(byName[name])
  return handlers
}
