/**
 * WebSocket on the JSON-RPC port against a real node: ordinary methods answer as over HTTP; real
 * signed transactions (the `Store` contract emits `Set`) reach push subscriptions filtered, in
 * order and exactly once; blocks by hash and in full; system status; unsubscribe; the limits of
 * reliability.md part B (-32012, -32006 for the 11th subscription, close 1009 for a big frame,
 * HTTP 503 for the 101st connection) and a reader that stops reading: cut off with close 1008,
 * the node's memory bounded, other connections still served.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import WebSocket from 'ws'
import type { KeelNode } from '../../src/node.ts'
import { parseJson, stringifyJson } from '../../src/wire/json.ts'
import { Arrivals } from '../helpers/arrivals.ts'
import {
  artifact,
  call,
  deploy,
  fails,
  invoke,
  ok,
  STORE_SOURCE,
  sleep,
  topic,
  type WireBlock,
  type WireReceipt,
  word,
} from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

type WireLog = WireReceipt['log'][number]
interface Envelope {
  jsonrpc: string
  namespace?: string
  id?: unknown
  code?: number
  message?: string
  result?: unknown
  method?: string
  params?: { subscription: string; result: unknown }
}

const SET_TOPIC = topic('Set(address,uint256)')

let node: KeelNode
let url: string
let wsUrl: string
const alice = wallet()
const bob = wallet()
const store = artifact(STORE_SOURCE, 'Store')
let c1: string
let c2: string

/** A WebSocket client that keeps every message, answers requests by id and collects pushes per subscription. */
class Client {
  readonly messages: Envelope[] = []
  readonly closed: Promise<{ code: number; reason: string }>
  private nextId = 1
  private readonly arrivals = new Arrivals()

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.messages.push(parseJson(data.toString('utf8'), { maxDepth: 512 }) as unknown as Envelope)
      this.arrivals.wake()
    })
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  }

  static open(target = wsUrl): Promise<Client> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(target)
      const client = new Client(ws)
      ws.once('open', () => resolve(client))
      ws.once('error', reject)
    })
  }

  /** resolves when `predicate` holds over the messages received so far */
  until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return this.arrivals.until(predicate, what, timeoutMs)
  }

  sendRaw(text: string | Buffer): void {
    this.ws.send(text)
  }

  async request(method: string, params?: unknown[]): Promise<Envelope> {
    const id = this.nextId++
    this.sendRaw(stringifyJson({ jsonrpc: '2.0', namespace: 'global', id, method, ...(params === undefined ? {} : { params }) }))
    const find = (): Envelope | undefined => this.messages.find((m) => m.id === id)
    await this.until(() => find() !== undefined, `the reply to ${method}`)
    return find() as Envelope
  }

  async ok<T = unknown>(method: string, params?: unknown[]): Promise<T> {
    const reply = await this.request(method, params)
    assert.is(reply.code, 0, `${method}: ${reply.message}`)
    return reply.result as T
  }

  async fails(method: string, params: unknown[], code: number, message?: string | RegExp): Promise<void> {
    const reply = await this.request(method, params)
    assert.is(reply.code, code, `${method}: ${reply.message}`)
    assert.not.ok('result' in reply)
    if (typeof message === 'string') assert.is(reply.message, message)
    else if (message !== undefined) assert.match(reply.message as string, message)
  }

  subscribe(kind: string, arg?: unknown): Promise<string> {
    return this.ok<string>('sub_subscribe', arg === undefined ? [kind] : [kind, arg])
  }

  pushed<T = unknown>(subscription: string): T[] {
    return this.messages
      .filter((m) => m.method === 'sub_subscription' && m.params?.subscription === subscription)
      .map((m) => m.params?.result as T)
  }

  /** waits for `count` pushes to `subscription`, then a little longer to see that no more come */
  async collect<T = unknown>(subscription: string, count: number): Promise<T[]> {
    await this.until(() => this.pushed(subscription).length >= count, `${count} pushes to ${subscription}`)
    await sleep(50)
    return this.pushed<T>(subscription)
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close()
    return this.closed
  }
}

