/** Starting a real node for a test, and talking to it in raw HTTP when the test needs bytes. */
import { mkdtempSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ConfigOverrides, resolveConfig } from '../../src/config.ts'
import { type KeelNode, type StartOptions, startNode } from '../../src/node.ts'
import { parseJson, stringifyJson } from '../../src/wire/json.ts'

/** A node on 127.0.0.1:0 with its own fresh data directory (unless the overrides name one). */
export async function startTestNode(overrides: ConfigOverrides = {}, options: StartOptions = {}): Promise<KeelNode> {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-test-'))
  return startNode(resolveConfig({ jsonrpc: { port: 0 }, node: { dataDir }, log: { level: 'silent' } }, overrides), options)
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
  return rawRequest(url, typeof body === 'string' ? body : stringifyJson(body), options)
}

export function envelope(method: string, params?: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', namespace: 'global', id: 1, method, ...(params === undefined ? {} : { params }), ...extra }
}

/** Polls tx_getTransactionReceipt while it answers -32001, like the SDKs do; returns the final reply. */
export async function waitForReceipt(
  url: string,
  hash: string,
  timeoutMs = 10_000,
): Promise<{ code: number; message: string; result?: Record<string, unknown> }> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const reply = (await post(url, envelope('tx_getTransactionReceipt', [hash]))).body as {
      code: number
      message: string
      result?: Record<string, unknown>
    }
    if (reply.code !== -32001 || Date.now() > deadline) return reply
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
