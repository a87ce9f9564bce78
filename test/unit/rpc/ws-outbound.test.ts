/**
 * ws-outbound.ts on a real ws server and a raw client over loopback: what the limits count (the
 * messages still in the socket, not only the queue), no false cut for a burst the kernel takes at
 * once (its write callbacks run a tick later), and the queue flushed again once the reader reads.
 */
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type WebSocket, WebSocketServer } from 'ws'
import { createOutbound, WRITE_HIGH_WATER } from '../../../src/rpc/ws-outbound.ts'
import { RawWsClient } from '../../helpers/raw-ws.ts'

/** a server and a raw client connected to it: the server side's WebSocket and the client */
async function pair(): Promise<{ server: WebSocket; client: RawWsClient; close(): void }> {
  for (const open of opened.splice(0)) open()
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false })
  await new Promise((resolve) => wss.once('listening', resolve))
  const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', resolve))
  const client = await RawWsClient.open(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`)
  const server = await accepted
  const close = (): void => {
    client.destroy()
    server.terminate()
    wss.close()
  }
  opened.push(close)
  return { server, client, close }
}
/** closers of the pairs still open: a failed test leaves its pair to the next one, or to the end */
const opened: (() => void)[] = []
test.after(() => {
  for (const close of opened.splice(0)) close()
})

const message = (i: number): string => JSON.stringify({ i, pad: 'x'.repeat(100) })
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

test('a burst the kernel takes at once is not counted as waiting: 5000 messages in one tick under a limit of 100', async () => {
  const { server, client, close } = await pair()
  const cuts: string[] = []
  const out = createOutbound(server, { maxMessages: 100, maxBytes: 16 * 2 ** 20 }, (why) => cuts.push(why))
  for (let i = 0; i < 5000; i++) out.write(message(i))
  assert.equal(cuts, [])
  await client.until(() => client.messages.length === 5000, 'all 5000 messages')
  assert.equal(
    client.messages.map((m) => (m as { i: number }).i),
    Array.from({ length: 5000 }, (_, i) => i),
  )
  close()
})

test('a paused reader: messages in the socket count towards the limit, the queue is flushed once it reads again', async () => {
  const { server, client, close } = await pair()
  client.pause()
  const cuts: string[] = []
  const out = createOutbound(server, { maxMessages: 1_000_000, maxBytes: 1024 * 2 ** 20 }, (why) => cuts.push(why))
  // fill the kernel's buffers and then the socket's, then queue
  let written = 0
  while (server.bufferedAmount < WRITE_HIGH_WATER && written < 500_000) {
    for (let i = 0; i < 100; i++) out.write(message(written++))
    await turn()
  }
  for (let i = 0; i < 300; i++) out.write(message(written++))
  // the largest frame written (the counter grows): a lower bound on the messages the socket holds
  const frame = message(written).length + 2
  const { messages, bytes } = out.waiting()
  assert.ok(server.bufferedAmount >= WRITE_HIGH_WATER, 'the socket holds what the kernel did not take')
  assert.ok(
    messages >= Math.floor(server.bufferedAmount / frame) + 300 - 1,
    `${messages} waiting for ${server.bufferedAmount} bytes in the socket`,
  )
  assert.ok(bytes >= server.bufferedAmount + 300 * (frame - 2))
  client.resume()
  await client.until(() => client.messages.length === written, `all ${written} messages`, 20_000)
  assert.equal(out.waiting(), { messages: 0, bytes: 0 })
  assert.equal(cuts, [])
  close()
})

test('a paused reader past the message limit is cut off once, the queue dropped, and nothing more is written', async () => {
  const { server, client, close } = await pair()
  client.pause()
  const cuts: string[] = []
  const out = createOutbound(server, { maxMessages: 200, maxBytes: 1024 * 2 ** 20 }, (why) => cuts.push(why))
  let written = 0
  while (!out.cut && written < 500_000) {
    for (let i = 0; i < 100 && !out.cut; i++) out.write(message(written++))
    await turn()
  }
  assert.equal(cuts, ['more than 200 messages waiting to be read'])
  out.write(message(written))
  assert.equal(cuts.length, 1)
  // what is still in the socket, not more: the queue was dropped
  assert.ok(out.waiting().messages <= 201, `${out.waiting().messages} waiting`)
  client.resume()
  await client.until(() => client.messages.length >= written - 201, 'the prefix', 20_000)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const got = client.messages.map((m) => (m as { i: number }).i)
  assert.equal(
    got,
    got.map((_, i) => i),
    'an unbroken prefix',
  )
  close()
})

test('the byte limit counts the socket and the queue', async () => {
  const { server, client, close } = await pair()
  client.pause()
  const cuts: string[] = []
  const out = createOutbound(server, { maxMessages: 1_000_000, maxBytes: 2 * 2 ** 20 }, (why) => cuts.push(why))
  const big = JSON.stringify({ pad: 'y'.repeat(64 * 1024) })
  let written = 0
  while (!out.cut && written < 10_000) {
    out.write(big)
    written++
    if (written % 8 === 0) await turn()
  }
  assert.equal(cuts, ['more than 2097152 bytes waiting to be read'])
  close()
})

test.run()
