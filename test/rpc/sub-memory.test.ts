/**
 * What polling subscriptions cost a node, measured as its RSS (the node runs in this process;
 * every figure is taken after a full garbage collection): filters past the bounds of
 * src/events/filters.ts are refused with -32602 naming the limit, so 100 subscriptions with a
 * 0.9 MB filter each (20,000 addresses, issue 17) cost nothing; 300 subscriptions with the largest
 * filter allowed stay well under 100 MiB; their memory returns after unsubscribing or expiry; and
 * a subscription that is never polled holds at most its cache bound of full blocks.
 */
import { randomBytes } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { FILTER_LIMITS } from '../../src/events/filters.ts'
import type { KeelNode } from '../../src/node.ts'
import { stringifyJson } from '../../src/wire/json.ts'
import { deploy, ok, receiptOf, SUBMIT } from '../helpers/chain.ts'
import { envelope, post, startTestNode } from '../helpers/node.ts'
import { PING_SELECTOR, SAMPLE_CONTRACT } from '../helpers/sample-chain.ts'
import { wallet } from '../helpers/wallet.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const MiB = 2 ** 20
/** RSS after full collections, in MiB */
const rss = (): number => {
  gc()
  gc()
  return process.memoryUsage().rss / MiB
}

const MINUTE = 60_000
let clockMs = 1_000_000
let node: KeelNode
let contract: string
const alice = wallet()

test.before(async () => {
  // Subscriptions live on the chain thread, which is this one; a request thread's garbage (the
  // parsed 60 KiB bodies) is out of reach of this thread's gc(), so requests are served here too
  // (jsonrpc.threads 0) and the RSS shows what the subscriptions hold.
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5 },
      jsonrpc: { threads: 0 },
      genesis: { accounts: [{ address: alice.address, balance: '1000000000' }] },
    },
    { verifyWorkers: 1, events: { nowMs: () => clockMs, sweepEveryMs: 0, cacheBytes: 4 * MiB } },
  )
  contract = (await deploy(node.url, alice, SAMPLE_CONTRACT)).address
})

test.after(async () => {
  await node?.stop()
})

const address = (): string => `0x${randomBytes(20).toString('hex')}`
const topic = (): string => `0x${randomBytes(32).toString('hex')}`
/** one request body sent many times: the client side allocates it once */
const subscribeBody = (filter: unknown): string => stringifyJson(envelope('sub_newEventSubscription', [filter]))
const reply = async (body: string): Promise<{ code: number; message: string; result?: unknown }> =>
  (await post(node.url, body)).body as { code: number; message: string; result?: unknown }

test('100 subscriptions with a 0.9 MB filter (20,000 addresses) are refused with -32602 naming the limit; the node keeps nothing', async () => {
  const body = subscribeBody({ addresses: Array.from({ length: 20_000 }, address) })
  assert.ok(body.length > 900_000)
  const before = rss()
  for (let i = 0; i < 100; i++) {
    const answer = await reply(body)
    assert.is(answer.code, -32602)
    assert.is(answer.message, 'invalid params: a log filter may list at most 1000 addresses; got 20000')
  }
  const growth = rss() - before
  console.log(`    100 refused 0.9 MB filters: RSS ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MiB`)
  assert.ok(growth < 50, `RSS grew by ${growth.toFixed(0)} MiB`)

  const tooManyTopics = await reply(subscribeBody({ topics: [null, null, null, null, null] }))
  assert.is(tooManyTopics.code, -32602)
  assert.match(tooManyTopics.message, /at most 4 topic positions/)
  const tooManyAlternatives = await reply(subscribeBody({ topics: [Array.from({ length: 1001 }, topic)] }))
  assert.is(tooManyAlternatives.message, 'invalid params: a log filter may list at most 1000 alternative topics at one position; got 1001')
  const tooBig = await reply(subscribeBody({ topics: [Array.from({ length: 1000 }, topic)] }))
  assert.match(tooBig.message, /^invalid params: a log filter may be at most 65536 bytes as JSON; got \d+$/)
  const status = await reply(
    stringifyJson(envelope('sub_newSystemStatusSubscription', [{ subtypes: Array.from({ length: 1001 }, (_, i) => `s${i}`) }])),
  )
  assert.is(status.message, 'invalid params: a system status filter may list at most 1000 subtypes; got 1001')
  const statusTooBig = await reply(stringifyJson(envelope('sub_newSystemStatusSubscription', [{ modules: ['x'.repeat(70_000)] }])))
  assert.match(statusTooBig.message, /^invalid params: a system status filter may be at most 65536 bytes as JSON/)
})

