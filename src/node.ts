/**
 * Assembles one Keel node from its configuration. This thread is the chain thread: the store's
 * writer, the pool and its log, ordering (solo or the network role), execution, the event hub and
 * the archive service. Requests are served by `jsonrpc.threads` request threads (src/front/), which
 * read the store themselves and hand checked transactions over as bytes; with 0 (or a test's
 * in-thread clock or ids) this thread serves them too. `startNode` returns a running node;
 * `stop()` closes it.
 */

import { webcrypto } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stringify as stringifyToml } from 'smol-toml'
import type { ChainVersion } from '../generated/types.ts'
import type { ChainReader } from './api/chain-reader.ts'
import { ethereumSettingsOf } from './api/eth/handlers.ts'
import { createEthereumPush } from './api/eth/push.ts'
import { createHandlers } from './api/index.ts'
import type { NamespaceControl, NodeStateReport } from './api/node.ts'
import type { ReceiptSigner } from './api/tx-records.ts'
import { type ArchiveService, createArchiveService } from './archive/service.ts'
import { loadOrCreateNodeCa, type NodeCa } from './cert/ca.ts'
import { type DevAccount, devAccount, type GenesisAccount, genesisGovernanceOf, parseGenesisAccounts } from './chain/genesis.ts'
import type { Chain } from './chain/index.ts'
import { createChain } from './chain/index.ts'
import { createSolcPool, type SolcPoolOptions } from './compile/solc-pool.ts'
import { type KeelConfig, namespaceConfig, namespacesOf } from './config.ts'
import { createVerifyPool, type VerifyPool } from './crypto/verify-pool.ts'
import type { TxSubmitter } from './domain.ts'
import { InvalidParams } from './errors.ts'
import { createEventHub, type EventHub } from './events/hub.ts'
import { consensusStatus, executorStatuses, governanceStatuses, jsonrpcStatus } from './events/status.ts'
import { createPollingSubscriptions, type PollingOverrides, randomId } from './events/subscriptions.ts'
import { createExecutor } from './exec/executor.ts'
import { createJvmExecutor } from './exec/jvm/child.ts'
import { createJvmEngine } from './exec/jvm/engine.ts'
import { jobs as admissionJobs } from './front/admission-job.ts'
import {
  createRpcServers,
  enrollmentCasOf,
  type RpcServers,
  type ServedNamespace,
  type ServedNamespaces,
  servedNamespaces,
} from './front/serve.ts'
import { loadRequestThreads, type NamespaceDoors, type RequestThreads } from './front/threads.ts'
import { type GenesisGovernance, GovernanceView } from './governance/state.ts'
import { BUILD_RUNNING, TX_VERSION as BUILD_TX_VERSION, chainVersionOf } from './governance/versions.ts'
import { createLogger, type Logger } from './log.ts'
import { createChainRegistry, type MetricsSnapshot, mergeMetrics } from './metrics/registry.ts'
import { directoryBytes, isViewChangeFinished } from './metrics/sources.ts'
import { createSupportDeclarer, loadOrCreateNodeAccount } from './network/node-account.ts'
import { loadNetworkFiles, type NetworkRole, startNetworkRole } from './network/role.ts'
import { lockDataDir } from './store/data-dir-lock.ts'
import type { Store } from './store/index.ts'
import { openStore, ZERO_HASH } from './store/index.ts'
import { createStateHasher, type StateHasher } from './store/state-hasher.ts'
import { type ThreadLayout, threadLayout } from './thread-layout.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Version string this build reports by default (tx_getTransactionsVersion; the chain's running one may be older). */
export const TX_VERSION = BUILD_TX_VERSION

/** This build, as version_getVersions names it. */
const KEEL_RELEASE = `keel-${(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version}`

/** The version of each format this build runs (governance/versions.ts BUILD_RUNNING), as version_getVersions names them. */
const CHAIN_VERSION: ChainVersion = chainVersionOf(BUILD_RUNNING)

/** What this node says of itself (node_getNodeStates, and its peers' Channel.nodeState requests). */
function stateReport(store: Pick<Store, 'height' | 'getBlock'>, consensus: { state: string; view: number | bigint }): NodeStateReport {
  const height = store.height()
  return {
    state: consensus.state,
    view: Number(consensus.view),
    height,
    hash: store.getBlock(height)?.hash ?? ZERO_HASH,
    versions: { ...CHAIN_VERSION },
  }
}

/** A node running alone signs receipts with its TCert CA key (tcert-ca.crt holds the certificate). */
function caSigner(hostname: string, ca: NodeCa): ReceiptSigner {
  return {
    hostname,
    sign: async (bytes) => new Uint8Array(await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, ca.privateKey, bytes)),
  }
}

export interface KeelNode {
  readonly config: KeelConfig
  /** the default namespace's generated funded account, when the config names no genesis accounts */
  readonly devAccount: DevAccount | undefined
  /** base URL of the JSON-RPC endpoint, e.g. http://127.0.0.1:8081 */
  readonly url: string
  readonly log: Logger
  /** block and system-status events of the default namespace */
  readonly events: EventHub
  /** issue 30: the namespaces this process serves; an operator starts and stops them while it runs */
  readonly namespaces: NodeNamespaces
  stop(): Promise<void>
}

