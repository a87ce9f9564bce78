/**
 * A client's side of the network fault tests: transfers sent the way reliability.md part C says a
 * client must (the same signed transaction again after -32006), and waiting until every accepted
 * hash has an outcome on every node, then checking it is the same everywhere (I3).
 */
import * as assert from 'uvu/assert'
import { assertSameOutcomes, call, receipts } from './audit.ts'
import { type Wallet, wallet } from './wallet.ts'

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * `count` transfers from `funder`, spread over `urls` in turn; resolves with the accepted hashes.
 * "busy" (-32006: a view change or recovery) is retried for up to `busyMs`; any other refusal fails.
 */
export async function sendTransfers(funder: Wallet, urls: readonly string[], count: number, busyMs = 30_000): Promise<string[]> {
  const hashes: string[] = []
  for (let i = 0; i < count; i++) {
    const url = urls[i % urls.length]
    const tx = funder.transfer(wallet().address, 1)
    const started = Date.now()
    for (;;) {
      const reply = await call(url, 'tx_sendTransaction', [tx])
      if (reply.code === 0) {
        hashes.push(reply.result as string)
        break
      }
      assert.ok(reply.code === -32006, `only "busy" may refuse a transfer here, got ${reply.code} ${reply.message}`)
      assert.ok(Date.now() - started < busyMs, `${url} stayed busy for ${busyMs} ms`)
      await sleep(200)
    }
  }
  return hashes
}

/**
 * Waits until every hash has an outcome on every url, checks they agree; resolves with the time it
 * took. Each poll asks each node, in one batch, only for the hashes it had no outcome for yet (the
 * check at the end reads them all again, so an outcome that went missing still fails).
 */
export async function waitCommitted(hashes: readonly string[], urls: readonly string[], timeoutMs: number): Promise<number> {
  assert.ok(hashes.length > 0)
  const started = Date.now()
  let pending = urls.map(() => [...hashes])
  for (;;) {
    pending = await Promise.all(
      urls.map(async (url, at) => {
        const left = pending[at]
        if (left.length === 0) return left
        const replies = await receipts(url, left)
        return left.filter((_hash, i) => replies[i].code === -32001)
      }),
    )
    if (pending.every((left) => left.length === 0)) {
      await assertSameOutcomes(urls, hashes)
      return Date.now() - started
    }
    if (Date.now() - started > timeoutMs) {
      const where = urls.map(
        (url, i) => `${url}: ${pending[i].length}${pending[i].length > 0 ? ` (${pending[i].slice(0, 3).join(', ')}…)` : ''}`,
      )
      throw new Error(`not committed on every node within ${timeoutMs} ms; hashes without an outcome: ${where.join('; ')}`)
    }
    await sleep(200)
  }
}

export interface NodeView {
  hostname: string
  isPrimary: boolean
}

/** the primary as `url` sees it (node_getNodes) */
export const primaryAt = async (url: string): Promise<string | undefined> =>
  ((await call(url, 'node_getNodes', [])).result as NodeView[] | undefined)?.find((node) => node.isPrimary)?.hostname
