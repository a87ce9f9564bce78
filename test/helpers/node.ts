/** Starting a real node for a test, and talking to it in raw HTTP when the test needs bytes. */
import { request } from 'node:http'
import { type ConfigOverrides, resolveConfig } from '../../src/config.ts'
import { type KeelNode, startNode } from '../../src/node.ts'
import { parseJson } from '../../src/rpc/json.ts'

export async function startTestNode(overrides: ConfigOverrides = {}): Promise<KeelNode> {
  return startNode(resolveConfig({ jsonrpc: { port: 0 }, log: { level: 'silent' } }, overrides))
}

export interface RawReply {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  /** the reply parsed losslessly; undefined when the body is not JSON */
  body: unknown
}

export interface RawOptions {
  method?: string
  headers?: Record<string, string>
  /** send the body with Transfer-Encoding: chunked, as the official SDK does */
  chunked?: boolean
  path?: string
}

export function rawRequest(url: string, body: string | Buffer | undefined, options: RawOptions = {}): Promise<RawReply> {
  const target = new URL(options.path ?? '/', url)
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers }
    if (body !== undefined && !options.chunked) headers['content-length'] = String(Buffer.byteLength(body))
    const req = request(target, { method: options.method ?? 'POST', headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed: unknown
        try {
          parsed = parseJson(text, { maxDepth: 512 })
        } catch {
          parsed = undefined
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    if (body !== undefined) req.write(body)
    req.end()
  })
}

/** POSTs one JSON-RPC body (object or raw text) and returns the parsed reply. */
export async function post(url: string, body: unknown, options: RawOptions = {}): Promise<RawReply> {
  return rawRequest(url, typeof body === 'string' ? body : JSON.stringify(body), options)
}

export function envelope(method: string, params?: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', namespace: 'global', id: 1, method, ...(params === undefined ? {} : { params }), ...extra }
}
