/**
 * Every handler of the node, grouped by service. A method of openrpc.json without a handler would
 * answer -32601 "not implemented yet", never a made-up result (src/rpc/dispatch.ts).
 */
import type { ArchiveService } from '../archive/service.ts'
import type { Hex, TxSubmitter } from '../domain.ts'
import type { PollingSubscriptions } from '../events/subscriptions.ts'
import { createAccountHandlers } from './account.ts'
import { type AnswerCache, createAnswerCache } from './answers.ts'
import { createArchiveHandlers } from './archive.ts'
import { createBlockHandlers } from './block.ts'
import { type CertModules, createCertHandlers } from './cert.ts'
import type { ChainReader } from './chain-reader.ts'
import type { Compiler } from './compile.ts'
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
  submitter: TxSubmitter
  compiler: Compiler
  /** committed records' texts, made once; one per thread (front/events.ts shares a request thread's with its WebSocket push); made here when absent */
  answers?: AnswerCache
  /** the modules of the chain thread: absent in a request thread, which forwards CHAIN_THREAD_METHODS there (src/front/) */
  subscriptions?: PollingSubscriptions
  cert?: CertModules
  archive?: ArchiveService
}

/**
 * Methods whose handlers need what only the chain thread holds: polling subscriptions fed by its
 * event hub, the archive service, the peer directory and consensus, the CA that records TCerts. A
 * request thread (src/front/) forwards them to the chain thread; every other method is answered
 * where the request arrived, from the store's readers.
 */
export function isChainThreadMethod(name: string): boolean {
  return (
    name.startsWith('archive_') ||
    name.startsWith('cert_') ||
    (name.startsWith('sub_') && name !== 'sub_getLogs') ||
    (name.startsWith('node_') && name !== 'node_getNodeHash')
  )
}

export function createHandlers(modules: ApiModules): Record<string, unknown> {
  const state = () => modules.chain.state
  const answers = modules.answers ?? createAnswerCache(modules.chain)
  return {
    ...createTxHandlers({ ...modules, answers }),
    ...createBlockHandlers({ chain: modules.chain, answers }),
    ...createContractHandlers({
      state,
      deployedList: (creator: Hex) => modules.chain.getDeployedList(creator),
      submitter: modules.submitter,
      compiler: modules.compiler,
    }),
    ...createAccountHandlers({ state }),
    ...createNodeHandlers(modules),
    ...createSubHandlers(modules),
    ...(modules.cert === undefined ? {} : createCertHandlers(modules.cert)),
    ...(modules.archive === undefined ? {} : createArchiveHandlers({ archive: modules.archive })),
  }
}
