/**
 * The JSON-RPC servers of one thread: the dispatcher over a set of handlers, HTTP and WebSocket on
 * one port, the TCert check. A request thread (thread.ts) builds them over its own handlers; a node
 * that serves requests on its chain thread (`jsonrpc.threads = 0`) builds them there (node.ts).
 */

import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { NodeHandlers } from '../../generated/handlers.ts'
import { aliases, methods, schemas } from '../../generated/methods.ts'
import { MISSING_FEATURES } from '../api/missing-features.ts'
import type { NodeCa } from '../cert/ca.ts'
import { x509 } from '../cert/x509.ts'
import type { KeelConfig } from '../config.ts'
import type { EthereumPush } from '../eth/envelope.ts'
import { ETHEREUM_MISSING } from '../eth/missing.ts'
import type { EventHub } from '../events/hub.ts'
import type { Logger } from '../log.ts'
import { createRpcRegistry, type MetricsSnapshot } from '../metrics/registry.ts'
import { operatorRoutes } from '../metrics/routes.ts'
import { createDispatcher, type Dispatcher } from '../rpc/dispatch.ts'
import { createRpcHttpServer, type RpcHttpServer } from '../rpc/http.ts'
import { createTcertCheck, type TcertCheck } from '../rpc/tcert-check.ts'
import { createRpcWsServer, type RpcWsServer } from '../rpc/ws.ts'
import { answerValue, parseJson } from '../wire/json.ts'
import { playgroundClientRoute } from './playground.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface RpcServersOptions {
  config: KeelConfig
  handlers: Readonly<Record<string, unknown>>
  /** block and status events for WebSocket push; `publishStatus` raises this thread's own (a cut-off reader) */
  events: Pick<EventHub, 'onBlock' | 'onStatus' | 'publishStatus'>
  /** the chain height, to resolve `latest` in a pushed log filter */
  height(): number
  /** the TCert check's view of the node CA and of the TCerts issued, when `[tcert] check` is on */
  tcert?: { ca: NodeCa; isIssued(pemBytes: Uint8Array): boolean }
  /** listen on this socket of another request thread instead of opening the configured port */
  fd?: number
  log: Logger
  /** WebSocket subscription ids (tests pin them) */
  newId?: () => string
  /** this thread's name in the metrics (`thread` label) */
  thread: string
  /** GET /metrics: the node's metrics text, given this thread's own snapshot */
  metrics(own: () => Promise<MetricsSnapshot>): Promise<{ contentType: string; text: string }>
  /** issue 28: eth_subscribe's shapes over WebSocket */
  ethereum?: EthereumPush
}

export interface RpcServers {
  readonly dispatcher: Dispatcher
  readonly http: RpcHttpServer
  readonly ws: RpcWsServer
  readonly tcertCheck: TcertCheck | undefined
  /** this thread's metrics (JSON-RPC calls, WebSocket clients, event-loop lag) */
  metricsSnapshot(): Promise<MetricsSnapshot>
  listen(): Promise<AddressInfo>
  close(): Promise<void>
}

/** The OpenRPC document, as rpc.discover and /openrpc.json serve it. */
export const openRpcDocumentText = (): string => readFileSync(join(root, 'openrpc.json'), 'utf8')

/** The enrollment CAs of `[tcert] enrollmentCaFiles`; a file that is no PEM certificate stops the node at start. */
export function enrollmentCasOf(config: KeelConfig): InstanceType<typeof x509.X509Certificate>[] {
  return config.tcert.enrollmentCaFiles.map((file) => {
    try {
      return new x509.X509Certificate(readFileSync(resolve(file), 'utf8'))
    } catch (error) {
      throw new Error(`config: tcert.enrollmentCaFiles: ${file} is not a readable PEM certificate`, { cause: error })
    }
  })
}

/** GET / : this port speaks JSON-RPC over POST (and WebSocket); where to try it and read about it */
const ROOT_PAGE = {
  node: 'Keel: a Hyperchain-compatible node',
  jsonrpc:
    'POST JSON-RPC 2.0 requests to this URL (any path); WebSocket on the same port for sub_subscribe. Every reply is HTTP 200 with {jsonrpc, namespace, id, code, message, result}.',
  example: 'curl -s -X POST <this URL> -d \'{"jsonrpc":"2.0","id":1,"method":"block_latestBlock","params":[]}\'',
  playground: '/playground (every method in a browser, with signing)',
  methods: '/openrpc.json, or the method rpc.discover',
  operations: '/health, /ready, /metrics',
}

