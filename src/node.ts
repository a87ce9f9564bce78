/**
 * Assembles one Keel node from its configuration: logger, handlers, dispatcher and the HTTP
 * transport. `startNode` returns a running node; `stop()` closes it.
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { aliases, methods, schemas } from '../generated/methods.ts'
import { createHandlers, plannedByService } from './api/index.ts'
import type { KeelConfig } from './config.ts'
import { createLogger, type Logger } from './log.ts'
import { createDispatcher } from './rpc/dispatch.ts'
import { createRpcHttpServer } from './rpc/http.ts'
import { parseJson } from './rpc/json.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Version string reported by tx_getTransactionsVersion (sdk-wire.md §2 recommends ≥ 3.6). */
export const TX_VERSION = '4.1'

export interface KeelNode {
  readonly config: KeelConfig
  /** base URL of the JSON-RPC endpoint, e.g. http://127.0.0.1:8081 */
  readonly url: string
  readonly log: Logger
  stop(): Promise<void>
}

export interface StartOptions {
  log?: Logger
}

export async function startNode(config: KeelConfig, options: StartOptions = {}): Promise<KeelNode> {
  const log = options.log ?? createLogger({ level: config.log.level })
  const documentText = readFileSync(join(root, 'openrpc.json'), 'utf8')
  const handlers = createHandlers({
    identity: { hostname: config.node.hostname, namespace: config.node.namespace },
    protocol: { txVersion: TX_VERSION, gasPrice: 0 },
  })
  const plannedIn = Object.fromEntries(Object.entries(methods).map(([name, spec]) => [name, plannedByService[spec.service]]))
  const dispatcher = createDispatcher({
    methods,
    aliases,
    schemas,
    handlers,
    plannedIn,
    document: parseJson(documentText, { maxDepth: 512 }),
    defaultNamespace: config.node.namespace,
    isKnownNamespace: (namespace) => namespace === config.node.namespace,
    limits: { maxBatchLength: config.jsonrpc.maxBatchLength, maxBatchResponseBytes: config.jsonrpc.maxBatchResponseBytes },
    log: log.child('rpc'),
  })
  const http = createRpcHttpServer({
    host: config.jsonrpc.host,
    port: config.jsonrpc.port,
    limits: config.jsonrpc,
    corsOrigin: config.jsonrpc.corsOrigin,
    dispatcher,
    pages: {
      '/playground': {
        contentType: 'text/html; charset=utf-8',
        body: readFileSync(join(root, 'playground', 'index.html')),
        headers: { 'content-security-policy': "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'" },
      },
      '/openrpc.json': { contentType: 'application/json', body: documentText },
      // browsers ask for it on their own; an empty icon keeps their consoles clean
      '/favicon.ico': { contentType: 'image/x-icon', body: '' },
    },
    log: log.child('http'),
  })
  const address = await http.listen()
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`
  log.info(`JSON-RPC listening on ${url} (namespace ${config.node.namespace}); playground at ${url}/playground`)
  return {
    config,
    url,
    log,
    stop: async () => {
      await http.close()
      log.info('stopped')
    },
  }
}
