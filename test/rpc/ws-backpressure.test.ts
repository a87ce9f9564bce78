/**
 * WebSocket back-pressure against a reader that really stops reading (a raw socket, paused), while
 * real blocks are pushed on 10 subscriptions (README "Push over WebSocket"): a reader that falls
 * behind by less than the limits is served everything, in order, once it reads again, and a request
 * it sent meanwhile is answered; one that falls further behind is cut off with close 1008 after an
 * unbroken prefix of its stream, and the close frame still reaches it after a pause of several
 * seconds. Either way a request is answered or the connection is closed, never left in silence.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import { deploy, heightNow as height, ok, SUBMIT, sleep, waitForHeight } from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { RawWsClient } from '../helpers/raw-ws.ts'
import { PING_SELECTOR, SAMPLE_CONTRACT } from '../helpers/sample-chain.ts'
import { wallet } from '../helpers/wallet.ts'

const BLOCK_TXS = 100
const SUBSCRIPTIONS = 10
/** calldata bytes past the selector (ignored by the contract): ~4 KiB of hex per transaction in a full block */
const PADDING = 2048
const alice = wallet()
let node: KeelNode
let wsUrl: string
let contract: string

test.before(async () => {
  // a block is cut when BLOCK_TXS transactions are ready, or a second after the first arrived
  node = await startTestNode(
    {
      chain: { batchSize: BLOCK_TXS, batchTimeoutMs: 1000 },
      genesis: { accounts: [{ address: alice.address, balance: '1000000000000' }] },
    },
    { verifyWorkers: 1 },
  )
  wsUrl = node.url.replace(/^http/, 'ws')
  contract = (await deploy(node.url, alice, SAMPLE_CONTRACT)).address
})

test.after(async () => {
  await node?.stop()
})

/**
 * `blocks` blocks of BLOCK_TXS contract calls with PADDING bytes of calldata each: a full block is
 * ~0.45 MB, ~4.5 MB for 10 subscriptions
 */
async function pushBlocks(blocks: number): Promise<void> {
  const start = await height(node.url)
  for (let block = 0; block < blocks; block++) {
    const calls = Array.from({ length: BLOCK_TXS }, () => alice.invoke(contract, `${PING_SELECTOR}${'00'.repeat(PADDING)}`))
    await Promise.all(calls.map((tx) => ok(node.url, SUBMIT.invoke, [tx])))
    await waitForHeight(node.url, start + block + 1, 30_000)
  }
}

/** a raw client with SUBSCRIPTIONS full-block subscriptions */
async function subscribed(): Promise<{ client: RawWsClient; ids: string[] }> {
  const client = await RawWsClient.open(wsUrl)
  const ids: string[] = []
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const reply = await client.request('sub_subscribe', ['block', true])
    assert.is(reply.code, 0, reply.message)
    ids.push(reply.result as string)
  }
  return { client, ids }
}

const numbers = (client: RawWsClient, id: string): number[] => client.pushed<{ number: string }>(id).map((block) => Number(block.number))
const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i)

test('a reader paused while ~13 MiB of blocks are pushed gets all of them, in order, and the answer to its request once it reads again', async () => {
  const { client, ids } = await subscribed()
  const start = await height(node.url)
  client.pause()
  const blocks = 3
  await pushBlocks(blocks)
  const asked = client.send('block_getChainHeight')
  await sleep(1000)
  client.resume()
  await client.until(() => client.reply(asked) !== undefined, 'the reply to the request sent while paused', 30_000)
  const reply = client.reply(asked)
  assert.is(reply?.code, 0)
  assert.is(Number(reply?.result), start + blocks)
  for (const id of ids) assert.equal(numbers(client, id), range(start + 1, blocks), `subscription ${id}: every block once, in order`)
  assert.is(client.closeFrame, undefined)
  // more than the kernel's buffers hold (about 4 MiB on loopback): Keel's own queue was in use
  assert.ok(client.textBytes > 8 * 2 ** 20, `${client.textBytes} bytes pushed`)
  console.log(`    paused reader: ${blocks * SUBSCRIPTIONS} notifications, ${(client.textBytes / 2 ** 20).toFixed(1)} MiB, all delivered`)
  client.destroy()
})

test('a reader paused while more than 16 MiB is pushed is cut off with 1008 after an unbroken prefix; the close frame waits for it', async () => {
  const watcher = await RawWsClient.open(wsUrl)
  const watch = (await watcher.request('sub_subscribe', ['systemStatus', { subtypes: ['slowConsumer'] }])).result as string
  const { client, ids } = await subscribed()
  const start = await height(node.url)
  client.pause()
  const blocks = 6
  await pushBlocks(blocks)
  const asked = client.send('block_getChainHeight')
  // the node told the others, and serves them
  await watcher.until(() => watcher.pushed(watch).length > 0, 'the slowConsumer status')
  const [told] = watcher.pushed<{ message: string }>(watch)
  assert.match(told.message, /more than 16777216 bytes waiting to be read; 10 subscription\(s\) released/)
  assert.is((await watcher.request('block_getChainHeight')).code, 0)
  // longer than a reader used to get before its socket was dropped without a close frame
  await sleep(6000)
  client.resume()
  await client.until(() => client.closeFrame !== undefined || client.ended, 'the close frame', 30_000)
  assert.equal(client.closeFrame?.code, 1008)
  assert.match(client.closeFrame?.reason ?? '', /^slow consumer: more than 16777216 bytes waiting to be read/)
  // answered or closed, never silence: here the answer was dropped with the queue, and the connection closed
  assert.ok(client.reply(asked) !== undefined || client.closeFrame !== undefined)
  let delivered = 0
  for (const id of ids) {
    const got = numbers(client, id)
    assert.equal(got, range(start + 1, got.length), `subscription ${id}: a prefix, without gaps or repeats`)
    delivered += got.length
  }
  assert.ok(delivered < blocks * SUBSCRIPTIONS, `${delivered} delivered`)
  await client.until(() => client.ended, 'the end of the connection', 10_000)
  console.log(
    `    cut-off reader: ${delivered} of ${blocks * SUBSCRIPTIONS} notifications (${(client.textBytes / 2 ** 20).toFixed(1)} MiB) before the close`,
  )
  watcher.destroy()
})

test.run()
