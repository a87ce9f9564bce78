/**
 * JSON-RPC over node:http (ARCHITECTURE.md decision 1).
 *
 * POST on any path, any or no Content-Type (the official SDK sends none and a chunked body).
 * Every JSON-RPC outcome is HTTP 200 with the envelope. Transport-level refusals keep their HTTP
 * status but still carry a JSON envelope, because the SDK crashes on a non-JSON body:
 * a body over the limit (counted on the bytes read, chunked included) → 413 + -32600, sent once
 * the rest of the body has been read and dropped (up to a bound) so the client can read it;
 * a method other than POST → 405 + -32600, except the GET pages (`/` says how to use the port).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { InternalError, InvalidRequest, ParseError, type RpcError } from '../errors.ts'
import type { Logger } from '../log.ts'
import { type JsonChunks, JsonDepthError, JsonSyntaxError, parseJson } from '../wire/json.ts'
import type { Dispatcher } from './dispatch.ts'
import { readOperatorProof } from './operator-auth.ts'
import type { TcertCheck } from './tcert-check.ts'

export interface HttpLimits {
  maxBodyBytes: number
  maxJsonDepth: number
  maxHeaderBytes: number
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
}

export interface HttpServerOptions {
  host: string
  port: number
  /** listen on this already listening socket instead (another request thread's, src/front/) */
  fd?: number
  limits: HttpLimits
  /** value of Access-Control-Allow-Origin; empty disables CORS */
  corsOrigin: string
  dispatcher: Dispatcher
  /** the TCert check (tcert-check.ts), when `[tcert] check` is on: runs before dispatch, its refusal is the reply */
  tcertCheck?: TcertCheck
  /** extra GET routes, e.g. /playground */
  pages: Readonly<Record<string, { contentType: string; body: string | Buffer; headers?: Record<string, string> }>>
  /** GET routes answered when asked (/metrics, /health, /ready): their status and body are made per request */
  routes?: Readonly<Record<string, () => Promise<RouteReply>>>
  /** WebSocket upgrades on any path (src/rpc/ws.ts); without it an upgrade request is dropped */
  onUpgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void
  log: Logger
}

export interface RouteReply {
  status: number
  contentType: string
  body: string
}

