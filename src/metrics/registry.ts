/**
 * The node's Prometheus metrics (prom-client), named after Prometheus conventions: `keel_` prefix,
 * `_total` counters, `_seconds` durations, label sets bounded by what the node knows (canonical
 * method names, error codes of openrpc.json, the consensus states, discard reasons).
 *
 * Each thread keeps its own registry and updates what happens on it: request threads the JSON-RPC
 * series and their own event-loop lag, the chain thread the transaction, block, consensus, peer
 * and process series. `GET /metrics` merges the threads' registries (`mergeMetrics`): counters and
 * histograms add up, and every per-thread series carries a `thread` label.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { isMainThread } from 'node:worker_threads'
import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client'
import { threadHeaps } from './thread-heap.ts'

export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[]

/** what a request thread counts */
export interface RpcMetrics {
  /** one answered call: its canonical method ("unknown" for a name the node does not know), code and time */
  observeCall(method: string, code: number, seconds: number): void
}

export interface ChainMetricsSources {
  /** chain height */
  height(): number
  /** transactions waiting in the pool */
  poolSize(): number
  /** bytes of the ledger's files on disk */
  ledgerBytes(): number
  /** consensus view and state, and the primary's host name (a solo node: view 0, "normal", itself) */
  consensus(): { view: number | bigint; state: string; primary?: string }
  /** linked peers (0 for a solo node) */
  peersConnected(): number
  /** polling subscriptions (they live on the chain thread) */
  pollingSubscriptions(): number
  /** Java contract calls the wall-clock safety net stopped (none should be: the step budget decides) */
  jvmWallClockStops(): number
}

/** what a request thread's WebSocket server holds */
export interface RpcMetricsSources {
  wsConnections(): number
  pushSubscriptions(): number
}

/** what the chain thread counts */
export interface ChainMetrics {
  /** a committed block: its valid and discarded transactions, and how long producing it took */
  observeBlock(block: { valid: number; discardReasons: readonly string[]; seconds: number }): void
  /** a view change this node saw finish */
  observeViewChange(): void
  /** what the pool answered a client's transaction: 0 (admitted: durable, hash answered) or the refusal's code */
  observeAdmission(code: number): void
}

const SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const TX_PER_BLOCK_BUCKETS = [0, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000]

export interface ThreadRegistry<Recorder> {
  readonly registry: Registry
  readonly record: Recorder
  snapshot(): Promise<MetricsSnapshot>
}

/** A request thread's registry: JSON-RPC calls, WebSocket clients, and this thread's event-loop lag. */
export function createRpcRegistry(thread: string, sources: RpcMetricsSources): ThreadRegistry<RpcMetrics> & { close(): void } {
  const registry = new Registry()
  registry.setDefaultLabels({ thread })
  gauge(registry, 'keel_ws_connections', 'open WebSocket connections', sources.wsConnections)
  subscriptionsGauge(registry, 'push', sources.pushSubscriptions)
  const calls = new Counter({
    name: 'keel_rpc_requests_total',
    help: 'JSON-RPC calls answered, by canonical method and answer code (0 = success)',
    labelNames: ['method', 'code'],
    registers: [registry],
  })
  const durations = new Histogram({
    name: 'keel_rpc_request_duration_seconds',
    help: 'time from a parsed JSON-RPC call to its answer, by canonical method',
    labelNames: ['method'],
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  })
  // on the main thread the chain registry already reports this thread's heap and its workers'
  if (!isMainThread) heapGauges(registry, thread, `${thread}/`)
  const lag = loopLagGauge(registry)
  return {
    registry,
    record: {
      observeCall(method, code, seconds) {
        calls.inc({ method, code: String(code) })
        durations.observe({ method }, seconds)
      },
    },
    snapshot: () => registry.getMetricsAsJSON(),
    close: () => lag.disable(),
  }
}

/**
 * The chain thread's registry: transactions, blocks, consensus, peers, clients, the ledger and the
 * process. Issue 30: one per namespace, its series labelled `namespace`; only one of them (`process`,
 * the default namespace's) carries the process's and the thread's own figures, which a merge of
 * several would otherwise add up.
 */
