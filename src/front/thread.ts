/**
 * A request thread (ARCHITECTURE.md decision 11): it owns HTTP and WebSocket, parses and checks
 * every request, answers reads from its own reader of each namespace's ledger (the chain thread
 * tells it which to open: docs/namespaces.md), and turns a submission into a
 * checked transaction — decoded, hashed, its signature verified on the verify pool — that it hands
 * to the chain thread as bytes, answering once the chain thread says it is durable. Methods only
 * the chain thread can serve (api/index.ts isChainThreadMethod) are forwarded there. Started by
 * threads.ts; its workerData is a FrontStart (messages.ts).
 */

import { parentPort, workerData } from 'node:worker_threads'
import { methods } from '../../generated/methods.ts'
import { createAnswerCache } from '../api/answers.ts'
import { ethereumSettingsOf } from '../api/eth/handlers.ts'
import { createEthereumPush } from '../api/eth/push.ts'
import { createHandlers, isChainThreadMethod } from '../api/index.ts'
import { loadOrCreateNodeCa } from '../cert/ca.ts'
import { genesisAccountsIn, genesisGovernanceOf } from '../chain/genesis.ts'
import { createSolcPool } from '../compile/solc-pool.ts'
import { namespaceConfig } from '../config.ts'
import { createVerifyClient } from '../crypto/verify-pool.ts'
import { failpoint } from '../failpoints.ts'
import type { Logger, LogLevel } from '../log.ts'
import { openStoreReader } from '../store/index.ts'
import { jobs as admissionJobs } from './admission-job.ts'
import { createFrontEvents } from './events.ts'
import type { FrontNamespaceStart, FrontStart, ToChainControl, ToFront, ToFrontControl } from './messages.ts'
import { createRpcServers, listeningFd, type RpcServers, type ServedNamespace, servedNamespaces } from './serve.ts'
import { createChainLink, createFrontSubmitter } from './submitter.ts'

const start = workerData as FrontStart
const port = start.chain
const { config } = start
const post = (message: ToChainControl): void => port.postMessage(message)
// a failpoint here kills this thread from outside any handler, as a crash of the thread would (docs/reliability.md "Threads that die")
const failpointNow = (): void => failpoint('front.thread')

/**
 * A module of the chain thread, absent here: createHandlers wants every module, but each method
 * that would use one is replaced by a forwarder (isChainThreadMethod), so this is never called.
 */
function onChainThread<T>(what: string): T {
  const absent = (): never => {
    throw new Error(`${what} lives on the chain thread: its methods are forwarded there (api/index.ts isChainThreadMethod)`)
  }
  return new Proxy(absent, { get: () => absent }) as unknown as T
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 }
/** this thread's log lines go to the chain thread's logger, so they land where the node's do */
function forwardingLogger(component: string): Logger {
  const at = (level: Exclude<LogLevel, 'silent'>) => (message: string, detail?: unknown) => {
    if (RANK[level] < RANK[config.log.level]) return
    if (detail instanceof Error) post({ t: 'log', level, component, message, stack: detail.stack ?? detail.message })
    else post({ t: 'log', level, component, message, detail: detail === undefined ? undefined : String(detail) })
  }
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (name) => forwardingLogger(`${component}.${name}`),
  }
}

const log = forwardingLogger('front')
const verifier = createVerifyClient(start.verify, { nodeVersion: start.txVersion, backend: start.verifyBackend, handlers: admissionJobs })
const compiler = createSolcPool({ ...start.compiler, log: log.child('solc') })
// the thread's own link: GET /metrics asks the chain thread for every thread's metrics over it
const control = createChainLink(port, { follow: () => undefined })
const namespaces = servedNamespaces(config.node.namespace)

/** One namespace this thread serves: its ledger read here, its link to its chain, its handlers. */
interface FrontNamespace {
  served: ServedNamespace
  reader: ReturnType<typeof openStoreReader>['reader']
  close(): Promise<void>
}
const opened = new Map<string, FrontNamespace>()