/** What node_getNamespaces says of one namespace. */
export interface NamespaceStatus {
  name: string
  /** running: served; failed: could not start (`reason`); stopped: an operator stopped it */
  state: 'starting' | 'running' | 'stopping' | 'stopped' | 'failed'
  /** why it failed to start */
  reason?: string
  /** its ledger's height, while it runs */
  height?: number
  dataDir: string
  /** the default namespace answers requests naming none; it runs as long as the node */
  isDefault: boolean
}

export interface NodeNamespaces {
  /** every namespace this process knows: configured, started or stopped since, the default first */
  list(): NamespaceStatus[]
  /** a running namespace's events and generated account */
  get(name: string): { events: EventHub; devAccount: DevAccount | undefined; dataDir: string } | undefined
  /** starts one (a new name gets `<dataDir>/<name>/` and its own genesis); a failure is its status, not the node's */
  start(name: string): Promise<NamespaceStatus>
  /** stops one (never the default): its requests answer -32010, the others keep serving */
  stop(name: string): Promise<NamespaceStatus>
}

export interface StartOptions {
  log?: Logger
  /** node clock in ns; tests pin it to replay signed vectors (requests are then served on this thread, where the clock is) */
  nowNs?: () => bigint
  /** worker threads verifying signatures; default: the layout of `[node] cores` (src/thread-layout.ts). 0 also hashes the world state and serves requests in this thread (no worker at all) */
  verifyWorkers?: number
  /** polling subscriptions: clock, expiry, caps, ids (tests shorten or pin them; pinned ids serve requests on this thread) */
  events?: PollingOverrides
  /** snapshot ids (tests pin the first one to replay examples); default 16 random bytes */
  newSnapshotId?: () => string
  /** contract_compileContract's compilers: packages, concurrency, queue bound (tests); default every installed release */
  compiler?: Omit<SolcPoolOptions, 'log'>
  /** how long tx_sendTransactionReturnReceipt waits for an outcome (default 10 s) */
  receiptWaitMs?: number
  /**
   * After a fault the node cannot recover from in place (a request thread died: docs/reliability.md
   * "Threads that die"), once the node has stopped and released its data directory. Default: exit
   * the process with code 70, so a supervisor (systemd, Kubernetes) restarts it. Tests pass their own.
   */
  onFatal?: (error: Error) => void
}

/** EX_SOFTWARE (sysexits.h): an internal fault; a supervisor restarts the node */
export const FATAL_EXIT_CODE = 70

const exitOnFatal = (): void => process.exit(FATAL_EXIT_CODE)

const systemNowNs = (): bigint => BigInt(Date.now()) * 1_000_000n + BigInt(process.hrtime.bigint() % 1_000_000n)

/**
 * Starts a node: the modules every namespace shares (verify workers, state hasher, compilers,
 * request threads, the JSON-RPC port), then each namespace's chain on its own data directory, which
 * it locks first (store/data-dir-lock.ts): a second process on the same directory fails there,
 * naming the PID that holds it. A namespace other than the default that cannot start is reported in
 * its status (node_getNamespaces) and the others serve; the default one failing stops the start.
 * stop() closes everything and gives the directories up.
 */
export async function startNode(config: KeelConfig, options: StartOptions = {}): Promise<KeelNode> {
  let node: KeelNode | undefined
  let stopping: Promise<void> | undefined
  let fatalBeforeStart: Error | undefined
  const stop = (): Promise<void> => {
    stopping ??= node?.stop() ?? Promise.resolve()
    return stopping
  }
  // never half-alive: the node stops whole (releasing the locks), then the process exits non-zero
  const fatal = (error: Error): void => {
    if (node === undefined) {
      fatalBeforeStart ??= error
      return
    }
    const running = node
    stop()
      .catch((stopError: unknown) => running.log.error('stopping after a fatal fault failed', stopError))
      .finally(() => (options.onFatal ?? exitOnFatal)(error))
  }
  node = await startLockedNode(config, options, fatal)
  if (fatalBeforeStart !== undefined) fatal(fatalBeforeStart)
  return { ...node, stop }
}

/** What every namespace's chain shares on the chain thread. */
interface SharedModules {
  options: StartOptions
  nowNs: () => bigint
  verifyPool: VerifyPool
  stateHasher: StateHasher
  compiler: ReturnType<typeof createSolcPool>
  /** true when the process serves several namespaces: their log lines name them */
  nameLogs: boolean
  /** the default namespace (the first configured) */
  defaultName: string
  /** set once a namespace's metrics carry the process's own figures (createChainRegistry `process`) */
  processMetricsTaken?: boolean
  /** node_getNamespaces, node_startNamespace, node_stopNamespace in every namespace (set before the first starts) */
  namespaceControl?: NamespaceControl
  log: Logger
}

