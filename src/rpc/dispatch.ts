/**
 * The one generic dispatcher: request envelope → method table → params check → handler → reply
 * envelope. Nothing here is specific to a method; the table comes from generated/methods.ts.
 *
 * Reply envelope (spec "Response envelope"): {jsonrpc, namespace, id, code, message, result?}.
 * code 0 + SUCCESS carries `result`; anything else carries no `result`.
 */
import { copyWith } from '../copy-with.ts'
import { InternalError, InvalidParams, InvalidRequest, MethodNotFound, NamespaceNotExist, ResponseTooLarge, RpcError } from '../errors.ts'
import { type EthereumReply, isEthereumMethod, toEthereumReply } from '../eth/envelope.ts'
import type { Logger } from '../log.ts'
import { type JsonChunks, stringifyJson, stringifyJsonChunks } from '../wire/json.ts'
import type { CallContext, OperatorProof } from './context.ts'
import type { MethodSpec } from './method-spec.ts'
import { compileParamChecker, type ParamChecker } from './params.ts'

export interface DispatchLimits {
  /** most requests in one batch */
  maxBatchLength: number
  /** bytes of batch reply after which the remaining items answer -32014 */
  maxBatchResponseBytes: number
}

export interface DispatcherOptions {
  methods: Readonly<Record<string, MethodSpec>>
  aliases: Readonly<Record<string, string>>
  schemas: Readonly<Record<string, unknown>>
  /** handlers built so far; a method without one answers -32601 "not implemented yet" */
  handlers: Readonly<Record<string, unknown>>
  /** issue 30: the handlers of the namespace a request names, when a node serves several (else `handlers` serve every request) */
  handlersOf?(namespace: string): Readonly<Record<string, unknown>> | undefined
  /** methods Keel knows but cannot serve, with the feature each needs: -32601 names it */
  missingFeatures?: Readonly<Record<string, string>>
  /** the OpenRPC document `rpc.discover` returns */
  document: unknown
  defaultNamespace: string
  isKnownNamespace(namespace: string): boolean
  /** the namespaces that exist, for -32010's message */
  knownNamespaces?(): readonly string[]
  limits: DispatchLimits
  log: Logger
  /**
   * Told of every call answered: its canonical method ("rpc.discover", or "unknown" for a name
   * no method or alias has, so the label set stays bounded), the answer's code (0 for success) and
   * the time from the parsed request to the answer.
   */
  observe?(method: string, code: number, seconds: number): void
}

export interface RequestMeta {
  headers: Readonly<Record<string, string | string[] | undefined>>
  /** what the request's operator headers prove, read by the transport from the body's bytes (operator-auth.ts) */
  operator?: OperatorProof
}

export interface Dispatcher {
  /** Answers one parsed body (an envelope or a batch) with the JSON text of the reply. */
  handleBody(body: unknown, meta: RequestMeta): Promise<string>
  /**
   * handleBody for a transport that writes bytes (HTTP): the reply to one request whose result
   * is a large kept answer (a full block) comes out as pieces around that answer's kept bytes
   * (wire/json.ts stringifyJsonChunks), so it is not copied and encoded again for every reply.
   */
  handleBodyChunks(body: unknown, meta: RequestMeta): Promise<string | JsonChunks>
  /** Answers one error that happened before a body could be read as JSON. */
  errorReply(error: RpcError): string
  /** The canonical name a requested method (or alias) reaches; undefined when none */
  canonicalName(requested: string): string | undefined
}

type Handler = (params: unknown[], context: CallContext) => unknown

const NAMESPACE_PATTERN = /^[a-z0-9_]{1,64}$/

interface Envelope {
  jsonrpc: '2.0'
  namespace: string
  id: string | number | bigint | null
  code: number
  message: string
  /** why, when the error has more to say than its name (a discarded transaction's reason) */
  data?: string
  result?: unknown
}