test.before(async () => {
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5, txGasLimit: 1_000_000 },
      // short HTTP deadlines: a WebSocket connection must outlive them
      jsonrpc: { headersTimeoutMs: 500, requestTimeoutMs: 800, keepAliveTimeoutMs: 200 },
      genesis: {
        accounts: [
          { address: alice.address, balance: '1000000' },
          { address: bob.address, balance: '1000000' },
        ],
      },
    },
    { verifyWorkers: 1 },
  )
  url = node.url
  wsUrl = url.replace(/^http/, 'ws')
  c1 = (await deploy(url, alice, store.bin)).address
  c2 = (await deploy(url, bob, store.bin)).address
})

test.after(async () => {
  await node?.stop()
})

const setValue = async (from: typeof alice, contract: string, value: bigint): Promise<WireReceipt> => {
  const { reply } = await invoke(url, from, contract, 'set(uint256)', value)
  assert.is(reply.code, 0, reply.message)
  return reply.result as WireReceipt
}
const logValue = (log: WireLog): bigint => BigInt(`0x${log.data}`)

test('ordinary methods over WebSocket answer exactly as over HTTP; WebSocket-only methods are refused over HTTP and in batches', async () => {
  const client = await Client.open(`${wsUrl}/any/path`)
  const height = await client.request('block_getChainHeight')
  assert.equal(height, await call(url, 'block_getChainHeight'))
  const latest = await client.ok<WireBlock>('block_latestBlock')
  assert.equal(latest, await ok<WireBlock>(url, 'block_latestBlock'))
  assert.equal({ ...(await client.request('tx_noSuchMethod')), id: 1 }, await call(url, 'tx_noSuchMethod'))
  // an operator method needs the signed headers of an HTTP request: over WebSocket it is refused, as unsigned over HTTP
  const operator = await Client.open(wsUrl)
  const snapshot = await operator.request('archive_snapshot', [0])
  assert.is(snapshot.code, -32008)
  assert.match(snapshot.message ?? '', /^archive_snapshot is an operator method .*over HTTP/)
  await operator.close()

  client.sendRaw(
    stringifyJson([
      { jsonrpc: '2.0', id: 'a', method: 'block_getChainHeight' },
      { jsonrpc: '2.0', id: 'b', method: 'node_getNodeHash' },
    ]),
  )
  await client.until(() => client.messages.length === 4, 'the batch reply')
  const batch = client.messages[3] as unknown as Envelope[]
  assert.equal(
    batch.map((m) => [m.id, m.code]),
    [
      ['a', 0],
      ['b', 0],
    ],
  )

  client.sendRaw('{"jsonrpc":"2.0","id":1,')
  await client.until(() => client.messages.length === 5, 'the parse error')
  assert.is(client.messages[4].code, -32700)
  client.sendRaw(stringifyJson([{ jsonrpc: '2.0', id: 1, method: 'sub_subscribe', params: ['block'] }]))
  await client.until(() => client.messages.length === 6, 'the batch refusal')
  assert.is(client.messages[5].code, -32600)
  assert.match(client.messages[5].message as string, /cannot be sent in a batch/)
  // malformed envelopes of the WebSocket methods get the dispatcher's envelope errors
  client.sendRaw(stringifyJson({ jsonrpc: '2.0', method: 'sub_subscribe', params: ['block'] }))
  await client.until(() => client.messages.length === 7, 'the missing-id refusal')
  assert.is(client.messages[6].code, -32600)
  const host = new URL(url).host
  await fails(
    url,
    'sub_subscribe',
    ['block', false],
    -32601,
    `The method sub_subscribe is served only over WebSocket: open ws://${host}/ and send it there, alone`,
  )
  await fails(url, 'sub_unsubscribe', ['0x00000000000000000000000000000000'], -32601, /sub_unsubscribe is served only over WebSocket/)
  await client.close()
})

test('a WebSocket connection outlives the HTTP header and request deadlines', async () => {
  const client = await Client.open()
  const id = await client.subscribe('block')
  await sleep(2000)
  await setValue(alice, c1, 5n)
  await client.collect(id, 1)
  assert.ok(await client.ok('block_getChainHeight'))
  await client.close()
})

