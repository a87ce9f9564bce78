/**
 * Reading nodes for the invariants of reliability.md part C (the auditor): reads in JSON-RPC
 * batches retried on network errors (reads are idempotent; a node may be restarting), and the
 * checks across nodes: I1 no fork, I3 one outcome per accepted hash, the same on every node.
 */
import * as assert from 'uvu/assert'
import { accountFromPrivateKey } from '../../sdk/src/account.ts'
import { operatorHeaders } from '../../sdk/src/operator.ts'
import { stringifyJson } from '../../src/wire/json.ts'
import { envelope, post } from './node.ts'

export interface Reply {
  code: number
  message: string
  /** a discarded transaction's reason (tx_getTransactionReceipt) */
  data?: string
  result?: unknown
}

export const isNetworkError = (error: unknown): boolean =>
  error instanceof Error &&
  /ECONNRESET|ECONNREFUSED|EPIPE|socket hang up|ETIMEDOUT/i.test(`${(error as NodeJS.ErrnoException).code} ${error.message}`)

/**
 * A read: retried on network errors. `operator`: sign it as an operator with this account key (a
 * retry is signed afresh: a node that accepted the first may refuse the copy as a replay).
 */
export async function call(url: string, method: string, params: unknown[], options: { operator?: string } = {}): Promise<Reply> {
  for (let attempt = 0; ; attempt++) {
    try {
      const body = stringifyJson(envelope(method, params))
      const headers = options.operator === undefined ? {} : operatorHeaders(accountFromPrivateKey(options.operator), body)
      return (await post(url, body, { headers })).body as Reply
    } catch (error) {
      if (!isNetworkError(error) || attempt >= 5) throw error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/** Reads in one JSON-RPC batch (≤ 100); replies in request order. */
export async function callBatch(url: string, calls: { method: string; params: unknown[] }[], retries = 5): Promise<Reply[]> {
  if (calls.length === 0) return []
  const body = calls.map((c, id) => envelope(c.method, c.params, { id }))
  for (let attempt = 0; ; attempt++) {
    try {
      const reply = (await post(url, body)).body as (Reply & { id: number })[]
      assert.ok(Array.isArray(reply), `batch reply is not an array: ${stringifyJson(reply)}`)
      const byId = new Map(reply.map((r) => [Number(r.id), r]))
      return calls.map((_c, id) => byId.get(id)!)
    } catch (error) {
      if (!isNetworkError(error) || attempt >= retries) throw error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/** One method over many single-param calls, 100 per batch; replies in order. */
export async function callEach(url: string, method: string, args: readonly unknown[]): Promise<Reply[]> {
  const out: Reply[] = []
  for (let at = 0; at < args.length; at += 100) {
    out.push(
      ...(await callBatch(
        url,
        args.slice(at, at + 100).map((arg) => ({ method, params: [arg] })),
      )),
    )
  }
  return out
}

export const receipts = (url: string, hashes: readonly string[]): Promise<Reply[]> => callEach(url, 'tx_getTransactionReceipt', hashes)

/** The receipt reply as a comparable string: code, message and result. */
export const receiptText = (reply: Reply): string => stringifyJson({ code: reply.code, message: reply.message, result: reply.result })

/** The height of a node; 0 before its first block. */
export async function height(url: string): Promise<number> {
  const reply = await call(url, 'block_latestBlock', [])
  if (reply.code === -32011) return 0
  assert.is(reply.code, 0, `block_latestBlock: ${reply.message}`)
  return Number((reply.result as { number: string }).number)
}

/**
 * I1 no fork: every height up to the lowest tip has the same block hash on every node. Resolves
 * with that height.
 */
export async function assertNoFork(urls: readonly string[]): Promise<number> {
  const tips = await Promise.all(urls.map(height))
  const common = Math.min(...tips)
  for (let from = 1; from <= common; from += 100) {
    const numbers = Array.from({ length: Math.min(100, common - from + 1) }, (_, i) => from + i)
    const perNode = await Promise.all(
      urls.map(async (url) =>
        (
          await callBatch(
            url,
            numbers.map((n) => ({ method: 'block_getBlockByNumber', params: [n, true] })),
          )
        ).map((reply) => (reply.result as { hash?: string } | undefined)?.hash ?? `${reply.code} ${reply.message}`),
      ),
    )
    for (const [i, n] of numbers.entries()) {
      const hashes = perNode.map((hashesOf) => hashesOf[i])
      assert.ok(
        hashes.every((hash) => hash === hashes[0]),
        `fork at block ${n}: ${urls.map((url, k) => `${url} ${hashes[k]}`).join(', ')}`,
      )
    }
  }
  return common
}

/**
 * I3 across nodes: each hash has an outcome (a receipt, or a discard record with its code) and it
 * is the same on every node. Resolves with each hash's outcome text. A hash still pending on a
 * node (-32001) fails the check.
 */
export async function assertSameOutcomes(urls: readonly string[], hashes: readonly string[]): Promise<Map<string, string>> {
  const perNode = await Promise.all(urls.map((url) => receipts(url, hashes)))
  const outcomes = new Map<string, string>()
  for (const [i, hash] of hashes.entries()) {
    const texts = perNode.map((replies) => receiptText(replies[i]))
    assert.ok(perNode[0][i].code !== -32001, `${hash} has no outcome on ${urls[0]}: ${texts[0]}`)
    assert.ok(
      texts.every((text) => text === texts[0]),
      `${hash} differs between nodes: ${urls.map((url, k) => `${url} ${texts[k]}`).join(' | ')}`,
    )
    outcomes.set(hash, texts[0])
  }
  return outcomes
}