/**
 * The one generic dispatcher (docs/style.md §1): a body, a batch or one request in, envelopes out.
 *
 * Long because: building an envelope, answering one request, a batch and a body are functions of
 * their own inside it, over the same compiled param checkers, method table and options.
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { methods, aliases, schemas, handlers, log, defaultNamespace } = options
  const checkers = new Map<string, ParamChecker>()
  for (const [name, spec] of Object.entries(methods))
    checkers.set(name, compileParamChecker(name, spec, schemas as Record<string, unknown>))

  const failure = (namespace: string, id: Envelope['id'], error: RpcError): Envelope => ({
    jsonrpc: '2.0',
    namespace,
    id,
    code: error.code,
    message: error.message,
    ...(error.data === undefined ? {} : { data: error.data }),
  })

  // issue 28: a request for an eth_/net_/web3_/debug_ method is answered in Ethereum's envelope (src/eth/envelope.ts)
  async function handleOne(request: unknown, meta: RequestMeta): Promise<Envelope | EthereumReply> {
    const reply = await handleHyperchain(request, meta)
    const method = request !== null && typeof request === 'object' ? (request as { method?: unknown }).method : undefined
    return isEthereumMethod(method) ? toEthereumReply(reply) : reply
  }

  async function handleHyperchain(request: unknown, meta: RequestMeta): Promise<Envelope> {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      return failure(defaultNamespace, null, new InvalidRequest(`invalid request: expected a JSON object, got ${kindOf(request)}`))
    }
    const envelope = request as Record<string, unknown>
    const rawId = envelope.id
    const idValid = typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId)) || typeof rawId === 'bigint'
    const id = idValid ? (rawId as Envelope['id']) : null
    const rawNamespace = envelope.namespace
    const namespaceGiven = typeof rawNamespace === 'string' && rawNamespace !== ''
    const namespaceKnown = namespaceGiven && NAMESPACE_PATTERN.test(rawNamespace) && options.isKnownNamespace(rawNamespace)
    // an unknown namespace did not produce the reply, so the reply names the default one
    const namespace = namespaceKnown ? rawNamespace : defaultNamespace

    if (rawId === undefined)
      return failure(
        namespace,
        null,
        new InvalidRequest('invalid request: missing `id` (Keel answers every request, so notifications are not accepted)'),
      )
    if (!idValid)
      return failure(namespace, null, new InvalidRequest(`invalid request: \`id\` must be a string or a number, got ${kindOf(rawId)}`))
    if (envelope.jsonrpc !== '2.0') {
      return failure(
        namespace,
        id,
        new InvalidRequest(`invalid request: \`jsonrpc\` must be exactly "2.0", got ${shortText(envelope.jsonrpc)}`),
      )
    }
    if (typeof envelope.method !== 'string' || envelope.method === '') {
      return failure(
        namespace,
        id,
        new InvalidRequest(`invalid request: \`method\` must be a non-empty string, got ${shortText(envelope.method)}`),
      )
    }
    if (rawNamespace !== undefined && typeof rawNamespace !== 'string') {
      return failure(namespace, id, new InvalidRequest(`invalid request: \`namespace\` must be a string, got ${kindOf(rawNamespace)}`))
    }
    if (namespaceGiven && !namespaceKnown) {
      return failure(namespace, id, new NamespaceNotExist(truncate(rawNamespace, 40), options.knownNamespaces?.() ?? [defaultNamespace]))
    }
    const rawParams = envelope.params
    let params: unknown[]
    if (rawParams === undefined || rawParams === null) params = []
    else if (Array.isArray(rawParams)) params = rawParams
    else if (typeof rawParams === 'object') {
      return failure(namespace, id, new InvalidParams('invalid params: `params` must be an array of positional arguments, got an object'))
    } else {
      return failure(namespace, id, new InvalidRequest(`invalid request: \`params\` must be an array, got ${kindOf(rawParams)}`))
    }

    const requested = envelope.method
    const started = performance.now()
    const answered = (reply: Envelope): Envelope => {
      const label = requested === 'rpc.discover' ? requested : (canonicalName(requested) ?? 'unknown')
      options.observe?.(label, reply.code, (performance.now() - started) / 1000)
      return reply
    }
    try {
      const result = await call(requested, params, { namespace, method: requested, headers: meta.headers, operator: meta.operator })
      return answered({ jsonrpc: '2.0', namespace, id, code: 0, message: 'SUCCESS', result })
    } catch (error) {
      if (error instanceof RpcError) return answered(failure(namespace, id, error))
      log.error(`unexpected failure in ${truncate(requested, 80)}`, error)
      return answered(failure(namespace, id, new InternalError()))
    }
  }

  const knownNames = ['rpc.discover', ...Object.keys(methods), ...Object.keys(aliases)]

  function canonicalName(requested: string): string | undefined {
    return Object.hasOwn(methods, requested) ? requested : Object.hasOwn(aliases, requested) ? aliases[requested] : undefined
  }

  async function call(requested: string, params: unknown[], context: CallContext): Promise<unknown> {
    if (requested === 'rpc.discover') return options.document
    const name = canonicalName(requested)
    if (name === undefined) {
      const missing = options.missingFeatures
      if (missing !== undefined && Object.hasOwn(missing, requested))
        throw new MethodNotFound(`The method ${requested} is not available: Keel has no ${missing[requested]} yet`)
      const suggestion = requested.length > 80 ? undefined : closestMethodName(requested, knownNames)
      throw new MethodNotFound(
        `The method ${truncate(requested, 80)} does not exist/is not available${suggestion === undefined ? '' : ` (names are case-sensitive; did you mean ${suggestion}?)`}`,
      )
    }
    if (methods[name].transport === 'websocket') {
      const host = typeof context.headers.host === 'string' ? context.headers.host : '<host>:<port>'
      throw new MethodNotFound(
        `The method ${name} is served only over WebSocket: open ws://${truncate(host, 80)}/ and send it there, alone`,
      )
    }
    const checked = (checkers.get(name) as ParamChecker).check(params)
    // a namespace stopped since the envelope was read has no handlers: it does not exist any more
    const served = options.handlersOf === undefined ? handlers : options.handlersOf(context.namespace)
    if (served === undefined) throw new NamespaceNotExist(context.namespace, options.knownNamespaces?.() ?? [defaultNamespace])
    const handler = Object.hasOwn(served, name) ? (served[name] as Handler) : undefined
    if (handler === undefined) throw new MethodNotFound(`The method ${name} is not implemented yet`)
    const result = await handler(checked, copyWith(context, { method: name }))
    if (result === undefined) throw new Error(`handler of ${name} returned no result`)
    return result
  }

  async function handleBody(body: unknown, meta: RequestMeta): Promise<string> {
    if (!Array.isArray(body)) return stringifyJson(await handleOne(body, meta))
    if (body.length === 0) return stringifyJson(failure(defaultNamespace, null, new InvalidRequest('invalid request: empty batch')))
    if (body.length > options.limits.maxBatchLength) {
      return stringifyJson(
        failure(
          defaultNamespace,
          null,
          new InvalidRequest(`batch too large: at most ${options.limits.maxBatchLength} requests per batch, got ${body.length}`),
        ),
      )
    }
    // Elements run in order, so a batch that submits transactions keeps their order.
    const parts: string[] = []
    let bytes = 2
    for (const element of body) {
      let text: string
      if (bytes > options.limits.maxBatchResponseBytes) {
        const id = validIdOf(element)
        text = stringifyJson(failure(defaultNamespace, id, new ResponseTooLarge(options.limits.maxBatchResponseBytes)))
      } else {
        text = stringifyJson(await handleOne(element, meta))
      }
      bytes += text.length + 1
      parts.push(text)
    }
    return `[${parts.join(',')}]`
  }

  return {
    handleBody,
    handleBodyChunks: async (body, meta) =>
      Array.isArray(body) ? handleBody(body, meta) : stringifyJsonChunks(await handleOne(body, meta)),
    canonicalName,
    errorReply: (error) => stringifyJson(failure(defaultNamespace, null, error)),
  }
}

/**
 * The known method name nearest to a misspelt one (case-insensitive edit distance), when it is near
 * enough to be a typo: at most a quarter of the name's letters, and never more than 3, differ.
 */
