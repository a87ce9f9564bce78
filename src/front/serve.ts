/**
 * The JSON-RPC servers of one thread: the dispatcher over each namespace's handlers, HTTP and
 * WebSocket on one port, the TCert check. A request thread (thread.ts) builds them over its own
 * handlers; a node that serves requests on its chain thread (`jsonrpc.threads = 0`) builds them
 * there (node.ts). A request is handled in the namespace its envelope names (issue 30): its
 * handlers, its events, its TCerts; a namespace may be added or removed while the servers run.
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
import { type ConsensusReport, operatorRoutes } from '../metrics/routes.ts'
import { createDispatcher, type Dispatcher } from '../rpc/dispatch.ts'
import { createRpcHttpServer, type RpcHttpServer } from '../rpc/http.ts'
import { createTcertCheck, type TcertCheck } from '../rpc/tcert-check.ts'
import { createRpcWsServer, type RpcWsServer } from '../rpc/ws.ts'
import { answerValue, parseJson } from '../wire/json.ts'
import { playgroundClientRoute } from './playground.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** What one namespace gives a thread's servers. */
export interface ServedNamespace {
  handlers: Readonly<Record<string, unknown>>
  /** block and status events for WebSocket push; `publishStatus` raises this thread's own (a cut-off reader) */
  events: Pick<EventHub, 'onBlock' | 'onStatus' | 'publishStatus'>
  /** the chain height, to resolve `latest` in a pushed log filter */
  height(): number
  /** the TCert check's view of the namespace's CA and of the TCerts it issued, when `[tcert] check` is on */
  tcert?: { ca: NodeCa; isIssued(pemBytes: Uint8Array): boolean }
}

/** The namespaces a thread serves now. */
export interface ServedNamespaces {
  /** the namespace of a request that names none (the first configured; it runs as long as the node) */
  readonly defaultName: string
  get(name: string): ServedNamespace | undefined
  /** the names served, the default first */
  names(): string[]
}

/** A thread's namespaces, which it adds and removes as the chain thread says. */
export function servedNamespaces(defaultName: string): ServedNamespaces & {
  set(name: string, served: ServedNamespace): void
  delete(name: string): void
} {
  const served = new Map<string, ServedNamespace>()
  return {
    defaultName,
    get: (name) => served.get(name),
    names: () => [...served.keys()].sort((a, b) => (a === defaultName ? -1 : b === defaultName ? 1 : a < b ? -1 : 1)),
    set: (name, namespace) => void served.set(name, namespace),
    delete: (name) => void served.delete(name),
  }
}

export interface RpcServersOptions {
  config: KeelConfig
  namespaces: ServedNamespaces
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
  const { config, log, namespaces } = options
  const documentText = openRpcDocumentText()
  const defaultNamespace = (): ServedNamespace => namespaces.get(namespaces.defaultName) as ServedNamespace
  const dispatcher = createDispatcher({
    methods,
    aliases,
    schemas,
    handlers: defaultNamespace().handlers,
    handlersOf: (name) => namespaces.get(name)?.handlers,
    // issue 28: the Ethereum methods Keel knows and does not serve
    missingFeatures: { ...MISSING_FEATURES, ...ETHEREUM_MISSING },
    document: parseJson(documentText, { maxDepth: 512 }),
    defaultNamespace: namespaces.defaultName,
    isKnownNamespace: (namespace) => namespaces.get(namespace) !== undefined,
    knownNamespaces: () => namespaces.names(),
    limits: { maxBatchLength: config.jsonrpc.maxBatchLength, maxBatchResponseBytes: config.jsonrpc.maxBatchResponseBytes },
    log: log.child('rpc'),
    observe: (method, code, seconds) => metrics.record.observeCall(method, code, seconds),
  })
  const tcertCheck = config.tcert.check ? namespacesTcertCheck(config, namespaces, dispatcher) : undefined
  const ws = createRpcWsServer({
    dispatcher,
    namespaces,
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
        // what node_getConsensusStatus answers in each namespace (forwarded to the chain thread from a request thread)
        consensus: async () => {
          const reports: Record<string, ConsensusReport> = {}
          for (const name of namespaces.names()) {
            const served = namespaces.get(name)
            if (served === undefined) continue
            reports[name] = answerValue(
              await (served.handlers as unknown as NodeHandlers).node_getConsensusStatus([], {
                namespace: name,
                method: 'node_getConsensusStatus',
                headers: {},
              }),
            ) as ConsensusReport
          }
          return { defaultName: namespaces.defaultName, reports }
        },
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
 * The TCert check of a thread serving several namespaces: a TCert is checked against the CA and the
 * issued TCerts of each namespace the request names (the default one for a WebSocket upgrade, which
 * names none), so a TCert one namespace issued is refused in another.
 */
function namespacesTcertCheck(config: KeelConfig, namespaces: ServedNamespaces, dispatcher: Dispatcher): TcertCheck {
  const enrollmentCas = enrollmentCasOf(config)
  const checks = new WeakMap<ServedNamespace, TcertCheck>()
  const checkOf = (served: ServedNamespace): TcertCheck | undefined => {
    if (served.tcert === undefined) return undefined
    let check = checks.get(served)
    if (check === undefined) {
      check = createTcertCheck({
        ca: served.tcert.ca,
        isIssued: served.tcert.isIssued,
        enrollmentCas,
        isGetTcert: (method) => dispatcher.canonicalName(method) === 'cert_getTCert',
      })
      checks.set(served, check)
    }
    return check
  }
  return {
    async check(headers, request) {
      const named = new Set<string>()
      const elements = 'upgradePath' in request ? [] : Array.isArray(request.parsed) ? request.parsed : [request.parsed]
      for (const element of elements) {
        const name = element !== null && typeof element === 'object' ? (element as { namespace?: unknown }).namespace : undefined
        named.add(typeof name === 'string' && name !== '' ? name : namespaces.defaultName)
      }
      if (named.size === 0) named.add(namespaces.defaultName)
      for (const name of named) {
        // a namespace that does not exist is answered -32010 by the dispatcher
        const served = namespaces.get(name)
        const check = served === undefined ? undefined : checkOf(served)
        const refusal = await check?.check(headers, request)
        if (refusal !== undefined) return refusal
      }
      return undefined
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
