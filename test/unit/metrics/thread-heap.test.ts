/**
 * The slots workers write their heap figures into (src/metrics/thread-heap.ts): one name per
 * worker, numbered when several share one, freed for a restarted worker; a slot not yet written is
 * left out. (test/metrics.test.ts reads the figures real workers wrote through GET /metrics.)
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { heapSlotFor, threadHeaps } from '../../../src/metrics/thread-heap.ts'

test('workers of one name are numbered, a freed name is taken again, an unwritten slot is left out', () => {
  const first = heapSlotFor('verify')
  const second = heapSlotFor('verify')
  const third = heapSlotFor('verify')
  // a worker writes used, total and external bytes (what publishThreadHeap does in the worker)
  new Float64Array(first.buffer).set([10, 20, 3])
  new Float64Array(third.buffer).set([11, 21, 4])
  const named = (): string[] => threadHeaps('chain', 'rpc-1/').map((heap) => heap.thread)
  assert.equal(named(), ['chain', 'rpc-1/verify', 'rpc-1/verify 3'])
  assert.equal(
    threadHeaps('chain').find((heap) => heap.thread === 'verify'),
    { thread: 'verify', used: 10, total: 20, external: 3 },
  )
  const own = threadHeaps('chain')[0]
  assert.ok(own.used > 0 && own.total >= own.used, 'this thread reads its own heap')
  // the second worker exited; its restart takes its name
  second.release()
  const restarted = heapSlotFor('verify')
  new Float64Array(restarted.buffer).set([12, 22, 5])
  assert.equal(named(), ['chain', 'rpc-1/verify', 'rpc-1/verify 3', 'rpc-1/verify 2'])
  for (const slot of [first, third, restarted]) slot.release()
  assert.equal(named(), ['chain'])
})

test.run()
