/**
 * JSON-RPC over WebSocket on the node's JSON-RPC port (any path; the HTTP server hands its
 * `upgrade` requests here), with push subscriptions (protocol.md §5, reliability.md part B).
 *
 * Every text (or binary, read as UTF-8) message is one JSON-RPC body, answered exactly as over
 * HTTP by the same dispatcher, so every method works over WebSocket. Two methods exist only here:
 *
 * - `sub_subscribe` with params `["block", isVerbose?]`, `["logs", LogFilter?]` or
 *   `["systemStatus", SystemStatusFilter?]` → the subscription id (`0x` + 32 hex). The filters are
 *   those of sub_newEventSubscription / sub_newSystemStatusSubscription, checked by the same schemas.
 * - `sub_unsubscribe` with `["<id>"]` → true; an id not on this connection → -32012 `subscription not found`.
 *
 * A subscription lives in the namespace its request named (the default one when none): it sees that
 * namespace's blocks and events only, and its notifications name that namespace.
 *
 * They must be sent alone, not inside a batch (a batch naming them → -32600). Over HTTP they do not
 * exist (-32601). Each pushed item is one notification, in chain order, exactly once:
 *
 *   {"jsonrpc":"2.0","namespace":"global","method":"sub_subscription",
 *    "params":{"subscription":"0x…","result":<Block | block hash | Log | SystemStatusMessage>}}
 *
 * Limits: at most `wsMaxConnections` connections (one more → HTTP 503 with a -32006 envelope at
 * the upgrade); `wsMaxSubscriptions` per connection (→ -32006); a message over `wsMaxFrameBytes` →
 * close 1009. Back-pressure (ws-outbound.ts): a reader that leaves more than `wsMaxQueuedMessages`
 * messages, or `wsMaxBufferedBytes` bytes, untaken in the socket and Keel's queue together is cut
 * off: its queue is dropped, its subscriptions released, the node raises a jsonrpc `slowConsumer`
 * system-status event, and the connection is closed with 1008 and a reason (what the socket holds
 * comes first, so the reader sees an unbroken prefix of its stream, then the close). A reader that
 * does not take the close frame within CLOSE_GRACE_MS is dropped.
 */
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { type WebSocket, WebSocketServer } from 'ws'
import { methods, schemas } from '../../generated/methods.ts'
import type { LogFilter, SystemStatusFilter } from '../../generated/types.ts'
import type { Log } from '../domain.ts'
import {
  InternalError,
  InvalidParams,
  InvalidRequest,
  InvalidTcert,
  MethodNotFound,
  ParseError,
  RpcError,
  SubscriptionNotExist,
  SystemBusy,
} from '../errors.ts'
import type { EthereumPush } from '../eth/envelope.ts'
import { compileStatusFilter, type LogCriteria, matchLog, type StatusMatcher, subscriptionCriteria } from '../events/filters.ts'
import type { EventHub } from '../events/hub.ts'
import { jsonrpcStatus } from '../events/status.ts'
import { randomId } from '../events/subscriptions.ts'
import type { Logger } from '../log.ts'
import { JsonDepthError, JsonSyntaxError, parseJson, stringifyJson } from '../wire/json.ts'
import type { Dispatcher } from './dispatch.ts'
import type { MethodSpec } from './method-spec.ts'
import { compileParamChecker } from './params.ts'
import type { TcertCheck } from './tcert-check.ts'
import { createOutbound, type Outbound } from './ws-outbound.ts'

export interface WsLimits {
  wsMaxConnections: number
  wsMaxSubscriptions: number
  wsMaxFrameBytes: number
  wsMaxQueuedMessages: number
  wsMaxBufferedBytes: number
  maxJsonDepth: number
}

/** One namespace as the WebSocket server sees it. */
export interface WsNamespace {
  events: Pick<EventHub, 'onBlock' | 'onStatus' | 'publishStatus'>
  /** current chain height, to resolve `latest` in a log filter */
  height(): number
}

/** The namespaces served now (one may come or go while connections are open). */
export interface WsNamespaces {
  /** the namespace of a request that names none */
  readonly defaultName: string
  get(name: string): WsNamespace | undefined
}