export interface RpcHttpServer {
  readonly server: Server
  listen(): Promise<AddressInfo>
  close(): Promise<void>
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** how much of a refused body (413) is read and dropped so the client can read the answer: 64 MiB, or 8 bodies when that is more */
const discardLimit = (maxBodyBytes: number): number => Math.max(64 << 20, 8 * maxBodyBytes)

export function createRpcHttpServer(options: HttpServerOptions): RpcHttpServer {
  const { limits, dispatcher, log } = options
  const server = createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // how often Node looks for requests past headersTimeout/requestTimeout (default 30 s)
    connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
  })

  const corsHeaders: Record<string, string> =
    options.corsOrigin === ''
      ? {}
      : {
          'access-control-allow-origin': options.corsOrigin,
          'access-control-allow-methods': 'POST, GET, OPTIONS',
          'access-control-allow-headers': '*',
          'access-control-max-age': '600',
        }

  const send = (res: ServerResponse, status: number, body: string | JsonChunks, extra: Record<string, string> = {}): void =>
    sendJson(res, status, body, { ...corsHeaders, ...extra })

  const refuse = (res: ServerResponse, status: number, error: RpcError, extra: Record<string, string> = {}): void => {
    send(res, status, dispatcher.errorReply(error), extra)
  }

  // Node 20's own headersTimeout check misses a slow connection once other requests arrive, so each
  // socket carries its own deadline: headers within headersTimeoutMs, the body within requestTimeoutMs.
  const deadlines = new WeakMap<Socket, NodeJS.Timeout>()
  const arm = (socket: Socket, ms: number, onExpiry: () => void): void => {
    clearTimeout(deadlines.get(socket))
    deadlines.set(socket, setTimeout(onExpiry, ms).unref())
  }
  const headersDeadline = (socket: Socket, ms: number): void =>
    arm(socket, ms, () => {
      socket.end('HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
      socket.destroySoon()
    })
  server.on('connection', (socket: Socket) => {
    headersDeadline(socket, limits.headersTimeoutMs)
    socket.on('close', () => clearTimeout(deadlines.get(socket)))
  })

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    arm(socket, limits.requestTimeoutMs, () => {
      refuse(res, 408, new InvalidRequest(`invalid request: the request was not received within ${limits.requestTimeoutMs} ms`), {
        connection: 'close',
      })
      socket.destroySoon()
    })
    // after a reply the socket may idle for keepAliveTimeoutMs, then must deliver headers in time
    res.on('finish', () => headersDeadline(socket, limits.keepAliveTimeoutMs + limits.headersTimeoutMs))
    const method = req.method ?? ''
    if (method === 'OPTIONS') {
      res.writeHead(204, corsHeaders)
      res.end()
      return
    }
    if (
      (method === 'GET' || method === 'HEAD') &&
      serveGet(req, res, { pages: options.pages, routes: options.routes, corsHeaders, send, log })
    )
      return
    if (method !== 'POST') {
      req.resume()
      refuse(res, 405, new InvalidRequest(`invalid request: HTTP ${method} is not served here; send JSON-RPC requests with POST`), {
        allow: 'POST, OPTIONS',
      })
      return
    }
    readBody(req, {
      maxBodyBytes: limits.maxBodyBytes,
      tooLarge: () =>
        refuse(res, 413, new InvalidRequest(`invalid request: body larger than ${limits.maxBodyBytes} bytes`), { connection: 'close' }),
      onRefusedSent: (then) => res.on('finish', then),
      log,
      done: (bytes) =>
        void answerBody(req, bytes, {
          dispatcher,
          tcertCheck: options.tcertCheck,
          maxJsonDepth: limits.maxJsonDepth,
          send: (status, body) => send(res, status, body),
          refuse: (error) => refuse(res, 200, error),
          log,
        }),
    })
  })

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    // the connection leaves HTTP: its header deadline no longer applies
    clearTimeout(deadlines.get(socket))
    if (options.onUpgrade === undefined) socket.destroy()
    else options.onUpgrade(req, socket, head)
  })

  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy()
    // 431 for oversized headers, 408 for slow ones; Node's defaults, but always closed.
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
    )
  })

  return {
    server,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject)
        const listening = (): void => {
          server.off('error', reject)
          resolve(server.address() as AddressInfo)
        }
        if (options.fd === undefined) server.listen(options.port, options.host, listening)
        else server.listen({ fd: options.fd }, listening)
      }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** one JSON reply with its length (the closing newline included) and `headers` */
function sendJson(res: ServerResponse, status: number, body: string | JsonChunks, headers: Record<string, string>): void {
  if (res.headersSent || res.destroyed) return
  const length =
    typeof body === 'string'
      ? Buffer.byteLength(body)
      : body.reduce((sum, chunk) => sum + (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength), 0)
  // an explicit length (the closing newline included): after writeHead, Node would otherwise send every reply chunked
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(length + 1),
    ...headers,
  })
  if (typeof body === 'string') return void res.end(`${body}\n`)
  // the pieces leave in one write (writev) once corked
  res.cork()
  for (const chunk of body) res.write(chunk)
  res.end('\n')
}

/** a GET or HEAD of a page or a route (the playground, /metrics, /health, /ready); false when there is none at that path */
function serveGet(
  req: IncomingMessage,
  res: ServerResponse,
  context: {
    pages: HttpServerOptions['pages']
    routes: HttpServerOptions['routes']
    corsHeaders: Record<string, string>
    send(res: ServerResponse, status: number, body: string): void
    log: Logger
  },
): boolean {
  const { corsHeaders, send, log } = context
  const method = req.method
  const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '') || '/'
  const page = context.pages[path]
  if (page !== undefined) {
    res.writeHead(200, { 'content-type': page.contentType, ...corsHeaders, ...page.headers })
    res.end(method === 'HEAD' ? undefined : page.body)
    return true
  }
  const route = context.routes?.[path]
  if (route !== undefined) {
    void route().then(
      (reply) => {
        if (res.headersSent || res.destroyed) return
        res.writeHead(reply.status, { 'content-type': reply.contentType, 'cache-control': 'no-store', ...corsHeaders })
        res.end(method === 'HEAD' ? undefined : reply.body)
      },
      (error: unknown) => {
        log.error(`GET ${path} failed`, error)
        send(res, 500, JSON.stringify({ error: `GET ${path} failed on this node; its log has the reason` }))
      },
    )
    return true
  }
  return false
}

