/**
 * The typed Keel client. One generic request path serves every method; the method list and the
 * types come from openrpc.json through ./generated/ (made by `npm run codegen`). Integers above 2^53 travel losslessly both ways.
 *
 * ```ts
 * const client = createClient({ url: 'http://127.0.0.1:8081' })
 * const version = await client.tx_getTransactionsVersion()
 * ```
 */
import type { KeelClientMethods } from './generated/client.ts'
import { methodErrorCodes } from './generated/method-errors.ts'
import { type MethodName, methodNames } from './generated/method-names.ts'
import type { Methods } from './generated/types.ts'
import { parseJson, stringifyJson } from './json.ts'

/** A reply envelope of the Hyperchain dialect. */
export interface Envelope {
  jsonrpc: string
  namespace?: string
  id: string | number | bigint | null
  code: number
  message: string
  result?: unknown
}

/**
 * The Ethereum dialect's methods (eth_, net_, web3_) answer in plain JSON-RPC 2.0: such a reply is
 * read as an envelope with code 0 and its `result`, or its error's code and message (and `data`).
 */
function ethereumToEnvelope(reply: unknown): unknown {
  if (reply === null || typeof reply !== 'object' || Array.isArray(reply) || 'code' in reply) return reply
  const plain = reply as {
    jsonrpc?: string
    id?: Envelope['id']
    result?: unknown
    error?: { code?: unknown; message?: unknown; data?: unknown }
  }
  if ('result' in plain) return { jsonrpc: plain.jsonrpc, id: plain.id ?? null, code: 0, message: 'SUCCESS', result: plain.result }
  if (plain.error !== null && typeof plain.error === 'object' && typeof plain.error.code === 'number')
    return {
      jsonrpc: plain.jsonrpc,
      id: plain.id ?? null,
      code: plain.error.code,
      message: String(plain.error.message),
      data: plain.error.data,
    }
  return reply
}

/**
 * A call the node answered with a non-zero code: one class for every code, the code its type
 * parameter. `isErrorOf(method, error)` narrows it to the codes the method documents.
 */
export class RpcError<Code extends number = number> extends Error {
  override name = 'RpcError'
  readonly code: Code
  /** the node's own message, without the method prefix */
  readonly shortMessage: string
  constructor(
    readonly method: string,
    readonly envelope: Envelope,
  ) {
    super(`${method} failed with code ${envelope.code}: ${envelope.message}`)
    this.code = envelope.code as Code
    this.shortMessage = envelope.message
  }
}

/** The error `method` documents (openrpc.json `errors`): an RpcError with one of its codes. */
export type MethodError<M extends MethodName> = RpcError<Methods[M]['error']>

/**
 * Whether `error` is an RpcError with one of the codes `method` documents, e.g.
 *
 * ```ts
 * try { await client.tx_getTransactionReceipt(hash) } catch (error) {
 *   if (isErrorOf('tx_getTransactionReceipt', error) && error.code === ErrorCode.DATA_NOT_FOUND) …
 * }
 * ```
 *
 * A code outside the method's list (busy, an internal error, a TCert refusal) answers false.
 */
export function isErrorOf<M extends MethodName>(method: M, error: unknown): error is MethodError<M> {
  return error instanceof RpcError && (methodErrorCodes[method] as readonly number[]).includes(error.code)
}

/** Moves one request body to a node and brings the reply body back. */
export interface Transport {
  request(body: string): Promise<string>
}

export interface HttpTransportOptions {
  timeoutMs?: number
  headers?: Record<string, string>
  /**
   * more headers for each request, computed from its exact body (sent as UTF-8), e.g. the TCert
   * check's signed headers: `httpTransport(url, { headersFor: tcertSigner({ tcert, privateKey }) })`
   */
  headersFor?(body: string): Record<string, string> | Promise<Record<string, string>>
}

export function httpTransport(url: string, options: HttpTransportOptions = {}): Transport {
  const timeoutMs = options.timeoutMs ?? 60_000
  return {
    async request(body) {
      const response = await fetch(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...options.headers, ...(await options.headersFor?.(body)) },
        signal: AbortSignal.timeout(timeoutMs),
      })
      return response.text()
    },
  }
}

export interface ClientOptions {
  /** base URL of a node; used when no transport is given */
  url?: string
  transport?: Transport
  namespace?: string
}

export type KeelClient = KeelClientMethods & {
  readonly namespace: string
  /** Sends one request and returns the whole reply envelope, success or not. */
  send(method: string, params?: readonly unknown[]): Promise<Envelope>
  /** Sends one request; resolves with `result` on code 0, rejects with RpcError otherwise. */
  request(method: string, params?: readonly unknown[]): Promise<unknown>
}

export function createClient(options: ClientOptions): KeelClient {
  const transport = options.transport ?? (options.url !== undefined ? httpTransport(options.url) : undefined)
  if (transport === undefined) throw new Error('createClient needs a url or a transport')
  const namespace = options.namespace ?? 'global'
  let nextId = 1

  const send = async (method: string, params: readonly unknown[] = []): Promise<Envelope> => {
    const id = nextId++
    const text = await transport.request(stringifyJson({ jsonrpc: '2.0', namespace, id, method, params }))
    const reply = ethereumToEnvelope(parseJson(text, { maxDepth: 512 }))
    if (reply === null || typeof reply !== 'object' || Array.isArray(reply) || typeof (reply as unknown as Envelope).code !== 'number') {
      throw new Error(`${method}: the node did not answer with an envelope: ${text.slice(0, 200)}`)
    }
    return reply as unknown as Envelope
  }

  const request = async (method: string, params: readonly unknown[] = []): Promise<unknown> => {
    const envelope = await send(method, params)
    if (envelope.code !== 0) throw new RpcError(method, envelope)
    return envelope.result
  }

  const client: Record<string, unknown> = { namespace, send, request }
  for (const method of methodNames) client[method] = (...params: unknown[]) => request(method, params)
  return client as unknown as KeelClient
}
