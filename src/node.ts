/**
 * Assembles one Keel node from its configuration. This thread is the chain thread: the store's
 * writer, the pool and its log, ordering (solo or the network role), execution, the event hub and
 * the archive service. Requests are served by `jsonrpc.threads` request threads (src/front/), which
 * read the store themselves and hand checked transactions over as bytes; with 0 (or a test's
 * in-thread clock or ids) this thread serves them too. `startNode` returns a running node;
 * `stop()` closes it.
 */

import { type KeyObject, webcrypto } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stringify as stringifyToml } from 'smol-toml'
import type { ChainVersion } from '../generated/types.ts'
import type { ChainReader } from './api/chain-reader.ts'
import { ethereumSettingsOf } from './api/eth/handlers.ts'
import { createEthereumPush } from './api/eth/push.ts'
import { createHandlers } from './api/index.ts'
import type { NodeDirectory, NodeStateReport } from './api/node.ts'
import type { ReceiptSigner } from './api/tx-records.ts'
import { createArchiveService } from './archive/service.ts'
import { loadOrCreateNodeCa, type NodeCa } from './cert/ca.ts'
import { type DevAccount, devAccount, type GenesisAccount, genesisGovernanceOf, parseGenesisAccounts } from './chain/genesis.ts'
import type { Chain } from './chain/index.ts'
import { createChain } from './chain/index.ts'
import { createSolcPool, type SolcPoolOptions } from './compile/solc-pool.ts'
import type { KeelConfig } from './config.ts'
import { DEFAULT_TIMERS, TEST_TIMERS } from './consensus/bft/replica.ts'
import { createVerifyPool } from './crypto/verify-pool.ts'
import type { TxSubmitter } from './domain.ts'
import { RECORD_VERSION } from './domain.ts'
import { createEventHub, type EventHub } from './events/hub.ts'
import { consensusStatus, executorStatuses, governanceStatuses, jsonrpcStatus, p2pStatus } from './events/status.ts'
import { createPollingSubscriptions, type PollingOverrides, randomId } from './events/subscriptions.ts'
import { createExecutor } from './exec/executor.ts'
import { createJvmExecutor } from './exec/jvm/child.ts'
import { createJvmEngine } from './exec/jvm/engine.ts'
import { jobs as admissionJobs } from './front/admission-job.ts'
import { createRpcServers, enrollmentCasOf, type RpcServers } from './front/serve.ts'
import { loadRequestThreads, type RequestThreads } from './front/threads.ts'
import type { NodeHooks } from './governance/execute.ts'
import { GovernanceView } from './governance/state.ts'
import { createLogger, type Logger } from './log.ts'
import { createChainRegistry, mergeMetrics } from './metrics/registry.ts'
import { directoryBytes, isViewChangeFinished } from './metrics/sources.ts'
import { networkDirectory } from './network/directory.ts'
import { askNodeState, serveNodeState } from './network/node-state.ts'
import { createNvpRole } from './network/nvp.ts'
import { createVpRole } from './network/vp.ts'
import { loadPeerConfig, type PeerConfig, rewriteOneShotFlags } from './p2p/config.ts'
import { loadNodeIdentity, loadPeerKeys, type NodeIdentity } from './p2p/identity.ts'
import { createPeerNetwork } from './p2p/network.ts'
import { lockDataDir } from './store/data-dir-lock.ts'
import type { Store } from './store/index.ts'
import { openStore, ZERO_HASH } from './store/index.ts'
import { SCHEMA_VERSION } from './store/keyspace.ts'
import { createStateHasher } from './store/state-hasher.ts'
import { threadLayout } from './thread-layout.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Version string reported by tx_getTransactionsVersion (sdk-wire.md §2 recommends ≥ 3.6). */
export const TX_VERSION = '4.1'

/** This build, as version_getVersions names it. */
const KEEL_RELEASE = `keel-${(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version}`

/**
 * The version of each format this build runs (version_getVersions): the transaction format the
 * SDK signs, the version written into records, the ledger layout, Keel's RBFT messages (their
 * first version), and no NoxBFT.
 */
const CHAIN_VERSION: ChainVersion = {
  tx_version: TX_VERSION,
  block_version: RECORD_VERSION,
  encode_version: String(SCHEMA_VERSION),
  consensus_version: '1',
  rbft_version: '1',
  noxbft_version: '',
}

