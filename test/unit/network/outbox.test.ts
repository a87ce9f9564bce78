import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createOutbox } from '../../../src/network/outbox.ts'

/** a storage whose writes complete when the test says so */
function manualStorage() {
  const pending: { writes: string[]; done(): void; fail(error: Error): void }[] = []
  const durable: string[] = []
  return {
    durable,
    pending,
    persist: (writes: string[]) =>
      new Promise<void>((resolve, reject) => {
        pending.push({
          writes,
          done: () => {
            durable.push(...writes)
            resolve()
          },
          fail: reject,
        })
      }),
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

test('a send waits for every write issued before it; sends with nothing unwritten ahead go at once', async () => {
  const storage = manualStorage()
  const sent: string[] = []
  const outbox = createOutbox<string, string>({
    persist: storage.persist,
    transmit: (message) => sent.push(`${message} after [${storage.durable.join(',')}]`),
    fail: () => assert.unreachable('no write fails here'),
  })
  outbox.send('hello')
  await Promise.resolve()
  assert.equal(sent, ['hello after []'], 'out as soon as the issuing handler returned')
  outbox.write('vote v1 n1')
  outbox.write('view 1')
  outbox.send('prepare n1')
  outbox.write('commit n1')
  outbox.send('commit n1')
  await tick()
  assert.equal(sent.length, 1, 'nothing goes out before the writes are durable')
  assert.equal(outbox.backlog(), { writes: 3, sends: 2 })
  assert.equal(storage.pending.length, 1)
  assert.equal(storage.pending[0].writes, ['vote v1 n1', 'view 1'], 'writes issued together are gathered into one')
  storage.pending[0].done()
  await tick()
  assert.equal(sent, ['hello after []', 'prepare n1 after [vote v1 n1,view 1]'])
  assert.equal(storage.pending.length, 2, 'the next write starts only after the earlier sends went out')
  storage.pending[1].done()
  await outbox.drained()
  assert.equal(sent.at(-1), 'commit n1 after [vote v1 n1,view 1,commit n1]')
  assert.equal(outbox.backlog(), { writes: 0, sends: 0 })
})

test('after a failed write nothing behind it is sent, and the failure is reported once', async () => {
  const storage = manualStorage()
  const sent: string[] = []
  const failures: unknown[] = []
  const outbox = createOutbox<string, string>({ persist: storage.persist, transmit: (m) => sent.push(m), fail: (e) => failures.push(e) })
  outbox.write('vote')
  outbox.send('prepare')
  await tick()
  storage.pending[0].fail(new Error('ENOSPC'))
  await outbox.drained()
  outbox.send('later')
  outbox.write('later write')
  await tick()
  assert.equal(sent, [])
  assert.is(failures.length, 1)
  assert.match(String(failures[0]), /ENOSPC/)
  assert.is(storage.pending.length, 1, 'no write is attempted after the failure')
})

test.run()