test('block push: hashes and full blocks of each new block, in order, exactly once', async () => {
  const client = await Client.open()
  const hashes = await client.subscribe('block', false)
  const full = await client.subscribe('block', true)
  const bare = await client.subscribe('block')
  assert.match(hashes, /^0x[0-9a-f]{32}$/)
  assert.is.not(hashes, full)

  const receipts: WireReceipt[] = []
  for (const value of [1n, 2n, 3n]) receipts.push(await setValue(alice, c1, value))
  const blocks = await Promise.all(receipts.map((r) => ok<WireBlock>(url, 'block_getBlockByNumber', [r.log[0].blockNumber])))

  assert.equal(
    await client.collect<string>(hashes, 3),
    blocks.map((block) => block.hash),
  )
  assert.equal(
    await client.collect<string>(bare, 3),
    blocks.map((block) => block.hash),
    'isVerbose defaults to false',
  )
  const gotBlocks = await client.collect<WireBlock>(full, 3)
  assert.equal(gotBlocks, blocks, 'the verbose form equals block_getBlockByNumber')
  assert.is(gotBlocks[0].transactions?.[0].hash, receipts[0].txHash)

  const notification = client.messages.find((m) => m.method === 'sub_subscription') as Envelope
  assert.equal(Object.keys(notification), ['jsonrpc', 'namespace', 'method', 'params'])
  assert.is(notification.namespace, 'global')
  assert.equal(Object.keys(notification.params as object), ['subscription', 'result'])
  await client.close()
})

