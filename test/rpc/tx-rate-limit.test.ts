/**
 * The admission rate limit against a burst (reliability battery A30): a node admitting 50
 * transactions per second with bursts of 100 receives 500 signed transfers at once. Some are
 * refused with -32006 saying the limit and when to retry; every accepted one commits, exactly
 * once; none refused leaves a trace; after the wait the message names, the node admits again.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import { call, ok, receiptOf, SUBMIT, sleep, submit } from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

const PER_SECOND = 50
const BURST = 100
let node: KeelNode
let dev: Wallet

test.before(async () => {
  node = await startTestNode({ chain: { txRatePerSecond: PER_SECOND, txRateBurst: BURST, batchTimeoutMs: 20 } }, { verifyWorkers: 1 })
  dev = wallet(node.devAccount?.privateKey)
})

test.after(async () => {
  await node.stop()
})

test('500 transfers in a burst: about the burst admitted, the rest -32006; each admitted one commits once, no refused one leaves a trace', async () => {
  const receivers = Array.from({ length: 500 }, () => wallet().address)
  const txs = receivers.map((to) => dev.transfer(to, 7))
  const started = performance.now()
  const replies = await Promise.all(txs.map((tx) => call<string>(node.url, SUBMIT.transfer, [tx])))
  const elapsedSeconds = (performance.now() - started) / 1000

  const admitted = replies.flatMap((reply, index) => (reply.code === 0 ? [{ hash: reply.result as string, to: receivers[index] }] : []))
  const refused = replies.flatMap((reply, index) => (reply.code === 0 ? [] : [{ reply, to: receivers[index] }]))
  for (const { reply } of refused) {
    assert.is(reply.code, -32006, `a refusal is -32006: ${reply.message}`)
    assert.match(reply.message, /admits 50 transactions per second with bursts of 100 .*retry in \d+ ms/)
  }
  assert.ok(admitted.length >= BURST, `the burst is admitted (${admitted.length})`)
  assert.ok(refused.length > 0, 'some are refused')
  // the bucket holds BURST and gains PER_SECOND each second: no more can have been admitted
  assert.ok(
    admitted.length <= BURST + Math.ceil(PER_SECOND * elapsedSeconds) + 1,
    `${admitted.length} admitted in ${elapsedSeconds.toFixed(2)} s`,
  )

  for (const { hash } of admitted) assert.is((await receiptOf(node.url, hash)).code, 0, `${hash} commits`)
  for (const { to } of admitted) assert.is(await ok(node.url, 'account_getBalance', [to]), '0x7', 'received once')
  for (const { to } of refused.slice(0, 50)) {
    assert.is((await call(node.url, 'account_getBalance', [to])).code, -32009, 'a refused transfer paid nobody')
  }
  const counted = await ok<{ count: string }>(node.url, 'tx_getTransactionsCount', [])
  assert.is(BigInt(counted.count), BigInt(admitted.length), 'exactly the admitted transactions are in the chain')
})

test('after the wait the refusal names, the node admits again', async () => {
  const first = await call(node.url, SUBMIT.transfer, [dev.transfer(wallet().address, 1)])
  if (first.code === -32006) {
    const retryMs = Number(/retry in (\d+) ms/.exec(first.message)?.[1])
    assert.ok(retryMs > 0 && retryMs <= 1000 / PER_SECOND, `retry in ${retryMs} ms`)
    await sleep(retryMs + 5)
  }
  const hash = await submit(node.url, SUBMIT.transfer, dev.transfer(wallet().address, 1))
  assert.is((await receiptOf(node.url, hash)).code, 0)
})

test.run()
