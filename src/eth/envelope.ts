/**
 * Which requests the Ethereum dialect answers, and its reply envelope (issue 28).
 *
 * A request whose method is in the eth_, net_, web3_ or debug_ groups is answered as plain
 * JSON-RPC 2.0: `{jsonrpc, id, result}` or `{jsonrpc, id, error: {code, message, data?}}`, never
 * Hyperchain's `{namespace, code, message}`, because Ethereum clients read only `result` and
 * `error`. The rest of a request is handled the same way in both dialects (src/rpc/dispatch.ts),
 * so a batch may mix them: each element gets its own dialect's envelope.
 */
import type { Log } from '../domain.ts'

const ETHEREUM_PREFIXES = ['eth_', 'net_', 'web3_', 'debug_'] as const

/** true for a method name of the Ethereum dialect (whether Keel serves it or not) */
export function isEthereumMethod(method: unknown): boolean {
  if (typeof method !== 'string') return false
  for (const prefix of ETHEREUM_PREFIXES) if (method.startsWith(prefix)) return true
  return false
}

/** The Hyperchain-shaped reply the dispatcher builds, as far as this module reads it. */
export interface DialectReply {
  jsonrpc: '2.0'
  id: string | number | bigint | null
  code: number
  message: string
  result?: unknown
  /** an error's data (ExecutionReverted's revert data); carried only by the Ethereum envelope */
  data?: unknown
}

export type EthereumReply =
  | { jsonrpc: '2.0'; id: string | number | bigint | null; result: unknown }
  | { jsonrpc: '2.0'; id: string | number | bigint | null; error: { code: number; message: string; data?: unknown } }

/** The same reply in Ethereum's envelope. */
export function toEthereumReply(reply: DialectReply): EthereumReply {
  if (reply.code === 0) return { jsonrpc: '2.0', id: reply.id, result: reply.result ?? null }
  const error: { code: number; message: string; data?: unknown } = { code: reply.code, message: reply.message }
  if (reply.data !== undefined) error.data = reply.data
  return { jsonrpc: '2.0', id: reply.id, error }
}

/** The WebSocket push of eth_subscribe (made by api/eth/push.ts, used by the request threads' WebSocket server). */
export interface EthereumPush {
  /** checks eth_subscribe's params; the matcher of a `logs` subscription, or undefined for `newHeads` */
  subscription(params: unknown[]): { kind: 'newHeads' } | { kind: 'logs'; matches(log: Log): boolean }
  /** block `number`'s header as newHeads pushes it (a block without its transactions) */
  head(number: number): unknown
  /** block `number`'s logs in Ethereum's shape, each with its Keel log to match against */
  logs(number: number): { log: Log; shaped: unknown }[]
}