test('300 subscriptions with the largest filters allowed stay under 100 MiB; unsubscribing or expiry gives the memory back', async () => {
  // 1000 addresses and 4 topic positions with some alternatives, just under 64 KiB
  const largest = (): string =>
    subscribeBody({
      addresses: Array.from({ length: FILTER_LIMITS.listEntries }, address),
      topics: [Array.from({ length: 100 }, topic), topic(), null, [topic(), topic()]],
    })
  assert.ok(largest().length > 50_000 && largest().length < FILTER_LIMITS.bytes + 100)
  const start = rss()
  const ids: string[] = []
  for (let i = 0; i < 300; i++) {
    const answer = await reply(largest())
    assert.is(answer.code, 0, answer.message)
    ids.push(answer.result as string)
  }
  const held = rss() - start
  // unsubscribe half, let the other half expire
  for (const id of ids.slice(0, 150)) assert.is(await ok(node.url, 'sub_unSubscription', [id]), true)
  clockMs += 5 * MINUTE + 1
  const answer = await reply(subscribeBody({}))
  assert.is(answer.code, 0)
  assert.is((await reply(stringifyJson(envelope('sub_getSubscriptionChanges', [ids[200]])))).code, -32012, 'expired')
  const after = rss() - start
  console.log(
    `    300 subscriptions with ~60 KiB filters: RSS +${held.toFixed(1)} MiB; after unsubscribe and expiry ${after.toFixed(1)} MiB`,
  )
  assert.ok(held < 100, `300 subscriptions hold ${held.toFixed(0)} MiB`)
  assert.ok(after < Math.max(10, held / 2), `${after.toFixed(0)} MiB still held of ${held.toFixed(0)} MiB`)
  await ok(node.url, 'sub_unSubscription', [answer.result])
})

test('a subscription never polled holds at most its byte bound of full blocks, drops the oldest, and says so', async () => {
  const unpolled = (await reply(stringifyJson(envelope('sub_newBlockSubscription', [true])))).result as string
  const watcher = (await reply(stringifyJson(envelope('sub_newSystemStatusSubscription', [{ subtypes: ['overflow'] }])))).result as string
  // ~5 MiB of blocks (calls with 64 KiB of calldata past the selector) against a 4 MiB bound (this node's cacheBytes)
  const calls = Array.from({ length: 40 }, () => alice.invoke(contract, `${PING_SELECTOR}${'00'.repeat(64 * 1024)}`))
  const hashes = await Promise.all(calls.map((tx) => ok<string>(node.url, SUBMIT.invoke, [tx])))
  for (const hash of hashes) assert.is((await receiptOf(node.url, hash)).code, 0)
  const told = (await ok<{ message: string }[]>(node.url, 'sub_getSubscriptionChanges', [watcher])).filter((m) =>
    m.message.includes(unpolled),
  )
  const blocks = await ok<{ transactions: unknown[] }[]>(node.url, 'sub_getSubscriptionChanges', [unpolled])
  const bytes = Buffer.byteLength(stringifyJson(blocks))
  console.log(`    unpolled full-block subscription: holds ${blocks.length} blocks, ${(bytes / MiB).toFixed(1)} MiB`)
  assert.ok(bytes <= 4 * MiB, `${bytes} bytes held`)
  assert.is(told.length, 1)
  assert.match(told[0].message, /its cache of 1000 items or 4194304 bytes is full/)
})

test.run()