/** CHAIN_VERSION's tags that name a version (the Version contract's runningVersions) */
function runningVersions(): Record<string, string> {
  return Object.fromEntries(Object.entries(CHAIN_VERSION).filter(([, version]) => version !== ''))
}

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
  /** the generated funded account, when the config names no genesis accounts */
  readonly devAccount: DevAccount | undefined
  /** base URL of the JSON-RPC endpoint, e.g. http://127.0.0.1:8081 */
  readonly url: string
  readonly log: Logger
  /** block and system-status events of this node */
  readonly events: EventHub
  stop(): Promise<void>
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
 * Starts a node on its data directory, which it locks first (store/data-dir-lock.ts): a second
 * process on the same directory fails here, naming the PID that holds it. stop() gives it up.
 */
export async function startNode(config: KeelConfig, options: StartOptions = {}): Promise<KeelNode> {
  const lock = lockDataDir(resolve(config.node.dataDir, config.node.namespace))
  let node: KeelNode | undefined
  let stopping: Promise<void> | undefined
  let fatalBeforeStart: Error | undefined
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      try {
        await node?.stop()
      } finally {
        lock.release()
      }
    })()
    return stopping
  }
  // never half-alive: the node stops whole (releasing the lock), then the process exits non-zero
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
  try {
    node = await startLockedNode(config, options, fatal)
  } catch (error) {
    lock.release()
    throw error
  }
  if (fatalBeforeStart !== undefined) fatal(fatalBeforeStart)
  return { ...node, stop }
}