/**
 * The shared modules, then the namespaces' chains, then the request threads (or this thread's
 * servers) open and the node says what it runs.
 */
async function startLockedNode(config: KeelConfig, options: StartOptions, fatal: (error: Error) => void): Promise<KeelNode> {
  const log = options.log ?? createLogger({ level: config.log.level, format: config.log.format })
  const threadCounts = threadCountsOf(config, options)
  // a listed enrollment CA file that is no PEM certificate stops the node here, before anything starts
  enrollmentCasOf(config)
  const configured = namespacesOf(config)
  const { verifyPool, stateHasher } = await startWorkers({ ...threadCounts, log })
  const compiler = createSolcPool({ ...options.compiler, log: log.child('solc') })
  const closeShared = async (): Promise<void> => {
    await compiler.close()
    await verifyPool.close()
    await stateHasher.close()
  }
  const shared: SharedModules = {
    options,
    nowNs: options.nowNs ?? systemNowNs,
    verifyPool,
    stateHasher,
    compiler,
    nameLogs: configured.length > 1,
    defaultName: config.node.namespace,
    log,
  }
  // request threads load their modules while this thread starts the chains; they listen once it has
  const loading = loadThreads({ config, options, count: threadCounts.requestThreads, verifyPool, log })
  const namespaces = createNamespaceSet(config, shared)
  shared.namespaceControl = rpcNamespaceControl(namespaces.control)
  let threads: RequestThreads | undefined
  try {
    await namespaces.startConfigured()
    const loaded = await loading
    if (threadCounts.requestThreads > 0 && loaded === undefined)
      log.warn('no request thread could start: requests are served on the chain thread')
    threads = await loaded?.open({
      namespaces: namespaces.running().map(doorsOf),
      metricsSnapshot: () => namespaces.metricsSnapshot(),
      log,
      fatal(reason, cause) {
        log.error(`${reason}: the node stops and exits with code ${FATAL_EXIT_CODE} so that its supervisor restarts it`, cause)
        fatal(new Error(reason, { cause }))
      },
    })
  } catch (error) {
    await (await loading)?.discard()
    await namespaces.stopAll()
    await closeShared()
    await namespaces.releaseAll()
    throw error
  }
  const first = namespaces.defaultChain()
  const served = threads === undefined ? servedNamespaces(config.node.namespace) : undefined
  if (served !== undefined) for (const chain of namespaces.running()) served.set(chain.name, servedOn(chain))
  namespaces.attachFront({
    open: async (chain) => (threads === undefined ? served?.set(chain.name, servedOn(chain)) : threads.openNamespace(doorsOf(chain))),
    close: async (name) => (threads === undefined ? served?.delete(name) : threads.closeNamespace(name)),
  })
  const servers =
    served === undefined
      ? undefined
      : chainThreadServers({
          config,
          served,
          reader: first.reader,
          metricsSnapshot: () => namespaces.metricsSnapshot(),
          newId: options.events?.newId,
          log,
        })
  const stopAll = async (): Promise<void> => {
    namespaces.stopping()
    await threads?.stop()
    await servers?.close()
    await namespaces.stopAll()
    // the ledgers after the shared workers, as a node with one namespace always closed them: closed
    // first, a ledger whose block commit had failed on a full disk hung (test/disk-full.test.ts)
    await closeShared()
    await namespaces.releaseAll()
  }
  let url: string
  try {
    url = urlOf(threads?.address ?? (await (servers as RpcServers).listen()))
  } catch (error) {
    // this thread could not listen: nothing stays running, no directory stays locked
    await stopAll()
    throw error
  }
  namespaces.listening(url)
  logStarted({ config, url, threads, chains: namespaces.running(), verifyPool, stateHasher, threadCounts, log })
  for (const failed of namespaces.list().filter((status) => status.state === 'failed'))
    log.error(`namespace ${failed.name} did not start (${failed.reason}); the others serve`)
  return {
    config,
    devAccount: first.dev,
    url,
    log,
    events: first.events,
    namespaces: namespaces.control,
    stop: async () => {
      await stopAll()
      log.info('stopped')
    },
  }
}

/** the namespaces as the node_ methods answer of them: no data directory (a client has no use for the node's paths) */
function rpcNamespaceControl(control: NodeNamespaces): NamespaceControl {
  const wire = ({ dataDir: _, ...status }: NamespaceStatus): ReturnType<NamespaceControl['list']>[number] => status
  return {
    list: () => control.list().map(wire),
    start: async (name) => wire(await control.start(name)),
    stop: async (name) => wire(await control.stop(name)),
  }
}