export function createRpcServers(options: RpcServersOptions): RpcServers {
  const { config, log } = options
  const documentText = openRpcDocumentText()
  const dispatcher = createDispatcher({
    methods,
    aliases,
    schemas,
    handlers: options.handlers,
    // issue 28: the Ethereum methods Keel knows and does not serve
    missingFeatures: { ...MISSING_FEATURES, ...ETHEREUM_MISSING },
    document: parseJson(documentText, { maxDepth: 512 }),
    defaultNamespace: config.node.namespace,
    isKnownNamespace: (namespace) => namespace === config.node.namespace,
    limits: { maxBatchLength: config.jsonrpc.maxBatchLength, maxBatchResponseBytes: config.jsonrpc.maxBatchResponseBytes },
    log: log.child('rpc'),
    observe: (method, code, seconds) => metrics.record.observeCall(method, code, seconds),
  })
  const tcertCheck: TcertCheck | undefined =
    config.tcert.check && options.tcert !== undefined
      ? createTcertCheck({
          ca: options.tcert.ca,
          isIssued: options.tcert.isIssued,
          enrollmentCas: enrollmentCasOf(config),
          isGetTcert: (method) => dispatcher.canonicalName(method) === 'cert_getTCert',
        })
      : undefined
  const ws = createRpcWsServer({
    dispatcher,
    events: options.events,
    height: options.height,
    namespace: config.node.namespace,
    limits: config.jsonrpc,
    tcertCheck,
    log: log.child('ws'),
    newId: options.newId,
    ethereum: options.ethereum,
  })
  const http = createRpcHttpServer({
    host: config.jsonrpc.host,
    port: config.jsonrpc.port,
    fd: options.fd,
    limits: config.jsonrpc,
    corsOrigin: config.jsonrpc.corsOrigin,
    dispatcher,
    tcertCheck,
    pages: {
      // what a browser or `curl http://host:port/` finds: where to go, instead of a bare 405
      '/': { contentType: 'application/json', body: `${JSON.stringify(ROOT_PAGE, null, 2)}\n` },
      '/playground': {
        contentType: 'text/html; charset=utf-8',
        body: readFileSync(join(root, 'playground', 'index.html')),
        headers: { 'content-security-policy': "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'" },
      },
      '/openrpc.json': { contentType: 'application/json', body: documentText },
      // browsers ask for it on their own; an empty icon keeps their consoles clean
      '/favicon.ico': { contentType: 'image/x-icon', body: '' },
    },
    routes: {
      '/playground/keel-client.js': playgroundClientRoute(root),
      ...operatorRoutes({
        metrics: () => options.metrics(metrics.snapshot),
        // what node_getConsensusStatus answers (forwarded to the chain thread from a request thread)
        consensus: async () =>
          answerValue(
            await (options.handlers as unknown as NodeHandlers).node_getConsensusStatus([], {
              namespace: config.node.namespace,
              method: 'node_getConsensusStatus',
              headers: {},
            }),
          ),
      }),
    },
    onUpgrade: ws.handleUpgrade,
    log: log.child('http'),
  })
  const metrics = createRpcRegistry(options.thread, { wsConnections: ws.connections, pushSubscriptions: ws.subscriptions })
  return {
    dispatcher,
    http,
    ws,
    tcertCheck,
    metricsSnapshot: () => metrics.snapshot(),
    listen: () => http.listen(),
    async close() {
      await ws.close()
      await http.close()
      metrics.close()
    },
  }
}

/**
 * The file descriptor of a listening server's socket. Node 20 has no SO_REUSEPORT for worker
 * threads; a second request thread listens on this same socket (`listen({fd})`), and the kernel
 * hands each new connection to whichever thread accepts first. `_handle` is Node's own, unexported
 * field: without it (another runtime) the node runs one request thread.
 */
export function listeningFd(http: RpcHttpServer): number | undefined {
  const fd = (http.server as unknown as { _handle?: { fd?: number } })._handle?.fd
  return typeof fd === 'number' && fd >= 0 ? fd : undefined
}
