/**
 * A request thread (ARCHITECTURE.md decision 11): it owns HTTP and WebSocket, parses and checks
 * every request, answers reads from its own reader of the store, and turns a submission into a
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
import { createVerifyClient } from '../crypto/verify-pool.ts'
import { failpoint } from '../failpoints.ts'
import type { Logger, LogLevel } from '../log.ts'
import { openStoreReader } from '../store/index.ts'
import { jobs as admissionJobs } from './admission-job.ts'
import { createFrontEvents } from './events.ts'
import type { FrontStart, ToChain, ToFront } from './messages.ts'
import { createRpcServers, listeningFd, type RpcServers } from './serve.ts'
import { createChainLink, createFrontSubmitter } from './submitter.ts'

const start = workerData as FrontStart
const port = start.chain
const { config } = start
const post = (message: ToChain): void => port.postMessage(message)
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
const store = openStoreReader(start.ledgerPath)
const reader = store.reader
const link = createChainLink(port, reader)
const verifier = createVerifyClient(start.verify, { nodeVersion: start.txVersion, backend: start.verifyBackend, handlers: admissionJobs })
const { submitter, simulation } = createFrontSubmitter({ link, verifier })
const answers = createAnswerCache(reader)
const events = createFrontEvents(reader, link, answers, log.child('events'))

// the store's reads, and simulated outcomes too (they are kept here: this thread took the simulation)
const chain = Object.assign(Object.create(reader) as typeof reader, {
  getReceipt: (hash: string) => reader.getReceipt(hash) ?? simulation(hash)?.receipt,
  getInvalidTx: (hash: string) => reader.getInvalidTx(hash) ?? simulation(hash)?.invalid,
})
const compiler = createSolcPool({ ...start.compiler, log: log.child('solc') })
const handlers: Record<string, unknown> = createHandlers({
  identity: { hostname: config.node.hostname, namespace: config.node.namespace },
  protocol: { txVersion: start.txVersion, gasPrice: 0 },
  // issue 28: with the genesis governance, which debug_traceTransaction re-executes under
  ethereum: ethereumSettingsOf(config, genesisGovernanceOf(config, genesisAccountsIn(config, start.dataDir))),
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
})
for (const name of Object.keys(methods)) if (isChainThreadMethod(name)) handlers[name] = link.forward(name)
const tcert = config.tcert.check
  ? {
      ca: await loadOrCreateNodeCa(start.dataDir, { hostname: config.node.hostname, warn: (message) => log.warn(message) }),
      isIssued: (pemBytes: Uint8Array) => reader.getTcert(pemBytes) !== undefined,
    }
  : undefined
let servers: RpcServers | undefined

/** the chain thread is ready for what this thread hands over: listen */
async function go(message: Extract<ToFront, { t: 'go' }>): Promise<void> {
  reader.follow(message.tip)
  servers = createRpcServers({
    config,
    handlers,
    events,
    height: () => reader.height(),
    tcert,
    fd: message.fd,
    log,
    thread: start.threadName,
    // the chain thread asks every request thread for its snapshot (this one's too) and merges them
    metrics: () => link.scrape(),
    // issue 28
    ethereum: createEthereumPush(reader, ethereumSettingsOf(config)),
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

port.on('message', (message: ToFront) => {
  if (message.t === 'go') return void go(message)
  if (message.t === 'verifier') return verifier.addPort(message.port)
  if (message.t === 'snapshot') {
    void (servers?.metricsSnapshot() ?? Promise.resolve([])).then((snapshot) => post({ t: 'snapshot', id: message.id, snapshot }))
    return
  }
  if (message.t !== 'stop') return link.receive(message)
  void (async () => {
    await servers?.close()
    await compiler.close()
    await verifier.close()
    await store.close()
    post({ t: 'stopped' })
  })().catch((error: unknown) => log.error('stopping a request thread failed', error))
})
parentPort?.postMessage({ ready: true })