/** Opens a namespace: the reader of its ledger, its handlers (chain-thread methods forwarded over its port), its TCert check's view. */
async function openNamespace(opening: FrontNamespaceStart): Promise<FrontNamespace> {
  const nsConfig = namespaceConfig(config, opening.name)
  const nsLog = log.child(opening.name)
  const store = openStoreReader(opening.ledgerPath)
  const reader = store.reader
  const link = createChainLink(opening.port, reader)
  const { submitter, simulation } = createFrontSubmitter({ link, verifier, nodeVersion: start.txVersion })
  const answers = createAnswerCache(reader)
  const events = createFrontEvents(reader, link, answers, nsLog.child('events'))
  // the store's reads, and simulated outcomes too (they are kept here: this thread took the simulation)
  const chain = Object.assign(Object.create(reader) as typeof reader, {
    getReceipt: (hash: string) => reader.getReceipt(hash) ?? simulation(hash)?.receipt,
    getInvalidTx: (hash: string) => reader.getInvalidTx(hash) ?? simulation(hash)?.invalid,
  })
  const handlers: Record<string, unknown> = createHandlers({
    identity: { hostname: config.node.hostname, namespace: opening.name },
    protocol: { txVersion: start.txVersion, gasPrice: 0 },
    // issue 28: with the genesis governance, which debug_traceTransaction re-executes under
    ethereum: ethereumSettingsOf(nsConfig, genesisGovernanceOf(nsConfig, genesisAccountsIn(nsConfig, opening.dataDir))),
    chain,
    submitter,
    compiler,
    answers,
    onBlock: (listener) => link.onBlock(() => listener()),
    receiptWaitMs: start.receiptWaitMs,
    // what only the chain thread holds: the methods that use it are forwarded there (below)
    subscriptions: onChainThread('polling subscriptions'),
    cert: onChainThread('the TCert CA'),
    archive: onChainThread('the archive service'),
    signer: onChainThread('the receipt signer'),
    selfState: onChainThread('the node state'),
    versions: onChainThread('the versions'),
    config: onChainThread('the configuration'),
    operators: onChainThread('the admin set'),
    governance: onChainThread('the governance records'),
    namespaces: onChainThread('the namespaces of the process'),
  })
  for (const name of Object.keys(methods)) if (isChainThreadMethod(name)) handlers[name] = link.forward(name)
  const tcert = config.tcert.check
    ? {
        ca: await loadOrCreateNodeCa(opening.dataDir, { hostname: config.node.hostname, warn: (message) => nsLog.warn(message) }),
        isIssued: (pemBytes: Uint8Array) => reader.getTcert(pemBytes) !== undefined,
      }
    : undefined
  reader.follow(opening.tip)
  opening.port.on('message', (message: ToFront) => link.receive(message))
  return {
    served: { handlers, events, height: () => reader.height(), tcert },
    reader,
    close: async () => {
      opening.port.close()
      await store.close()
    },
  }
}

let servers: RpcServers | undefined

/** the chain thread is ready for what this thread hands over: listen */
async function go(message: Extract<ToFrontControl, { t: 'go' }>): Promise<void> {
  // issue 28: the Ethereum endpoint serves the default namespace
  const defaultNamespace = opened.get(config.node.namespace)
  servers = createRpcServers({
    config,
    namespaces,
    fd: message.fd,
    log,
    thread: start.threadName,
    // the chain thread asks every request thread for its snapshot (this one's too) and merges them
    metrics: () => control.scrape(),
    ethereum: defaultNamespace === undefined ? undefined : createEthereumPush(defaultNamespace.reader, ethereumSettingsOf(config)),
  })
  servers.http.server.on('request', () => setImmediate(failpointNow))
  try {
    const address = await servers.listen()
    post({ t: 'listening', address, fd: listeningFd(servers.http) })
  } catch (error) {
    // the node cannot serve on that port from any thread (EADDRINUSE, EACCES): the chain thread stops with this
    post({ t: 'listening', error: (error as Error).message })
  }
}

/** control messages run one after another: a namespace is open before `go` listens, and before a later `close` of it */
let queue: Promise<void> = Promise.resolve()
const inTurn = (work: () => Promise<void>): void => {
  queue = queue.then(work).catch((error: unknown) => log.error('a request thread failed to follow the chain thread', error))
}

port.on('message', (message: ToFrontControl) => {
  switch (message.t) {
    case 'go':
      return inTurn(() => go(message))
    case 'verifier':
      return verifier.addPort(message.port)
    case 'snapshot':
      void (servers?.metricsSnapshot() ?? Promise.resolve([])).then((snapshot) => post({ t: 'snapshot', id: message.id, snapshot }))
      return
    case 'scraped':
      return control.receive(message)
    case 'open':
      return inTurn(async () => {
        try {
          const namespace = await openNamespace(message)
          opened.set(message.name, namespace)
          namespaces.set(message.name, namespace.served)
          post({ t: 'opened', name: message.name })
        } catch (error) {
          post({ t: 'opened', name: message.name, error: (error as Error).message })
        }
      })
    case 'close':
      return inTurn(async () => {
        namespaces.delete(message.name)
        const namespace = opened.get(message.name)
        opened.delete(message.name)
        await namespace?.close()
        post({ t: 'closed', name: message.name })
      })
    case 'stop':
      return inTurn(async () => {
        await servers?.close()
        await compiler.close()
        await verifier.close()
        for (const namespace of opened.values()) await namespace.close()
        post({ t: 'stopped' })
      })
  }
})
parentPort?.postMessage({ ready: true })