export interface WsServerOptions {
  dispatcher: Dispatcher
  namespaces: WsNamespaces
  limits: WsLimits
  /**
   * the TCert check, when `[tcert] check` is on: messages carry no headers, so the upgrade request
   * must carry `tcert`, `timestamp` and a `signature` over `<timestamp>\n` followed by the upgrade
   * request's path as sent (req.url, e.g. `/`), since it has no body; else HTTP 401 + -32098
   */
  tcertCheck?: TcertCheck
  log: Logger
  /** subscription ids; default 16 random bytes as hex (tests pin the first, as for polling ids) */
  newId?: () => string
  /** issue 28: eth_subscribe's shapes (src/api/eth/push.ts); without it eth_subscribe answers -32601 */
  ethereum?: EthereumPush
}

export interface RpcWsServer {
  /** the HTTP server's `upgrade` event */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void
  /** open connections */
  connections(): number
  /** push subscriptions held by the open connections */
  subscriptions(): number
  /** closes every connection (1001) and stops listening to the hub */
  close(): Promise<void>
}

/**
 * how long a cut-off reader has to take the close frame before its socket is destroyed: long
 * enough for a reader that paused for a while to come back and learn why (a cut-off connection
 * holds only what its socket had buffered, at most WRITE_HIGH_WATER and one message)
 */
export const CLOSE_GRACE_MS = 30_000
const WS_METHODS = new Set(['sub_subscribe', 'sub_unsubscribe', 'eth_subscribe', 'eth_unsubscribe'])
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

type Kind = 'block' | 'logs' | 'systemStatus' | 'ethHeads' | 'ethLogs'
interface Subscription {
  /** the namespace whose events it receives */
  namespace: string
  kind: Kind
  verbose: boolean
  criteria?: LogCriteria
  matcher?: StatusMatcher
  /** issue 28: an eth_subscribe `logs` subscription's filter */
  ethMatches?: (log: Log) => boolean
}

interface Connection {
  ws: WebSocket
  headers: IncomingMessage['headers']
  subscriptions: Map<string, Subscription>
  out: Outbound
}

/**
 * sub_subscribe's params per kind: its own `kind` and `criteria` (openrpc.json), with `criteria`
 * checked by the schema the matching polling method gives its argument, so a logs filter is
 * validated exactly as sub_newEventSubscription's.
 */
function subscribeCheckers() {
  const subscribe = methods.sub_subscribe as MethodSpec
  const [kindParam, criteriaParam] = subscribe.params
  const withCriteriaOf = (polling: MethodSpec): MethodSpec => ({
    ...subscribe,
    params: [kindParam, { ...criteriaParam, schema: polling.params[0].schema }],
  })
  const all = schemas as Record<string, unknown>
  return {
    block: compileParamChecker('sub_subscribe', withCriteriaOf(methods.sub_newBlockSubscription as MethodSpec), all),
    logs: compileParamChecker('sub_subscribe', withCriteriaOf(methods.sub_newEventSubscription as MethodSpec), all),
    systemStatus: compileParamChecker('sub_subscribe', withCriteriaOf(methods.sub_newSystemStatusSubscription as MethodSpec), all),
    unsubscribe: compileParamChecker('sub_unsubscribe', methods.sub_unsubscribe as MethodSpec, all),
  }
}