export function createChainRegistry(
  sources: ChainMetricsSources,
  options: { namespace?: string; process?: boolean } = {},
): ThreadRegistry<ChainMetrics> & { close(): void } {
  const registry = new Registry()
  registry.setDefaultLabels(options.namespace === undefined ? { thread: 'chain' } : { thread: 'chain', namespace: options.namespace })
  const admitted = new Counter({
    name: 'keel_tx_admitted_total',
    help: "clients' transactions admitted by the pool (durable, hash answered)",
    registers: [registry],
  })
  const rejected = new Counter({
    name: 'keel_tx_rejected_total',
    help: "clients' transactions the pool refused, by JSON-RPC error code (malformed requests count in keel_rpc_requests_total)",
    labelNames: ['code'],
    registers: [registry],
  })
  const committed = new Counter({ name: 'keel_tx_committed_total', help: 'transactions committed in a block', registers: [registry] })
  const discarded = new Counter({
    name: 'keel_tx_discarded_total',
    help: 'transactions discarded (recorded as invalid), by reason',
    labelNames: ['reason'],
    registers: [registry],
  })
  const blockSeconds = new Histogram({
    name: 'keel_block_commit_seconds',
    help: 'time to execute and commit one block',
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  })
  const blockTxs = new Histogram({
    name: 'keel_block_transactions',
    help: 'transactions per committed block (valid and discarded)',
    buckets: TX_PER_BLOCK_BUCKETS,
    registers: [registry],
  })
  const viewChanges = new Counter({
    name: 'keel_consensus_view_changes_total',
    help: 'view changes this node saw finish',
    registers: [registry],
  })
  gauge(registry, 'keel_block_height', 'height of the chain (number of the latest block)', sources.height)
  gauge(registry, 'keel_pool_transactions', 'transactions admitted and waiting for a block', sources.poolSize)
  gauge(registry, 'keel_ledger_size_bytes', "bytes of the ledger's files on disk", sources.ledgerBytes)
  gauge(registry, 'keel_consensus_view', 'the consensus view this node is in', () => Number(sources.consensus().view))
  gauge(registry, 'keel_peers_connected', 'peers linked to this node', sources.peersConnected)
  new Counter({
    name: 'keel_jvm_wall_clock_stops_total',
    help: 'Java contract calls and loads stopped by the wall-clock safety net rather than the step budget',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(sources.jvmWallClockStops())
    },
  })
  subscriptionsGauge(registry, 'polling', sources.pollingSubscriptions)
  new Gauge({
    name: 'keel_consensus_state',
    help: 'the consensus state this node is in (1 for the current state, 0 for the others)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { state } = sources.consensus()
      this.reset()
      for (const known of CONSENSUS_STATES) this.set({ state: known }, known === state ? 1 : 0)
      if (!CONSENSUS_STATES.includes(state)) this.set({ state }, 1)
    },
  })
  new Gauge({
    name: 'keel_consensus_primary',
    help: 'the primary this node follows (1 on the series of its host name)',
    labelNames: ['hostname'],
    registers: [registry],
    collect() {
      this.reset()
      const { primary } = sources.consensus()
      if (primary !== undefined) this.set({ hostname: primary }, 1)
    },
  })
  // the process's and the thread's own figures carry no namespace label
  const processRegistry = (options.process ?? true) ? new Registry() : undefined
  processRegistry?.setDefaultLabels({ thread: 'chain' })
  if (processRegistry !== undefined) {
    collectDefaultMetrics({ register: processRegistry, prefix: 'keel_' })
    heapGauges(processRegistry, 'chain', '')
  }
  const lag = processRegistry === undefined ? { disable: () => undefined } : loopLagGauge(processRegistry)
  return {
    registry,
    record: {
      observeBlock(block) {
        committed.inc(block.valid)
        for (const reason of block.discardReasons) discarded.inc({ reason })
        blockSeconds.observe(block.seconds)
        blockTxs.observe(block.valid + block.discardReasons.length)
      },
      observeViewChange: () => viewChanges.inc(),
      observeAdmission(code) {
        if (code === 0) admitted.inc()
        else rejected.inc({ code: String(code) })
      },
    },
    snapshot: async () => [...(await registry.getMetricsAsJSON()), ...((await processRegistry?.getMetricsAsJSON()) ?? [])],
    close: () => lag.disable(),
  }
}

/** a gauge read when scraped */
function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read())
    },
  })
}

/**
 * The heap of this thread (`self`) and of the workers it started (thread-heap.ts), one series per
 * thread; a worker's name is prefixed with `prefix`.
 */
function heapGauges(registry: Registry, self: string, prefix: string): void {
  const figures = [
    ['keel_thread_heap_used_bytes', "bytes of the thread's V8 heap in use (live objects and garbage not yet collected)", 'used'],
    ['keel_thread_heap_total_bytes', "bytes V8 has reserved for the thread's heap", 'total'],
    ['keel_thread_external_memory_bytes', "bytes outside the thread's heap held by its objects (Buffers, ArrayBuffers)", 'external'],
  ] as const
  for (const [name, help, field] of figures)
    new Gauge({
      name,
      help,
      labelNames: ['thread'],
      registers: [registry],
      collect() {
        this.reset()
        for (const heap of threadHeaps(self, prefix)) this.set({ thread: heap.thread }, heap[field])
      },
    })
}

/** push subscriptions are counted by the request threads that hold them, polling ones by the chain thread */
function subscriptionsGauge(registry: Registry, kind: 'push' | 'polling', read: () => number): void {
  new Gauge({
    name: 'keel_subscriptions',
    help: 'event subscriptions, by kind (push over WebSocket, polling)',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.set({ kind }, read())
    },
  })
}

/** the states node_getConsensusStatus reports; each gets a series so a dashboard sees 0 as well as 1 */
export const CONSENSUS_STATES = ['normal', 'viewChange', 'recovering', 'stateTransfer', 'joining', 'retired', 'following', 'stopped']

/**
 * This thread's event-loop delay p99 over the last scrape interval (perf_hooks histogram, reset at
 * each scrape). The histogram's timer wakes the thread every `resolution` ms even when the node is
 * idle (issue 27: an idle node uses < 1% of a core; at 10 ms the chain and request threads woke 200
 * times a second between them); at 25 ms a stall still shows whenever it covers a tick, and a
 * scrape interval holds hundreds of ticks.
 */
function loopLagGauge(registry: Registry): { disable(): void } {
  const delay = monitorEventLoopDelay({ resolution: 25 })
  delay.enable()
  new Gauge({
    name: 'keel_thread_event_loop_lag_p99_seconds',
    help: "p99 of this thread's event-loop delay since the previous scrape",
    registers: [registry],
    collect() {
      this.set(delay.count === 0 ? 0 : delay.percentile(99) / 1e9)
      delay.reset()
    },
  })
  return { disable: () => delay.disable() }
}

/** The Prometheus text of several threads' snapshots, merged (same name and labels: added up). */
export async function mergeMetrics(snapshots: MetricsSnapshot[]): Promise<{ contentType: string; text: string }> {
  const merged = AggregatorRegistry.aggregate(snapshots)
  return { contentType: merged.contentType, text: await merged.metrics() }
}