async function startLockedNode(config: KeelConfig, options: StartOptions, fatal: (error: Error) => void): Promise<KeelNode> {
  const log = options.log ?? createLogger({ level: config.log.level, format: config.log.format })
  const nowNs = options.nowNs ?? systemNowNs
  const dataDir = resolve(config.node.dataDir, config.node.namespace)
  // the threads follow the cores this node may use; tests may ask for verify workers themselves
  const layout = threadLayout({ cores: config.node.cores, requestThreads: config.jsonrpc.threads })
  const verifyWorkers = options.verifyWorkers ?? layout.verifyWorkers
  // a pinned clock or pinned ids are functions of this thread: requests that use them are served here
  const requestThreads =
    options.nowNs !== undefined || options.events?.newId !== undefined || verifyWorkers === 0 ? 0 : layout.requestThreads

  let dev: DevAccount | undefined
  let genesis: GenesisAccount[] = parseGenesisAccounts(config.genesis.accounts)
  if (genesis.length === 0) {
    dev = devAccount(join(dataDir, 'genesis-account.json'))
    genesis = [dev]
  }
  const ca = await loadOrCreateNodeCa(dataDir, { hostname: config.node.hostname, warn: (message) => log.warn(message) })
  // a listed enrollment CA file that is no PEM certificate stops the node here, before anything starts
  enrollmentCasOf(config)
  const inNetwork = config.network.configDir === '' ? undefined : loadNetworkFiles(config)
  const ledgerPath = join(dataDir, 'ledger')
  const store = await openStore(ledgerPath)
  await store.initGenesis(genesis)
  const governance = genesisGovernanceOf(config, genesis)
  // the workers load in parallel: each bootstraps its own module graph
  const [verifyPool, stateHasher] = await Promise.all([
    createVerifyPool({
      workers: verifyWorkers,
      nodeVersion: TX_VERSION,
      // the request threads' admissions run there too (front/admission-job.ts)
      jobs: { module: new URL('./front/admission-job.ts', import.meta.url), handlers: admissionJobs },
      log: log.child('verify'),
    }),
    createStateHasher({ worker: verifyWorkers !== 0 && layout.stateHashWorker, log: log.child('state-hash') }),
  ])
  // request threads load their modules while this thread finishes its start; they listen once it has
  const loading =
    requestThreads > 0
      ? loadRequestThreads({
          count: requestThreads,
          start: {
            config,
            dataDir,
            ledgerPath,
            txVersion: TX_VERSION,
            compiler: options.compiler ?? {},
            receiptWaitMs: options.receiptWaitMs,
          },
          verifyPool,
          log,
        })
      : undefined
  // the Java child starts on the first JVM transaction, so EVM-only nodes never pay for it
  const jvmLog = log.child('jvm')
  const jvm = createJvmEngine(createJvmExecutor({ ...config.jvm, log: jvmLog }), jvmLog)
  const executor = createExecutor({
    txGasLimit: BigInt(config.chain.txGasLimit),
    blockGasLimit: BigInt(config.chain.blockGasLimit),
    chainId: BigInt(config.chain.chainId),
    jvm,
    governance,
    versions: { hostname: config.node.hostname, running: runningVersions() },
  })
  const events = createEventHub({ nowNs, log: log.child('events') })
  // the sources are read at each scrape, when every module below exists
  const chainMetrics = createChainRegistry({
    height: () => store.height(),
    poolSize: () => chain.pool.size(),
    ledgerBytes: () => directoryBytes(ledgerPath),
    consensus: () => network?.directory.consensus() ?? { view: 0, state: 'normal', primary: config.node.hostname },
    peersConnected: () => network?.peersConnected() ?? 0,
    pollingSubscriptions: () => subscriptions.size(),
    jvmWallClockStops: () => jvm.wallClockStops(),
  })
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
  const network = inNetwork === undefined ? undefined : startNetworkRole({ ...inNetwork, config, store, chain, events, nowNs, log })
  if (network !== undefined) executor.attachNetwork(network.nodeHooks)
  // simulated transactions are not in the store; their outcomes answer receipt queries too
  const reader: ChainReader = Object.assign(Object.create(store) as ChainReader, {
    getReceipt: (hash: string) => store.getReceipt(hash) ?? chain.simulation(hash)?.receipt,
    getInvalidTx: (hash: string) => store.getInvalidTx(hash) ?? chain.simulation(hash)?.invalid,
  })
  const subscriptions = createPollingSubscriptions(events, log.child('events'), options.events)
  const archive = createArchiveService({
    store,
    dataDir,
    namespace: config.node.namespace,
    publish: (event) => events.publishArchive(event),
    publishStatus: (event) => events.publishStatus(event),
    nowNs,
    log: log.child('archive'),
    batchBlocks: config.archive.batchBlocks,
    testBatchDelayMs: config.archive.testBatchDelayMs,
    newId: options.newSnapshotId ?? randomId,
  })
  await archive.recover()
  chain.onBlock((block) => {
    // first: a snapshot requested for this block must read the state before the next block changes it
    archive.onBlock(block)
    events.publishBlock(block)
    for (const status of executorStatuses(block)) events.publishStatus(status)
    for (const status of governanceStatuses(block)) events.publishStatus(status)
  })
  const compiler = createSolcPool({ ...options.compiler, log: log.child('solc') })
  const selfState = network?.selfState ?? (() => stateReport(store, { state: 'normal', view: 0 }))
  const submitter = network?.submitter ?? chain.submitter
  const handlers = createHandlers({
    // the chain's administrators as this node's committed state holds them: genesis admins, then whoever PERMISSION proposals add
    operators: { isAdmin: (address) => new GovernanceView(reader.state, governance).isAdmin(address) },
    identity: { hostname: config.node.hostname, namespace: config.node.namespace },
    directory: network?.directory,
    protocol: { txVersion: TX_VERSION, gasPrice: 0 },
    chain: reader,
    // issue 28
    ethereum: ethereumSettingsOf(config, governance),
    ordering: chain,
    submitter,
    compiler,
    subscriptions,
    // wall-clock time, not nowNs: clients check a TCert's validity against their own clock
    cert: { ca, tcerts: store, now: () => new Date(), log: log.child('cert') },
    archive,
    signer: network?.signer ?? caSigner(config.node.hostname, ca),
    onBlock: (listener) => events.onBlock(() => listener()),
    receiptWaitMs: options.receiptWaitMs,
    selfState,
    versions: { release: KEEL_RELEASE, chain: CHAIN_VERSION },
    governance: { genesis: governance, latestBlockTime: () => store.getBlock(store.height())?.writeTime ?? 0n },
    config: {
      configText: () => stringifyToml(config),
      genesis: { namespace: config.node.namespace, accounts: genesis.map(({ address, balance }) => ({ address, balance })) },
    },
  })
  let threads: RequestThreads | undefined
  let servers: RpcServers | undefined
  try {
    await chain.start()
    await network?.start()
    const loaded = await loading
    if (requestThreads > 0 && loaded === undefined) log.warn('no request thread could start: requests are served on the chain thread')
    threads = await loaded?.open({
      submitter,
      simulate: chain.simulate,
      handlers,
      events,
      tip: () => store.position(),
      metricsSnapshot: chainMetrics.snapshot,
      log,
      fatal(reason, cause) {
        log.error(`${reason}: the node stops and exits with code ${FATAL_EXIT_CODE} so that its supervisor restarts it`, cause)
        fatal(new Error(reason, { cause }))
      },
    })
  } catch (error) {
    await (await loading)?.discard()
    throw error
  }
  if (threads === undefined)
    servers = createRpcServers({
      config,
      handlers,
      events,
      height: () => store.height(),
      tcert: { ca, isIssued: (pemBytes) => store.getTcert(pemBytes) !== undefined },
      log,
      newId: options.events?.newId,
      thread: 'rpc',
      metrics: async (own) => mergeMetrics([await chainMetrics.snapshot(), await own()]),
      // issue 28
      ethereum: createEthereumPush(reader, ethereumSettingsOf(config)),
    })
  const address = threads?.address ?? (await (servers as RpcServers).listen())
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`
  events.publishStatus(jsonrpcStatus.start(url))
  log.info(
    `JSON-RPC listening on ${url} (namespace ${config.node.namespace}); playground at ${url}/playground; metrics at ${url}/metrics, readiness at ${url}/ready; ${threads === undefined ? 'requests served on the chain thread' : `${threads.count} request thread(s)`}`,
  )
  if (config.tcert.check)
    log.info(
      `TCert check on: requests need tcert, timestamp and signature headers; cert_getTCert ${config.tcert.enrollmentCaFiles.length === 0 ? 'is exempt (no enrollment CA configured)' : `needs a certificate from ${config.tcert.enrollmentCaFiles.length} enrollment CA(s)`}`,
    )
  log.info(
    `ledger in ${dataDir}, height ${store.height()}, genesis ${store.genesisNumber()}, signatures verified by ${verifyPool.mode} (${verifyPool.backend})`,
  )
  log.info(
    `threads for ${layout.cores} core${layout.cores === 1 ? '' : 's'} ([node] cores): the chain thread, ${requestThreads} request, ${verifyWorkers} verify, ${stateHasher.mode === 'worker' ? 'a state hasher' : 'the state hashed on the chain thread'}`,
  )
  if (dev !== undefined)
    log.info(
      `genesis account ${dev.address} holds ${dev.balance}; its private key ${dev.privateKey} is kept in ${join(dataDir, 'genesis-account.json')}`,
    )
  return {
    config,
    devAccount: dev,
    url,
    log,
    events,
    stop: async () => {
      events.publishStatus(jsonrpcStatus.stop())
      await threads?.stop()
      await servers?.close()
      subscriptions.close()
      await network?.stop()
      await chain.stop()
      await jvm.stop()
      await archive.close()
      await compiler.close()
      await verifyPool.close()
      await stateHasher.close()
      await store.close()
      chainMetrics.close()
      log.info('stopped')
    },
  }
}

/** The network files of a node: peer configuration and its identity (certs/ under the same directory). */
function loadNetworkFiles(config: KeelConfig): { peerConfig: PeerConfig; identity: NodeIdentity; peerKeys: Map<string, KeyObject> } {
  const dir = resolve(config.network.configDir)
  const peerConfig = loadPeerConfig(dir)
  if (peerConfig.self.hostname !== config.node.hostname) {
    throw new Error(
      `config: node.hostname is ${JSON.stringify(config.node.hostname)} but ${join(dir, 'peerconfig.toml')} says this node is ${JSON.stringify(peerConfig.self.hostname)}; make them the same`,
    )
  }
  const identity = loadNodeIdentity(join(dir, 'certs'))
  return { peerConfig, identity, peerKeys: loadPeerKeys(join(dir, 'certs'), identity.ca) }
}

/** Starts this node's part in its network: the peer links and the VP or NVP role. */
function startNetworkRole(options: {
  peerConfig: PeerConfig
  identity: NodeIdentity
  peerKeys: Map<string, KeyObject>
  config: KeelConfig
  store: Store
  chain: Chain
  events: EventHub
  nowNs: () => bigint
  log: Logger
}): {
  submitter: TxSubmitter
  /** the VP group NODE proposals change (docs/governance.md §11) */
  nodeHooks: NodeHooks
  directory: NodeDirectory
  signer: ReceiptSigner
  /** peers linked now */
  peersConnected(): number
  selfState(): NodeStateReport
  start(): Promise<void>
  stop(): Promise<void>
} {
  const { peerConfig, config, events, log } = options
  const network = createPeerNetwork({
    config: peerConfig,
    identity: options.identity,
    namespace: config.node.namespace,
    log: log.child('p2p'),
  })
  network.onPeerEvent((event) => {
    if (event.kind === 'refused') return
    const role = event.peer.vp ? 'VP' : 'NVP'
    events.publishStatus(
      event.kind === 'connected'
        ? p2pStatus.connected(event.peer.hostname, role)
        : p2pStatus.lost(event.peer.hostname, role, 'link closed or keepalive missed'),
    )
  })
  const common = {
    peerConfig,
    network,
    peerKeys: options.peerKeys,
    identity: options.identity,
    genesisVps: config.network.genesisVps,
    namespace: config.node.namespace,
    store: options.store,
    chain: options.chain,
    nowNs: options.nowNs,
  }
  const timers = config.network.timers === 'test' ? TEST_TIMERS : DEFAULT_TIMERS
  const vp = peerConfig.self.vp
    ? createVpRole({
        ...common,
        timers,
        batchSize: config.chain.batchSize,
        publishStatus: (event) => events.publishStatus(event),
        log: log.child('consensus'),
      })
    : undefined
  // an NVP forwards a transaction again when it has no outcome after what a view change may take
  const reforwardAfterMs = 2 * timers.requestMs + timers.viewChangeMs
  const nvp =
    vp === undefined
      ? createNvpRole({
          ...common,
          reforwardAfterMs,
          hosts: () => loadPeerConfig(resolve(config.network.configDir)).hosts,
          log: log.child('nvp'),
        })
      : undefined
  const directory = networkDirectory({
    peerConfig,
    network,
    namespace: config.node.namespace,
    askState: (hostname) => askNodeState(network, hostname),
    primary: () => (vp === undefined ? undefined : vp.hostnameOf(vp.replica.state().primary)),
    consensus: () => {
      if (vp === undefined) return { role: 'nvp', state: 'following', view: options.store.getBlockBatch(options.store.height())?.view ?? 0 }
      const state = vp.replica.state()
      const primary = vp.hostnameOf(state.primary)
      return {
        role: 'vp',
        state: state.phase,
        view: state.view,
        ...(primary === undefined ? {} : { primary }),
        stableCheckpoint: state.stable,
      }
    },
    group:
      vp === undefined
        ? undefined
        : {
            members: () => vp.replica.state().members,
            voteToRemove: (id) => vp.voteToRemove(id),
            idOf: (hostname) => vp.idOf(hostname),
            hostnameOf: (id) => vp.hostnameOf(id),
          },
  })
  const selfState = (): NodeStateReport => stateReport(options.store, directory.consensus())
  serveNodeState(network, selfState)
  return {
    submitter: (vp ?? nvp)!.submitter,
    nodeHooks: (vp ?? nvp)!.nodeHooks,
    directory,
    selfState,
    signer: { hostname: config.node.hostname, sign: async (bytes) => network.sign(bytes) },
    peersConnected: () => network.peers().filter((peer) => peer.status === 0).length,
    async start() {
      await network.start()
      await (vp ?? nvp)!.start()
      // Hyperchain's one-shot flags (consensus.md §7): a later start is a reconnect. Safe once the
      // role started: a new VP saved the group it starts from with its chain (network/vp.ts)
      try {
        if (rewriteOneShotFlags(resolve(config.network.configDir), peerConfig))
          log.info('peerconfig.toml: new = false, org = false, rec = true from now on (a restart reconnects)')
      } catch (error) {
        log.warn(`peerconfig.toml: the one-shot flags could not be rewritten (${(error as Error).message}); a restart reads them again`)
      }
      log.info(
        `${vp === undefined ? 'NVP' : `VP ${peerConfig.self.id} of ${peerConfig.nodes.length}`} ${peerConfig.self.hostname}: peer links on ${network.address.ip}:${network.address.port}`,
      )
    },
    async stop() {
      await vp?.stop()
      nvp?.stop()
      await network.stop()
    },
  }
}