export function createRpcWsServer(options: WsServerOptions): RpcWsServer {
  const { dispatcher, namespaces, limits, log } = options
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: limits.wsMaxFrameBytes,
    perMessageDeflate: false,
    clientTracking: false,
  })
  const open = new Set<Connection>()
  let upgrading = 0

  // ---- writing: back-pressure in ws-outbound.ts; a reader past the limits is cut off here ----

  const cutOff = (connection: Connection, why: string): void => {
    const released = connection.subscriptions.size
    // told in the namespaces it subscribed in (the default one when none), not in the others
    const subscribedIn = new Set([...connection.subscriptions.values()].map((subscription) => subscription.namespace))
    if (subscribedIn.size === 0) subscribedIn.add(namespaces.defaultName)
    connection.subscriptions.clear()
    const reason = `slow consumer: ${why}` // a close reason is at most 123 bytes
    log.warn(`WebSocket reader cut off (${why}); ${released} subscription(s) released`)
    const status = jsonrpcStatus.slowConsumer(`a WebSocket reader was disconnected: ${why}; ${released} subscription(s) released`)
    for (const name of subscribedIn) namespaces.get(name)?.events.publishStatus(status)
    connection.ws.close(1008, reason)
    setTimeout(() => {
      if (connection.ws.readyState !== connection.ws.CLOSED) connection.ws.terminate()
    }, CLOSE_GRACE_MS).unref()
  }

  const write = (connection: Connection, text: string): void => connection.out.write(text)
  // one push per namespace's event source, started by its first subscription (a namespace started again has a new source)
  const pushes = new Map<object, () => void>()
  const pushFor = (name: string): void => {
    const served = namespaces.get(name)
    if (served === undefined || pushes.has(served.events)) return
    pushes.set(served.events, startPush({ events: served.events, open, namespace: name, ethereum: options.ethereum }))
  }
  const stopPush = (): void => {
    for (const stop of pushes.values()) stop()
    pushes.clear()
  }
  const own = subscriptionMethods({
    limits,
    height: (name) => namespaces.get(name)?.height() ?? 0,
    newId: options.newId ?? randomId,
    ethereum: options.ethereum,
    subscribed: pushFor,
  })

  // ---- requests ----

  const accept = (ws: WebSocket, req: IncomingMessage): void => {
    const connection: Connection = {
      ws,
      headers: req.headers,
      subscriptions: new Map(),
      out: createOutbound(ws, { maxMessages: limits.wsMaxQueuedMessages, maxBytes: limits.wsMaxBufferedBytes }, (why) =>
        cutOff(connection, why),
      ),
    }
    open.add(connection)
    ws.on('message', (data: Buffer) => {
      if (connection.out.cut) return
      void answerMessage(connection, data, {
        dispatcher,
        maxJsonDepth: limits.maxJsonDepth,
        namespaces,
        own,
        onlyDefaultNamespace: options.tcertCheck !== undefined,
      })
        .then((text) => write(connection, text))
        .catch((error: unknown) => {
          log.error('failed to answer a WebSocket message', error)
          write(connection, dispatcher.errorReply(new InternalError()))
        })
    })
    // oversized messages (ws closes with 1009 itself), bad frames, resets
    ws.on('error', (error: Error & { code?: string }) => log.debug('WebSocket connection failed', error.code ?? error.message))
    ws.on('close', () => {
      open.delete(connection)
      connection.subscriptions.clear()
      connection.out.clear()
    })
  }

  const refuse = (socket: Duplex, status: number, statusText: string, error: RpcError): void => {
    const body = `${dispatcher.errorReply(error)}\n`
    socket.end(
      `HTTP/1.1 ${status} ${statusText}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
  }

  return {
    handleUpgrade(req, socket, head) {
      socket.on('error', (error) => log.debug('WebSocket upgrade socket failed', error.message))
      if (open.size + upgrading >= limits.wsMaxConnections) {
        refuse(socket, 503, 'Service Unavailable', new SystemBusy(`too many WebSocket connections: at most ${limits.wsMaxConnections}`))
        return
      }
      upgrading++
      let settled = false
      const done = (): void => {
        if (!settled) upgrading--
        settled = true
      }
      socket.once('close', done)
      const upgrade = (): void =>
        // ws answers a malformed upgrade request with 400 itself
        wss.handleUpgrade(req, socket, head, (ws) => {
          done()
          accept(ws, req)
        })
      if (options.tcertCheck === undefined) return upgrade()
      options.tcertCheck
        .check(req.headers, { upgradePath: req.url ?? '/' })
        .then((refusal) => {
          if (refusal === undefined) return upgrade()
          done()
          refuse(socket, 401, 'Unauthorized', refusal)
        })
        .catch((error: unknown) => {
          done()
          log.error('TCert check of a WebSocket upgrade failed', error)
          refuse(socket, 500, 'Internal Server Error', new InternalError())
        })
    },
    connections: () => open.size,
    subscriptions: () => {
      let held = 0
      for (const connection of open) held += connection.subscriptions.size
      return held
    },
    close: async () => {
      stopPush()
      const closing = [...open].map(
        (connection) =>
          new Promise<void>((resolve) => {
            if (connection.ws.readyState === connection.ws.CLOSED) return resolve()
            connection.ws.once('close', () => resolve())
            connection.ws.close(1001, 'node stopping')
            setTimeout(() => connection.ws.terminate(), 1000).unref()
          }),
      )
      await Promise.all(closing)
      wss.close()
    },
  }
}

/** `make` runs at most once per key; each wire form is serialised once per event, whatever the number of subscribers */
function memo<K>(make: (key: K) => string): (key: K) => string {
  const made = new Map<K, string>()
  return (key) => {
    let text = made.get(key)
    if (text === undefined) {
      text = make(key)
      made.set(key, text)
    }
    return text
  }
}

/**
 * Each block and system-status event, pushed to the open connections' subscriptions in chain order;
 * a connection cut off midway gets nothing more. Returns what stops listening to the hub.
 */
function startPush(options: {
  events: Pick<EventHub, 'onBlock' | 'onStatus'>
  open: ReadonlySet<Connection>
  namespace: string
  ethereum: EthereumPush | undefined
}): () => void {
  const { events, open, namespace } = options
  const write = (connection: Connection, text: string): void => connection.out.write(text)
  const notificationHead = `{"jsonrpc":"2.0","namespace":${JSON.stringify(namespace)},"method":"sub_subscription","params":{"subscription":"`
  const notify = (connection: Connection, id: string, resultText: string): void =>
    write(connection, `${notificationHead}${id}","result":${resultText}}}`)

  // issue 28: eth_subscribe's notifications
  const ethNotify = (connection: Connection, id: string, resultText: string): void =>
    write(connection, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${resultText}}}`)

  const offBlock = events.onBlock((event) => {
    if (open.size === 0) return
    const blockText = memo((verbose: boolean) => (verbose ? event.fullText() : JSON.stringify(event.hash)))
    const logText = memo((index: number) => stringifyJson(event.logs()[index]))
    const ethHead = memo((_: 0) => stringifyJson(options.ethereum?.head(event.number) ?? null))
    let ethLogs: { log: Log; shaped: unknown }[] | undefined
    const ethLogText = memo((index: number) => stringifyJson((ethLogs as { shaped: unknown }[])[index].shaped))
    for (const connection of open) {
      for (const [id, subscription] of connection.subscriptions) {
        if (subscription.namespace !== namespace) continue
        if (subscription.kind === 'ethHeads') ethNotify(connection, id, ethHead(0))
        else if (subscription.kind === 'ethLogs') {
          ethLogs ??= options.ethereum?.logs(event.number) ?? []
          for (let i = 0; i < ethLogs.length && !connection.out.cut; i++)
            if (subscription.ethMatches?.(ethLogs[i].log)) ethNotify(connection, id, ethLogText(i))
        } else if (subscription.kind === 'block') notify(connection, id, blockText(subscription.verbose))
        else if (subscription.kind === 'logs') {
          const logs = event.logs()
          for (let i = 0; i < logs.length && !connection.out.cut; i++)
            if (matchLog(subscription.criteria as LogCriteria, logs[i])) notify(connection, id, logText(i))
        }
        if (connection.out.cut) break
      }
    }
  })
  const offStatus = events.onStatus((message) => {
    if (open.size === 0) return
    const text = memo((_: 0) => stringifyJson(message))
    for (const connection of open) {
      for (const [id, subscription] of connection.subscriptions) {
        if (subscription.namespace !== namespace) continue
        if (subscription.kind !== 'systemStatus' || !(subscription.matcher as StatusMatcher)(message)) continue
        notify(connection, id, text(0))
        if (connection.out.cut) break
      }
    }
  })
  return () => {
    offBlock()
    offStatus()
  }
}

/** The WebSocket-only methods: sub_subscribe / sub_unsubscribe and (issue 28) eth_subscribe / eth_unsubscribe, on one connection's subscriptions. */
function subscriptionMethods(options: {
  limits: Pick<WsLimits, 'wsMaxSubscriptions'>
  /** a namespace's chain height, to resolve `latest` in a log filter */
  height(namespace: string): number
  newId(): string
  ethereum: EthereumPush | undefined
  /** a subscription was made in this namespace: its events must reach the connections */
  subscribed(namespace: string): void
}): {
  subscribe(connection: Connection, params: unknown[], namespace: string): string
  unsubscribe(connection: Connection, params: unknown[], namespace: string): true
  ethSubscribe(connection: Connection, params: unknown[], namespace: string): string
  ethUnsubscribe(connection: Connection, params: unknown[]): boolean
} {
  const { limits, newId } = options
  const checkers = subscribeCheckers()
  const subscribe = (connection: Connection, params: unknown[], namespace: string): string => {
    const kind = params[0]
    if (kind !== 'block' && kind !== 'logs' && kind !== 'systemStatus')
      throw new InvalidParams(
        `invalid argument 0 (kind): must be "block", "logs" or "systemStatus"; got ${kind === undefined ? 'nothing' : stringifyJson(kind).slice(0, 64)}`,
      )
    const [, arg] = checkers[kind].check(params)
    let subscription: Subscription
    if (kind === 'block') subscription = { namespace, kind, verbose: arg === true }
    else if (kind === 'logs')
      subscription = {
        namespace,
        kind,
        verbose: false,
        criteria: subscriptionCriteria(arg as LogFilter | undefined, options.height(namespace)),
      }
    else subscription = { namespace, kind, verbose: false, matcher: compileStatusFilter(arg as SystemStatusFilter | undefined) }
    if (connection.subscriptions.size >= limits.wsMaxSubscriptions)
      throw new SystemBusy(`too many subscriptions on this connection: at most ${limits.wsMaxSubscriptions}`)
    let id = newId()
    while (connection.subscriptions.has(id)) id = newId()
    connection.subscriptions.set(id, subscription)
    options.subscribed(namespace)
    return id
  }

  /** issue 28: eth_subscribe ["newHeads"] or ["logs", {address?, topics?}] */
  const ethSubscribe = (connection: Connection, params: unknown[], namespace: string): string => {
    if (options.ethereum === undefined) throw new MethodNotFound('The method eth_subscribe does not exist/is not available')
    const asked = options.ethereum.subscription(params)
    if (connection.subscriptions.size >= limits.wsMaxSubscriptions)
      throw new SystemBusy(`too many subscriptions on this connection: at most ${limits.wsMaxSubscriptions}`)
    let id = newId()
    while (connection.subscriptions.has(id)) id = newId()
    connection.subscriptions.set(
      id,
      asked.kind === 'newHeads'
        ? { namespace, kind: 'ethHeads', verbose: false }
        : { namespace, kind: 'ethLogs', verbose: false, ethMatches: asked.matches },
    )
    options.subscribed(namespace)
    return id
  }

  /** issue 28: eth_unsubscribe [id] → whether there was such a subscription (Ethereum answers false, not an error) */
  const ethUnsubscribe = (connection: Connection, params: unknown[]): boolean => {
    const [id] = params
    if (typeof id !== 'string') throw new InvalidParams('invalid argument 0: the subscription id')
    const subscription = connection.subscriptions.get(id)
    if (subscription === undefined || (subscription.kind !== 'ethHeads' && subscription.kind !== 'ethLogs')) return false
    return connection.subscriptions.delete(id)
  }

  const unsubscribe = (connection: Connection, params: unknown[], namespace: string): true => {
    const [id] = checkers.unsubscribe.check(params) as [string]
    // a subscription of another namespace is unknown in this one
    if (connection.subscriptions.get(id)?.namespace !== namespace || !connection.subscriptions.delete(id))
      throw new SubscriptionNotExist('subscription not found')
    return true
  }
  return { subscribe, unsubscribe, ethSubscribe, ethUnsubscribe }
}

/** A well-formed single request for a WebSocket-only method; anything else goes to the dispatcher. */
function wsOnlyRequest(
  body: unknown,
  namespaces: WsNamespaces,
): { id: unknown; method: string; params: unknown[]; namespace: string } | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined
  const { id, jsonrpc, method, params, namespace: asked } = body as Record<string, unknown>
  if (typeof method !== 'string' || !WS_METHODS.has(method) || jsonrpc !== '2.0') return undefined
  if (!(typeof id === 'string' || typeof id === 'bigint' || (typeof id === 'number' && Number.isFinite(id)))) return undefined
  // an unknown namespace goes to the dispatcher, which answers -32010 naming the ones that exist
  const namespace = asked === undefined || asked === '' ? namespaces.defaultName : asked
  if (typeof namespace !== 'string' || namespaces.get(namespace) === undefined) return undefined
  if (!(params === undefined || params === null || Array.isArray(params))) return undefined
  return { id, method, params: (params ?? []) as unknown[], namespace }
}

const replyIn = (namespace: string, id: unknown, code: number, message: string, result?: unknown): string =>
  stringifyJson({ jsonrpc: '2.0', namespace, id, code, message, ...(result === undefined ? {} : { result }) })

/**
 * One message's answer: a WebSocket-only method answered here (eth_ ones in Ethereum's envelope),
 * anything else by the dispatcher, as over HTTP
 */
async function answerMessage(
  connection: Connection,
  data: Buffer,
  context: {
    dispatcher: Dispatcher
    maxJsonDepth: number
    namespaces: WsNamespaces
    own: ReturnType<typeof subscriptionMethods>
    /**
     * `[tcert] check` on: the upgrade's TCert was checked against the default namespace only, so a
     * message naming another is refused (a TCert of one namespace is unknown in another)
     */
    onlyDefaultNamespace: boolean
  },
): Promise<string> {
  const { dispatcher, namespaces, own } = context
  let body: unknown
  try {
    body = parseJson(utf8.decode(data), { maxDepth: context.maxJsonDepth })
  } catch (error) {
    if (error instanceof JsonSyntaxError) return dispatcher.errorReply(new ParseError(`parse error: ${error.message}`))
    if (error instanceof JsonDepthError) return dispatcher.errorReply(new InvalidRequest(`invalid request: ${error.message}`))
    if (error instanceof TypeError) return dispatcher.errorReply(new ParseError('parse error: the message is not valid UTF-8'))
    throw error
  }
  if (context.onlyDefaultNamespace) {
    const other = (Array.isArray(body) ? body : [body])
      .map((element) => (element !== null && typeof element === 'object' ? (element as { namespace?: unknown }).namespace : undefined))
      .find((name) => typeof name === 'string' && name !== '' && name !== namespaces.defaultName)
    if (other !== undefined)
      return dispatcher.errorReply(
        new InvalidTcert(
          `Unauthorized, Please check your cert: with the TCert check on, a WebSocket connection serves the default namespace ${namespaces.defaultName} only (its upgrade's TCert is checked there); send requests for ${String(other).slice(0, 64)} over HTTP with that namespace's TCert`,
        ),
      )
  }
  const request = wsOnlyRequest(body, namespaces)
  // issue 28: eth_subscribe / eth_unsubscribe, answered in Ethereum's envelope
  if (request?.method.startsWith('eth_')) {
    try {
      const result =
        request.method === 'eth_subscribe'
          ? own.ethSubscribe(connection, request.params, request.namespace)
          : own.ethUnsubscribe(connection, request.params)
      return stringifyJson({ jsonrpc: '2.0', id: request.id, result })
    } catch (error) {
      if (error instanceof RpcError)
        return stringifyJson({ jsonrpc: '2.0', id: request.id, error: { code: error.code, message: error.message } })
      throw error
    }
  }
  if (request !== undefined) {
    try {
      const result =
        request.method === 'sub_subscribe'
          ? own.subscribe(connection, request.params, request.namespace)
          : own.unsubscribe(connection, request.params, request.namespace)
      return replyIn(request.namespace, request.id, 0, 'SUCCESS', result)
    } catch (error) {
      if (error instanceof RpcError) return replyIn(request.namespace, request.id, error.code, error.message)
      throw error
    }
  }
  if (
    Array.isArray(body) &&
    body.some(
      (element) => element !== null && typeof element === 'object' && WS_METHODS.has((element as { method?: unknown }).method as string),
    )
  )
    return dispatcher.errorReply(new InvalidRequest('invalid request: sub_subscribe and sub_unsubscribe cannot be sent in a batch'))
  return dispatcher.handleBody(body, { headers: connection.headers })
}