/** One namespace's chain on this thread: its ledger, pool, ordering, events, subscriptions, TCert CA, archive and handlers. */
interface NamespaceChain {
  readonly name: string
  /** the configuration it runs with (config.ts namespaceConfig) */
  readonly config: KeelConfig
  readonly dataDir: string
  readonly ledgerPath: string
  readonly dev: DevAccount | undefined
  readonly store: Store
  readonly reader: ChainReader
  readonly ca: NodeCa
  readonly events: EventHub
  readonly chain: Chain
  readonly submitter: TxSubmitter
  readonly handlers: ReturnType<typeof createHandlers>
  readonly metrics: ReturnType<typeof createChainRegistry>
  readonly log: Logger
  /** stops it, all but its ledger */
  stop(): Promise<void>
  /** closes its ledger and unlocks its directory, once it has stopped (a node stopping does it after closing the shared workers) */
  release(): Promise<void>
}

/** what a namespace's chain lends the request threads */
function doorsOf(chain: NamespaceChain): NamespaceDoors {
  return {
    name: chain.name,
    dataDir: chain.dataDir,
    ledgerPath: chain.ledgerPath,
    submitter: chain.submitter,
    simulate: chain.chain.simulate,
    handlers: chain.handlers,
    events: chain.events,
    tip: () => chain.store.position(),
    log: chain.log,
  }
}

/** what a namespace's chain gives this thread's servers, when requests are served here */
function servedOn(chain: NamespaceChain): ServedNamespace {
  const { store } = chain
  return {
    handlers: chain.handlers,
    events: chain.events,
    height: () => store.height(),
    tcert: { ca: chain.ca, isIssued: (pemBytes) => store.getTcert(pemBytes) !== undefined },
  }
}

/**
 * The namespaces of this process and their states: those configured start with the node; an
 * operator starts and stops others while it runs (node_startNamespace, node_stopNamespace). Each
 * state change is told to the front (request threads or this thread's servers) before it is
 * reported, so a namespace answers only once every thread serves it.
 *
 * Long because: the set's operations share its maps of chains and states and the front they tell.
 */
