/**
 * The admission rate limit's token bucket ([chain] txRatePerSecond, txRateBurst) on a clock the
 * test moves, and the config checks of its two keys.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createRateLimit } from '../../../src/chain/rate-limit.ts'
import { resolveConfig } from '../../../src/config.ts'

const clock = () => {
  let ms = 1_000
  return {
    now: () => ms,
    advance(by: number): void {
      ms += by
    },
  }
}

/** how many takes succeed in a row right now */
const drain = (limit: { take(): void }): number => {
  let taken = 0
  for (;;) {
    try {
      limit.take()
      taken++
    } catch (error) {
      assert.is((error as { code?: number }).code, -32006)
      return taken
    }
  }
}

test('off at 0 transactions per second', () => {
  assert.is(createRateLimit({ perSecond: 0, burst: 100 }), undefined)
})

test('a burst of txRateBurst, then txRatePerSecond as time passes, never more than the burst', () => {
  const time = clock()
  const limit = createRateLimit({ perSecond: 50, burst: 100, now: time.now })
  assert.ok(limit)
  assert.is(drain(limit), 100)
  time.advance(100)
  assert.is(drain(limit), 5, '100 ms at 50/s')
  time.advance(10)
  assert.is(drain(limit), 0, 'half a token is not a token')
  time.advance(10)
  assert.is(drain(limit), 1, 'the halves add up')
  time.advance(60_000)
  assert.is(drain(limit), 100, 'a long quiet spell refills up to the burst only')
})

test('burst 0 means one second of the rate; the refusal says the limit and when to retry', () => {
  const time = clock()
  const limit = createRateLimit({ perSecond: 20, burst: 0, now: time.now })
  assert.ok(limit)
  assert.is(drain(limit), 20)
  try {
    limit.take()
    assert.unreachable('the 21st take is refused')
  } catch (error) {
    const message = (error as Error).message
    assert.match(message, /^System is too busy to response/)
    assert.match(message, /20 transactions per second with bursts of 20/)
    assert.match(message, /txRatePerSecond, txRateBurst/)
    assert.match(message, /retry in 50 ms/)
  }
})

test('config: the two keys default to 0 and refuse negative numbers', () => {
  const config = resolveConfig()
  assert.is(config.chain.txRatePerSecond, 0)
  assert.is(config.chain.txRateBurst, 0)
  assert.is(resolveConfig({ chain: { txRatePerSecond: 12.5, txRateBurst: 40 } }).chain.txRatePerSecond, 12.5)
  assert.throws(() => resolveConfig({ chain: { txRatePerSecond: -1 } }), /chain\.txRatePerSecond must be 0 or more/)
  assert.throws(() => resolveConfig({ chain: { txRateBurst: Number.NaN } }), /chain\.txRateBurst must be 0 or more/)
})

test.run()