export function closestMethodName(requested: string, known: readonly string[]): string | undefined {
  const wanted = requested.toLowerCase()
  const limit = Math.min(3, Math.max(1, Math.floor(wanted.length / 4)))
  let best: string | undefined
  let bestDistance = limit + 1
  for (const name of known) {
    if (Math.abs(name.length - wanted.length) >= bestDistance) continue
    const distance = editDistance(wanted, name.toLowerCase(), bestDistance)
    if (distance < bestDistance) {
      best = name
      bestDistance = distance
    }
  }
  return best
}

/** Levenshtein distance, giving up (returning `cap`) once every path costs at least `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let rowMin = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
      rowMin = Math.min(rowMin, current[j])
    }
    if (rowMin >= cap) return cap
    previous = current
  }
  return previous[b.length]
}

function validIdOf(element: unknown): Envelope['id'] {
  if (element === null || typeof element !== 'object') return null
  const id = (element as Record<string, unknown>).id
  return typeof id === 'string' || typeof id === 'number' || typeof id === 'bigint' ? id : null
}

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  return `a ${typeof value === 'bigint' ? 'number' : typeof value} (${shortText(value)})`
}

function shortText(value: unknown): string {
  if (value === undefined) return 'nothing'
  return truncate(typeof value === 'string' ? JSON.stringify(value) : String(value), 64)
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}