function createNamespaceSet(config: KeelConfig, shared: SharedModules) {
  const chains = new Map<string, NamespaceChain>()
  const states = new Map<string, NamespaceStatus>()
  const defaultName = config.node.namespace
  let front: { open(chain: NamespaceChain): Promise<void>; close(name: string): Promise<void> } | undefined
  let url: string | undefined
  let closing = false
  const statusOf = (name: string, state: NamespaceStatus['state'], reason?: string): NamespaceStatus => ({
    name,
    state,
    ...(reason === undefined ? {} : { reason }),
    dataDir: resolve(config.node.dataDir, name),
    isDefault: name === defaultName,
  })
  const withHeight = (status: NamespaceStatus): NamespaceStatus => {
    const chain = chains.get(status.name)
    return chain === undefined || status.state !== 'running' ? status : { ...status, height: chain.store.height() }
  }
  /** starts one chain; its failure is its state */
  const startOne = async (name: string): Promise<NamespaceChain | undefined> => {
    states.set(name, statusOf(name, 'starting'))
    try {
      const chain = await startNamespaceChain(namespaceConfig(config, name), shared)
      chains.set(name, chain)
      states.set(name, statusOf(name, 'running'))
      return chain
    } catch (error) {
      states.set(name, statusOf(name, 'failed', (error as Error).message))
      if (name === defaultName) throw error
      shared.log.error(`namespace ${name} failed to start`, error)
      return undefined
    }
  }
  /** stops one; its ledger is closed at once, or by `releaseAll` when the node stops (after the shared workers) */
  const stopOne = async (name: string, releaseNow: boolean): Promise<NamespaceChain | undefined> => {
    const chain = chains.get(name)
    if (chain === undefined) return undefined
    states.set(name, statusOf(name, 'stopping'))
    await front?.close(name)
    chains.delete(name)
    await chain.stop()
    if (releaseNow) await chain.release()
    states.set(name, statusOf(name, 'stopped'))
    return chain
  }
  const stopped: NamespaceChain[] = []
  const control: NodeNamespaces = {
    list: () =>
      [...states.values()]
        .map(withHeight)
        .sort((a, b) => (a.isDefault ? -1 : b.isDefault ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    get(name) {
      const chain = chains.get(name)
      return chain === undefined ? undefined : { events: chain.events, devAccount: chain.dev, dataDir: chain.dataDir }
    },
    async start(name) {
      if (!/^[a-z0-9_]{1,64}$/.test(name))
        throw new InvalidParams(`invalid namespace name ${JSON.stringify(name.slice(0, 70))}: it must match [a-z0-9_]{1,64}`)
      if (closing) throw new InvalidParams('the node is stopping')
      const state = states.get(name)?.state
      if (state === 'running' || state === 'starting' || state === 'stopping')
        throw new InvalidParams(`namespace ${name} is ${state}; node_getNamespaces lists each namespace's state`)
      const chain = await startOne(name)
      if (chain !== undefined) {
        try {
          await front?.open(chain)
          if (url !== undefined) chain.events.publishStatus(jsonrpcStatus.start(url))
          chain.log.info(`namespace ${name} started: ledger in ${chain.dataDir}, height ${chain.store.height()}`)
        } catch (error) {
          chains.delete(name)
          await chain.stop()
          await chain.release()
          states.set(name, statusOf(name, 'failed', (error as Error).message))
        }
      }
      return withHeight(states.get(name) as NamespaceStatus)
    },
    async stop(name) {
      if (name === defaultName)
        throw new InvalidParams(
          `namespace ${name} is this node's default (requests naming none are handled in it); it stops only with the node`,
        )
      const state = states.get(name)?.state
      if (state !== 'running')
        throw new InvalidParams(
          state === undefined
            ? `no namespace ${name} on this node; node_getNamespaces lists them`
            : `namespace ${name} is ${state}, not running`,
        )
      await stopOne(name, true)
      shared.log.info(`namespace ${name} stopped`)
      return states.get(name) as NamespaceStatus
    },
  }
  return {
    control,
    list: control.list,
    running: () => [...chains.values()],
    defaultChain: () => chains.get(defaultName) as NamespaceChain,
    async startConfigured() {
      for (const name of namespacesOf(config)) await startOne(name)
    },
    attachFront(attached: NonNullable<typeof front>) {
      front = attached
    },
    listening(at: string) {
      url = at
      for (const chain of chains.values()) chain.events.publishStatus(jsonrpcStatus.start(at))
    },
    stopping() {
      closing = true
      for (const chain of chains.values()) chain.events.publishStatus(jsonrpcStatus.stop())
    },
    /** stops every namespace, all but their ledgers (releaseAll) */
    async stopAll() {
      front = undefined
      for (const name of [...chains.keys()].reverse()) {
        const chain = await stopOne(name, false)
        if (chain !== undefined) stopped.push(chain)
      }
    },
    /** closes the ledgers of the namespaces stopAll stopped and unlocks their directories */
    async releaseAll() {
      for (const chain of stopped.splice(0)) await chain.release()
    },
    /** every running namespace's chain metrics, merged into one snapshot list */
    async metricsSnapshot(): Promise<MetricsSnapshot> {
      const snapshots = await Promise.all([...chains.values()].map((chain) => chain.metrics.snapshot()))
      return snapshots.flat()
    },
  }
}

/**
 * One namespace's chain (issue 30): its modules, each made by a factory that takes what it uses, in
 * the order they need each other, on its data directory, which it locks first. A module a metric or
 * a handler reads later (chain, network, subscriptions) is read when it is called, once every
 * module exists. What it opened is closed again when a later step fails.
 */
async function startNamespaceChain(config: KeelConfig, shared: SharedModules): Promise<NamespaceChain> {
  const { options, nowNs, verifyPool, stateHasher, compiler } = shared
  const name = config.node.namespace
  const log = shared.nameLogs || name !== shared.defaultName ? shared.log.child(name) : shared.log
  const dataDir = resolve(config.node.dataDir, name)
  const lock = lockDataDir(dataDir)
  let ledger: Store | undefined
  const release = async (): Promise<void> => {
    await ledger?.close()
    lock.release()
  }
  const undo: (() => Promise<void> | void)[] = []
  const unwind = async (): Promise<void> => {
    for (const step of undo.reverse()) await step()
    undo.length = 0
  }
  try {
    const { dev, genesis } = genesisAccountsOf(config, dataDir)
    const ca = await loadOrCreateNodeCa(dataDir, { hostname: config.node.hostname, warn: (message) => log.warn(message) })
    const inNetwork = config.network.configDir === '' ? undefined : loadNetworkFiles(config)
    const ledgerPath = join(dataDir, 'ledger')
    const store = await openStore(ledgerPath)
    ledger = store
    await store.initGenesis(genesis)
    const governance = genesisGovernanceOf(config, genesis)
    const { jvm, executor } = createExecution({ config, governance, selfCertPem: ca.pem, log })
    undo.push(() => jvm.stop())
    const events = createEventHub({ nowNs, log: log.child('events') })
    // the sources are read at each scrape, when every module below exists
    const chainMetrics = createChainRegistry(
      {
        height: () => store.height(),
        poolSize: () => chain.pool.size(),
        ledgerBytes: () => directoryBytes(ledgerPath),
        consensus: () => network?.directory.consensus() ?? { view: 0, state: 'normal', primary: config.node.hostname },
        peersConnected: () => network?.peersConnected() ?? 0,
        pollingSubscriptions: () => subscriptions.size(),
        jvmWallClockStops: () => jvm.wallClockStops(),
      },
      { namespace: name, process: shared.processMetricsTaken !== true },
    )
    shared.processMetricsTaken = true
    undo.push(() => chainMetrics.close())
    events.onStatus((status) => {
      if (isViewChangeFinished(status)) chainMetrics.record.observeViewChange()
    })
    const chain = createChain({
      metrics: chainMetrics.record,
      store,
      executor,
      verifyPool,
      stateHasher,
      batchSize: config.chain.batchSize,
      batchTimeoutMs: config.chain.batchTimeoutMs,
      poolCapacity: config.chain.poolCapacity,
      txRate: { perSecond: config.chain.txRatePerSecond, burst: config.chain.txRateBurst },
      nowNs,
      log: log.child('chain'),
      ordering: inNetwork === undefined ? 'solo' : 'consensus',
      onHalt: (reason) => events.publishStatus(consensusStatus.orderingStopped(reason)),
      governance,
    })
    const network =
      inNetwork === undefined
        ? undefined
        : startNetworkRole({
            ...inNetwork,
            config,
            store,
            chain,
            events,
            nowNs,
            stateReport: (consensus) => stateReport(store, consensus),
            log,
          })
    if (network !== undefined) executor.attachNetwork(network.nodeHooks)
    const reader = readerWithSimulations(store, chain)
    const subscriptions = createPollingSubscriptions(events, log.child('events'), options.events)
    undo.push(() => subscriptions.close())
    const archive = await startArchive({ config, store, dataDir, events, nowNs, newId: options.newSnapshotId, log })
    undo.push(() => archive.close())
    publishCommitted({ chain, archive, events })
    const submitter = network?.submitter ?? chain.submitter
    const handlers = chainThreadHandlers({
      config,
      store,
      reader,
      governance,
      genesis,
      network,
      nodeAccount: loadOrCreateNodeAccount(dataDir),
      nowNs,
      chain,
      submitter,
      compiler,
      subscriptions,
      ca,
      archive,
      events,
      receiptWaitMs: options.receiptWaitMs,
      namespaces: shared.namespaceControl,
      log,
    })
    undo.push(() => chain.stop())
    await chain.start()
    undo.push(async () => await network?.stop())
    await network?.start()
    return {
      name,
      config,
      dataDir,
      ledgerPath,
      dev,
      store,
      reader,
      ca,
      events,
      chain,
      submitter,
      handlers,
      metrics: chainMetrics,
      log,
      // in the order a node with one namespace always stopped in
      async stop() {
        undo.length = 0
        subscriptions.close()
        await network?.stop()
        await chain.stop()
        await jvm.stop()
        await archive.close()
        chainMetrics.close()
      },
      release,
    }
  } catch (error) {
    await unwind()
    await release()
    throw error
  }
}

interface ThreadCounts {
  layout: ThreadLayout
  verifyWorkers: number
  requestThreads: number
  stateHashWorker: boolean
}

/**
 * The node's threads: the layout of `[node] cores` (src/thread-layout.ts); tests may ask for verify
 * workers themselves. A pinned clock or pinned ids are functions of this thread: requests that use
 * them are served here.
 */
function threadCountsOf(config: KeelConfig, options: Pick<StartOptions, 'verifyWorkers' | 'nowNs' | 'events'>): ThreadCounts {
  const layout = threadLayout({ cores: config.node.cores, requestThreads: config.jsonrpc.threads })
  const verifyWorkers = options.verifyWorkers ?? layout.verifyWorkers
  // a test's `verifyWorkers: 0` asks for the node of one thread; a layout without verify workers keeps its request threads
  const requestThreads =
    options.nowNs !== undefined || options.events?.newId !== undefined || options.verifyWorkers === 0 ? 0 : layout.requestThreads
  // a test that asks for verify workers gets the state hasher's worker beside them
  const stateHashWorker = options.verifyWorkers === undefined ? layout.stateHashWorker : options.verifyWorkers > 0
  return { layout, verifyWorkers, requestThreads, stateHashWorker }
}

/** the request threads, loading their modules while the chain thread finishes its start; they listen once it has (none for 0) */
function loadThreads(options: {
  config: KeelConfig
  options: Pick<StartOptions, 'compiler' | 'receiptWaitMs'>
  count: number
  verifyPool: VerifyPool
  log: Logger
}): ReturnType<typeof loadRequestThreads> | undefined {
  const { config, count, verifyPool, log } = options
  if (count === 0) return undefined
  const { compiler, receiptWaitMs } = options.options
  return loadRequestThreads({
    count,
    start: { config, txVersion: TX_VERSION, compiler: compiler ?? {}, receiptWaitMs },
    verifyPool,
    log,
  })
}

/** the genesis accounts of the configuration; with none, one generated account whose key is kept in the data directory */
function genesisAccountsOf(config: KeelConfig, dataDir: string): { dev: DevAccount | undefined; genesis: GenesisAccount[] } {
  const configured = parseGenesisAccounts(config.genesis.accounts)
  if (configured.length > 0) return { dev: undefined, genesis: configured }
  const dev = devAccount(join(dataDir, 'genesis-account.json'))
  return { dev, genesis: [dev] }
}

/** the verify workers (which also run the request threads' bursts of admissions) and the state hasher; they load in parallel */
async function startWorkers(options: {
  verifyWorkers: number
  stateHashWorker: boolean
  log: Logger
}): Promise<{ verifyPool: VerifyPool; stateHasher: StateHasher }> {
  const { verifyWorkers, log } = options
  const [verifyPool, stateHasher] = await Promise.all([
    createVerifyPool({
      workers: verifyWorkers,
      nodeVersion: TX_VERSION,
      // the workers' entry imports the admission jobs; this thread runs them from the same table when no worker does
      jobs: { workerFile: new URL('./front/admission-worker.ts', import.meta.url), handlers: admissionJobs },
      log: log.child('verify'),
    }),
    createStateHasher({ worker: options.stateHashWorker, log: log.child('state-hash') }),
  ])
  return { verifyPool, stateHasher }
}

/** the EVM executor and the JVM engine it hands Java contracts to; the Java child starts on the first JVM transaction, so EVM-only nodes never pay for it */
function createExecution(options: { config: KeelConfig; governance: GenesisGovernance; selfCertPem: string; log: Logger }): {
  jvm: ReturnType<typeof createJvmEngine>
  executor: ReturnType<typeof createExecutor>
} {
  const { config, governance } = options
  const jvmLog = options.log.child('jvm')
  const jvm = createJvmEngine(createJvmExecutor({ ...config.jvm, log: jvmLog }), jvmLog)
  const executor = createExecutor({
    txGasLimit: BigInt(config.chain.txGasLimit),
    blockGasLimit: BigInt(config.chain.blockGasLimit),
    chainId: BigInt(config.chain.chainId),
    jvm,
    governance,
    // a node that runs alone binds its node account with its TCert CA certificate (governance.md §17)
    versions: { hostname: config.node.hostname, selfCertPem: options.selfCertPem },
  })
  return { jvm, executor }
}

/** the archive service, with any move a crash interrupted finished (archive/service.ts) */
async function startArchive(options: {
  config: KeelConfig
  store: Store
  dataDir: string
  events: Pick<EventHub, 'publishArchive' | 'publishStatus'>
  nowNs: () => bigint
  newId: (() => string) | undefined
  log: Logger
}): Promise<ArchiveService> {
  const { config, events } = options
  const archive = createArchiveService({
    store: options.store,
    dataDir: options.dataDir,
    namespace: config.node.namespace,
    publish: (event) => events.publishArchive(event),
    publishStatus: (event) => events.publishStatus(event),
    nowNs: options.nowNs,
    log: options.log.child('archive'),
    batchBlocks: config.archive.batchBlocks,
    testBatchDelayMs: config.archive.testBatchDelayMs,
    newId: options.newId ?? randomId,
  })
  await archive.recover()
  return archive
}

/** each committed block: to the archive first, then to the event hub with the statuses it carries */
function publishCommitted(options: {
  chain: Pick<Chain, 'onBlock'>
  archive: Pick<ArchiveService, 'onBlock'>
  events: Pick<EventHub, 'publishBlock' | 'publishStatus'>
}): void {
  const { archive, events } = options
  options.chain.onBlock((block) => {
    // first: a snapshot requested for this block must read the state before the next block changes it
    archive.onBlock(block)
    events.publishBlock(block)
    for (const status of executorStatuses(block)) events.publishStatus(status)
    for (const status of governanceStatuses(block)) events.publishStatus(status)
  })
}

/** the JSON-RPC handlers this thread serves (a request thread forwards it what only this thread can serve) */
function chainThreadHandlers(options: {
  config: KeelConfig
  store: Store
  /** the store, with simulated transactions' outcomes */
  reader: ChainReader
  governance: GenesisGovernance
  genesis: readonly GenesisAccount[]
  network: NetworkRole | undefined
  /** the node's own account (network/node-account.ts), which signs its version_setSupportedVersion */
  nodeAccount: ReturnType<typeof loadOrCreateNodeAccount>
  nowNs: () => bigint
  chain: Chain
  submitter: TxSubmitter
  compiler: ReturnType<typeof createSolcPool>
  subscriptions: ReturnType<typeof createPollingSubscriptions>
  ca: NodeCa
  archive: ArchiveService
  events: Pick<EventHub, 'onBlock'>
  receiptWaitMs: number | undefined
  namespaces: NamespaceControl | undefined
  log: Logger
}): ReturnType<typeof createHandlers> {
  const { config, store, reader, governance, network, ca, events } = options
  const view = () => new GovernanceView(reader.state, governance)
  const runningTxVersion = () => view().runningVersions().tx_version ?? TX_VERSION
  return createHandlers({
    // the chain's administrators as this node's committed state holds them: genesis admins, then whoever PERMISSION proposals add
    operators: { isAdmin: (address) => new GovernanceView(reader.state, governance).isAdmin(address) },
    identity: { hostname: config.node.hostname, namespace: config.node.namespace },
    directory: network?.directory,
    protocol: { txVersion: TX_VERSION, gasPrice: 0 },
    chain: reader,
    // issue 28
    ethereum: ethereumSettingsOf(config, governance),
    ordering: options.chain,
    submitter: options.submitter,
    compiler: options.compiler,
    subscriptions: options.subscriptions,
    // wall-clock time, not nowNs: clients check a TCert's validity against their own clock
    cert: { ca, tcerts: store, now: () => new Date(), log: options.log.child('cert') },
    archive: options.archive,
    signer: network?.signer ?? caSigner(config.node.hostname, ca),
    onBlock: (listener) => events.onBlock(() => listener()),
    receiptWaitMs: options.receiptWaitMs,
    selfState: network?.selfState ?? (() => stateReport(store, { state: 'normal', view: 0 })),
    namespaces: options.namespaces,
    versions: {
      release: KEEL_RELEASE,
      chain: CHAIN_VERSION,
      ledger: {
        running: () => view().runningVersions(),
        supportedBy: (hostname) => view().supportedBy(hostname)?.versions,
        vpHostnames: () => network?.nodeHooks.vps().map((vp) => vp.hostname) ?? [config.node.hostname],
      },
      declare: createSupportDeclarer({
        account: options.nodeAccount,
        binder:
          network === undefined
            ? { ...caSigner(config.node.hostname, ca), certPem: ca.pem }
            : { ...network.signer, certPem: network.certPem },
        submitter: options.submitter,
        runningTxVersion,
        nowNs: options.nowNs,
      }),
    },
    governance: { genesis: governance, latestBlockTime: () => store.getBlock(store.height())?.writeTime ?? 0n },
    config: {
      configText: () => stringifyToml(config),
      genesis: { namespace: config.node.namespace, accounts: options.genesis.map(({ address, balance }) => ({ address, balance })) },
    },
  })
}

/** the store as the handlers read it: simulated transactions are not in the store; their outcomes answer receipt queries too */
function readerWithSimulations(store: Store, chain: Pick<Chain, 'simulation'>): ChainReader {
  return Object.assign(Object.create(store) as ChainReader, {
    getReceipt: (hash: string) => store.getReceipt(hash) ?? chain.simulation(hash)?.receipt,
    getInvalidTx: (hash: string) => store.getInvalidTx(hash) ?? chain.simulation(hash)?.invalid,
  })
}

/** the JSON-RPC servers on this thread, when no request thread serves (StartOptions.verifyWorkers 0, a pinned clock or ids) */
function chainThreadServers(options: {
  config: KeelConfig
  served: ServedNamespaces
  /** the default namespace's reads: the Ethereum endpoint serves it (issue 28) */
  reader: ChainReader
  metricsSnapshot(): Promise<MetricsSnapshot>
  newId: (() => string) | undefined
  log: Logger
}): RpcServers {
  const { config } = options
  return createRpcServers({
    config,
    namespaces: options.served,
    log: options.log,
    newId: options.newId,
    thread: 'rpc',
    metrics: async (own) => mergeMetrics([await options.metricsSnapshot(), await own()]),
    // issue 28
    ethereum: createEthereumPush(options.reader, ethereumSettingsOf(config)),
  })
}

/** the URL clients reach a listening address at (a wildcard address as the loopback) */
function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`
}

/** what the operator reads once the node listens: where, with which checks, on which ledgers and threads, and the generated accounts */
function logStarted(options: {
  config: KeelConfig
  url: string
  threads: RequestThreads | undefined
  chains: readonly NamespaceChain[]
  verifyPool: Pick<VerifyPool, 'mode' | 'backend'>
  stateHasher: Pick<StateHasher, 'mode'>
  threadCounts: ThreadCounts
  log: Logger
}): void {
  const { config, url, threads, chains, verifyPool, stateHasher, log } = options
  const { layout, requestThreads, verifyWorkers } = options.threadCounts
  const names = chains.map((chain) => chain.name)
  log.info(
    `JSON-RPC listening on ${url} (namespace${names.length === 1 ? '' : 's'} ${names.join(', ')}); playground at ${url}/playground; metrics at ${url}/metrics, readiness at ${url}/ready; ${threads === undefined ? 'requests served on the chain thread' : `${threads.count} request thread(s)`}`,
  )
  if (config.tcert.check)
    log.info(
      `TCert check on: requests need tcert, timestamp and signature headers; cert_getTCert ${config.tcert.enrollmentCaFiles.length === 0 ? 'is exempt (no enrollment CA configured)' : `needs a certificate from ${config.tcert.enrollmentCaFiles.length} enrollment CA(s)`}`,
    )
  const verifiedBy =
    verifyPool.mode === 'workers' ? 'workers' : threads === undefined ? 'this thread' : 'each request thread (relayed ones on this thread)'
  for (const { log: chainLog, dataDir, store } of chains)
    chainLog.info(
      `ledger in ${dataDir}, height ${store.height()}, genesis ${store.genesisNumber()}, signatures verified by ${verifiedBy} (${verifyPool.backend})`,
    )
  log.info(
    `threads for ${layout.cores} core${layout.cores === 1 ? '' : 's'} ([node] cores): the chain thread, ${requestThreads} request, ${verifyWorkers} verify, ${stateHasher.mode === 'worker' ? 'a state hasher' : 'the state hashed on the chain thread'}`,
  )
  for (const { log: chainLog, dev, dataDir } of chains)
    if (dev !== undefined)
      chainLog.info(
        `genesis account ${dev.address} holds ${dev.balance}; its private key ${dev.privateKey} is kept in ${join(dataDir, 'genesis-account.json')}`,
      )
}