/**
 * Reads a request's body up to `maxBodyBytes`. Past it the rest is read and dropped (up to a bound),
 * and `tooLarge` answers once it has ended: a connection closed while the client still writes makes
 * it see EPIPE or ECONNRESET instead of the answer (half of Node's own HTTP clients did, on a 50 MB
 * body); past the bound the client gets the answer at once and the connection closes under it.
 */
function readBody(
  req: IncomingMessage,
  context: {
    maxBodyBytes: number
    tooLarge(): void
    /** runs `then` once the refusal has been sent */
    onRefusedSent(then: () => void): void
    log: Pick<Logger, 'debug'>
    done(bytes: Buffer): void
  },
): void {
  const { maxBodyBytes, tooLarge, log } = context
  const chunks: Buffer[] = []
  let size = 0
  let refused = false
  req.on('data', (chunk: Buffer) => {
    size += chunk.length
    if (refused) {
      // past the bound the client gets the answer now and the connection closes under it
      if (size > discardLimit(maxBodyBytes) && !req.isPaused()) {
        req.pause()
        tooLarge()
        context.onRefusedSent(() => setTimeout(() => req.destroy(), 50).unref())
      }
      return
    }
    if (size > maxBodyBytes) {
      // The rest of the body is read and dropped (up to a bound), and the 413 sent when it has
      // ended: a connection closed while the client still writes makes it see EPIPE or
      // ECONNRESET instead of the answer (half of Node's own HTTP clients did, on a 50 MB body).
      refused = true
      chunks.length = 0
      return
    }
    chunks.push(chunk)
  })
  req.on('error', (error) => log.debug('request stream failed', error.message))
  req.on('end', () => {
    if (refused) return tooLarge()
    context.done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
  })
}

/** a body's answer: parsed, past the TCert check, dispatched */
async function answerBody(
  req: IncomingMessage,
  bytes: Buffer,
  context: {
    dispatcher: Dispatcher
    tcertCheck: TcertCheck | undefined
    maxJsonDepth: number
    send(status: number, body: string | JsonChunks): void
    /** a refusal, in an envelope with HTTP 200 */
    refuse(error: RpcError): void
    log: Pick<Logger, 'error'>
  },
): Promise<void> {
  const { dispatcher, send, refuse, log } = context
  let body: unknown
  try {
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      throw new ParseError('parse error: the body is not valid UTF-8')
    }
    if (text.trim() === '') throw new ParseError('parse error: empty body; send a JSON-RPC request object')
    body = parseJson(text, { maxDepth: context.maxJsonDepth })
  } catch (error) {
    if (error instanceof JsonSyntaxError) return refuse(new ParseError(`parse error: ${error.message}`))
    if (error instanceof JsonDepthError) return refuse(new InvalidRequest(`invalid request: ${error.message}`))
    if (error instanceof ParseError) return refuse(error)
    throw error
  }
  try {
    const refusal = await context.tcertCheck?.check(req.headers, { body: bytes, parsed: body })
    if (refusal !== undefined) return refuse(refusal)
    const operator = readOperatorProof(req.headers, bytes)
    send(200, await dispatcher.handleBodyChunks(body, { headers: req.headers, operator }))
  } catch (error) {
    // handleBody turns handler failures into envelopes; reaching here is a bug in the transport path
    log.error('failed to answer a request', error)
    send(200, dispatcher.errorReply(new InternalError()))
  }
}