test('logs push: addresses, topics with null wildcard and OR lists, block bounds; logs equal the receipts, in order, exactly once', async () => {
  const head = Number(await ok<string>(url, 'block_getChainHeight'))
  const first = await Client.open()
  const second = await Client.open()
  const subs = {
    all: await first.subscribe('logs'),
    empty: await first.subscribe('logs', {}),
    c1: await first.subscribe('logs', { addresses: [c1.slice(2).toUpperCase()] }),
    aliceOrBob: await first.subscribe('logs', { topics: [SET_TOPIC, [`0x${word(alice.address)}`, `0x${word(bob.address)}`]] }),
    bobAnywhere: await first.subscribe('logs', { topics: [null, `0x${word(bob.address)}`] }),
    aliceOnC2: await second.subscribe('logs', { addresses: [c2], topics: [[SET_TOPIC], `0x${word(alice.address)}`] }),
    otherEvent: await second.subscribe('logs', { topics: [topic('Other(uint256)')] }),
    tooManyTopics: await second.subscribe('logs', { topics: [null, null, null] }),
    window: await second.subscribe('logs', { fromBlock: head + 2, toBlock: `0x${(head + 3).toString(16)}` }),
  }
  const clientOf = (id: string): Client => (Object.values(subs).indexOf(id) < 5 ? first : second)

  const receipts = [
    await setValue(alice, c1, 11n),
    await setValue(bob, c1, 12n),
    await setValue(alice, c2, 13n),
    await setValue(bob, c2, 14n),
  ]
  const logs = receipts.map((receipt) => receipt.log[0])
  assert.equal(
    logs.map((log) => log.blockNumber),
    [head + 1, head + 2, head + 3, head + 4],
    'one block per call',
  )

  const expect = async (name: keyof typeof subs, values: bigint[]): Promise<void> => {
    const got = await clientOf(subs[name]).collect<WireLog>(subs[name], values.length)
    assert.equal(got.map(logValue), values, `subscription ${name}`)
    for (const log of got) assert.equal(log, logs[Number(logValue(log) - 11n)], 'the pushed log equals the receipt log')
  }
  await expect('all', [11n, 12n, 13n, 14n])
  await expect('empty', [11n, 12n, 13n, 14n])
  await expect('c1', [11n, 12n])
  await expect('aliceOrBob', [11n, 12n, 13n, 14n])
  await expect('bobAnywhere', [12n, 14n])
  await expect('aliceOnC2', [13n])
  await expect('otherEvent', [])
  await expect('tooManyTopics', [])
  await expect('window', [12n, 13n])

  // many transactions in flight at once: every log still arrives once, in chain order
  const burst = Array.from({ length: 20 }, (_, i) => 200n + BigInt(i))
  const sent = await Promise.all(burst.map((value) => setValue(value % 2n === 0n ? alice : bob, c2, value)))
  const chainOrder = sent
    .map((receipt) => receipt.log[0])
    .sort((a, b) => a.blockNumber - b.blockNumber || a.txIndex - b.txIndex)
    .map(logValue)
  const got = (await first.collect<WireLog>(subs.all, 4 + burst.length)).slice(4).map(logValue)
  assert.equal(got, chainOrder)
  assert.equal(
    [...got].sort((a, b) => Number(a - b)),
    burst,
    'each exactly once',
  )

  await first.fails('sub_subscribe', ['logs', { fromBlock: 10, toBlock: 9 }], -32602, 'invalid params: toBlock 9 is below fromBlock 10')
  await first.fails('sub_subscribe', ['logs', { topics: ['0x01'] }], -32602)
  // the bounds of a filter a subscription keeps (src/events/filters.ts)
  const many = Array.from({ length: 1001 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`)
  await first.fails(
    'sub_subscribe',
    ['logs', { addresses: many }],
    -32602,
    'invalid params: a log filter may list at most 1000 addresses; got 1001',
  )
  await first.fails('sub_subscribe', ['systemStatus', { modules: many }], -32602, /at most 1000 modules; got 1001/)
  await first.close()
  await second.close()
})

test('systemStatus push: executor failures through include lists; other kinds are refused', async () => {
  const client = await Client.open()
  const executor = await client.subscribe('systemStatus', { modules: ['executor'] })
  const none = await client.subscribe('systemStatus', { modules: ['consensus'] })
  const failed = await invoke(url, alice, c1, 'fail()')
  assert.is(failed.reply.code, -32005)
  const [message] = await client.collect<{
    module: string
    status: boolean
    subType: string
    errorCode: number
    message: string
    date: string
  }>(executor, 1)
  assert.equal([message.module, message.status, message.subType, message.errorCode], ['executor', false, 'failure', -32005])
  assert.ok(message.message.includes(failed.hash), message.message)
  assert.match(message.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/)
  assert.equal(client.pushed(none), [])
  await client.fails('sub_subscribe', ['systemStatus', { error_codes: ['-1'] }], -32602)
  await client.fails('sub_subscribe', ['archive'], -32602, /must be "block", "logs" or "systemStatus"/)
  await client.fails('sub_subscribe', [], -32602)
  await client.fails('sub_subscribe', ['block', 'yes'], -32602)
  await client.close()
})

test('sub_unsubscribe: true, then nothing more is pushed; unknown ids and ids of another connection → -32012', async () => {
  const client = await Client.open()
  const other = await Client.open()
  const kept = await client.subscribe('block', false)
  const dropped = await client.subscribe('block', false)
  const foreign = await other.subscribe('block', false)
  await setValue(alice, c1, 21n)
  await client.collect(dropped, 1)
  assert.is(await client.ok('sub_unsubscribe', [dropped]), true)
  await setValue(alice, c1, 22n)
  assert.is((await client.collect(kept, 2)).length, 2)
  assert.is(client.pushed(dropped).length, 1, 'nothing after sub_unsubscribe')
  await client.fails('sub_unsubscribe', [dropped], -32012, 'subscription not found')
  await client.fails('sub_unsubscribe', ['0x00000000000000000000000000000000'], -32012, 'subscription not found')
  await client.fails('sub_unsubscribe', [foreign], -32012, 'subscription not found')
  await client.fails('sub_unsubscribe', [], -32602)
  assert.is(await other.ok('sub_unsubscribe', [foreign]), true)
  await client.close()
  await other.close()
})

test('at most 10 subscriptions per connection: the 11th → -32006; unsubscribing frees a slot', async () => {
  const client = await Client.open()
  const ids = new Set<string>()
  for (let i = 0; i < 10; i++) ids.add(await client.subscribe(['block', 'logs', 'systemStatus'][i % 3]))
  assert.is(ids.size, 10)
  await client.fails('sub_subscribe', ['block', true], -32006, 'too many subscriptions on this connection: at most 10')
  await client.fails('sub_subscribe', ['logs', {}], -32006)
  const other = await Client.open()
  assert.match(await other.subscribe('block'), /^0x[0-9a-f]{32}$/, 'the limit is per connection')
  assert.is(await client.ok('sub_unsubscribe', [[...ids][0]]), true)
  assert.match(await client.subscribe('block'), /^0x[0-9a-f]{32}$/)
  await client.close()
  await other.close()
})

test('a message over 1 MiB closes the connection with 1009; one just under is answered', async () => {
  const client = await Client.open()
  const filler = (size: number): string => {
    const head = '{"jsonrpc":"2.0","id":7,"method":"block_getChainHeight","params":[],"pad":"'
    return `${head}${'x'.repeat(size - head.length - 2)}"}`
  }
  client.sendRaw(filler(1024 * 1024))
  await client.until(() => client.messages.some((m) => m.id === 7), 'the reply to a 1 MiB message')
  client.sendRaw(filler(1024 * 1024 + 1))
  const closed = await client.closed
  assert.is(closed.code, 1009)
  assert.ok(await ok(url, 'block_getChainHeight'), 'the node still serves')
})

test('at most 100 connections: the 101st upgrade → HTTP 503 with a -32006 envelope; a closed connection frees its slot', async () => {
  const clients: Client[] = []
  for (let i = 0; i < 100; i++) clients.push(await Client.open())
  try {
    const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(wsUrl)
      ws.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      })
      ws.on('open', () => reject(new Error('the 101st connection was accepted')))
      ws.on('error', () => undefined)
    })
    assert.is(refused.status, 503)
    const envelope = JSON.parse(refused.body) as Envelope
    assert.is(envelope.code, -32006)
    assert.is(envelope.message, 'too many WebSocket connections: at most 100')
    assert.ok(await ok(url, 'block_getChainHeight'), 'HTTP is still served')
    await (clients.pop() as Client).close()
    const again = await Client.open()
    assert.ok(await again.ok('block_getChainHeight'))
    await again.close()
  } finally {
    await Promise.all(clients.map((client) => client.close()))
  }
})

