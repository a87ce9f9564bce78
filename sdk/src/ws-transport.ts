/**
 * A Transport over one WebSocket connection (Node.js, the `ws` package): the client's requests go
 * to the node's JSON-RPC port as WebSocket messages, replies are matched to requests by id, and
 * pushed notifications (`sub_subscription`) go to `onNotification`. Needed for the methods that
 * exist only on a connection (sub_subscribe, sub_unsubscribe).
 *
 * ```ts
 * const transport = await wsTransport('ws://127.0.0.1:8081', { onNotification: console.log })
 * const client = createClient({ transport })
 * const id = await client.sub_subscribe('block', true)
 * ```
 *
 * A node with the TCert check on wants its headers on the upgrade request, signed over the path:
 * `wsTransport(url, { headersFor: tcertSigner({ tcert, privateKey }) })` (tcert.ts).
 */
import WebSocket from 'ws'
import type { Transport } from './client.ts'
import { parseJson, stringifyJson } from './json.ts'

export interface WsTransportOptions {
  /** how long a request waits for its reply */
  timeoutMs?: number
  /** each message that is not a reply, parsed */
  onNotification?(message: unknown): void
  /** extra HTTP headers of the upgrade request */
  headers?: Record<string, string>
  /** more upgrade headers, computed from the path of the upgrade request (e.g. `/`); e.g. a tcertSigner */
  headersFor?(path: string): Record<string, string>
}

export interface WsTransport extends Transport {
  close(): Promise<void>
}

export async function wsTransport(url: string, options: WsTransportOptions = {}): Promise<WsTransport> {
  const timeoutMs = options.timeoutMs ?? 60_000
  const target = new URL(url.replace(/^http/, 'ws'))
  const headers = { ...options.headers, ...options.headersFor?.(`${target.pathname}${target.search}`) }
  const socket = new WebSocket(target, { headers })
  const waiting = new Map<string, { resolve(text: string): void; reject(error: Error): void }>()
  const failAll = (error: Error): void => {
    for (const { reject } of waiting.values()) reject(error)
    waiting.clear()
  }
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
    // a refused upgrade (e.g. HTTP 401 with a -32098 envelope): the reason is in the body
    socket.once('unexpected-response', (_request, response) => {
      let text = ''
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString()
      })
      response.on('end', () => {
        reject(new Error(`WebSocket upgrade refused: HTTP ${response.statusCode} ${text.slice(0, 500)}`))
        socket.terminate()
      })
    })
  })
  socket.on('error', failAll)
  socket.on('close', (code, reason) => failAll(new Error(`WebSocket closed (${code} ${reason.toString()})`)))
  socket.on('message', (data) => {
    const text = data.toString()
    const message = parseJson(text, { maxDepth: 512 }) as { id?: unknown; method?: unknown } | null
    const key = message !== null && typeof message === 'object' && 'id' in message ? stringifyJson(message.id) : undefined
    const request = key === undefined ? undefined : waiting.get(key)
    if (request === undefined) return options.onNotification?.(message)
    waiting.delete(key as string)
    request.resolve(text)
  })
  return {
    request(body) {
      const { id } = parseJson(body, { maxDepth: 512 }) as { id?: unknown }
      const key = stringifyJson(id ?? null)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(key)
          reject(new Error(`no reply over WebSocket within ${timeoutMs} ms`))
        }, timeoutMs)
        waiting.set(key, {
          resolve: (text) => {
            clearTimeout(timer)
            resolve(text)
          },
          reject: (error) => {
            clearTimeout(timer)
            reject(error)
          },
        })
        socket.send(body)
      })
    },
    close() {
      if (socket.readyState === WebSocket.CLOSED) return Promise.resolve()
      return new Promise((resolve) => {
        socket.once('close', () => resolve())
        socket.close()
      })
    },
  }
}