test('a reader that stops reading is cut off (close 1008) after 1000 queued messages; memory stays bounded; others are served', async () => {
  const slow = await Client.open()
  const good = await Client.open()
  const flooded = await slow.subscribe('systemStatus', { subtypes: ['flood'] })
  const watch = await good.subscribe('systemStatus', { subtypes: ['slowConsumer', 'marker'] })
  const blocks = await good.subscribe('block', false)
  slow.ws.pause()

  const pad = 'x'.repeat(10_000)
  const total = 40_000 // 400 MB of notifications if nothing bounded them
  const rssBefore = process.memoryUsage().rss
  let rssPeak = rssBefore
  for (let i = 0; i < total; i++) {
    node.events.publishStatus({ module: 'jsonrpc', status: true, subType: 'flood', errorCode: 0, message: `${i} ${pad}` })
    if (i % 100 === 99) {
      await new Promise((resolve) => setImmediate(resolve))
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
    }
  }
  const growth = (rssPeak - rssBefore) / 2 ** 20
  assert.ok(growth < 150, `RSS grew by ${growth.toFixed(0)} MiB`)

  // the node told the others, and still serves them
  await good.until(() => good.pushed(watch).length >= 1, 'the slowConsumer status')
  const [told] = good.pushed<{ module: string; subType: string; errorCode: number; message: string }>(watch)
  assert.equal([told.module, told.subType, told.errorCode], ['jsonrpc', 'slowConsumer', -32006])
  assert.match(told.message, /more than 1000 messages waiting to be read; 1 subscription\(s\) released/)
  node.events.publishStatus({ module: 'jsonrpc', status: true, subType: 'marker', errorCode: 0, message: 'after the flood' })
  await good.until(() => good.pushed(watch).length >= 2, 'the marker')
  await setValue(alice, c1, 31n)
  await good.collect(blocks, 1)
  assert.ok(await good.ok('block_getChainHeight'))

  // the slow reader, reading again, finds an unbroken prefix of its stream, then the close
  slow.ws.resume()
  const closed = await slow.closed
  assert.is(closed.code, 1008)
  assert.match(closed.reason, /^slow consumer: more than 1000 messages waiting to be read/)
  const got = slow.pushed<{ message: string }>(flooded).map((m) => Number(m.message.split(' ')[0]))
  assert.ok(got.length > 0 && got.length < total, `${got.length} delivered`)
  assert.equal(
    got,
    got.map((_, i) => i),
    'in order, without gaps or repeats',
  )
  console.log(`    slow reader: ${got.length} of ${total} notifications delivered before the cut; peak RSS growth ${growth.toFixed(0)} MiB`)
  await good.close()
})

test.run()
