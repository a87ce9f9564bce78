/**
 * The state hasher: lanes hashed on a worker equal lanes hashed in this thread; a worker that
 * cannot start or dies mid-job leaves the work to this thread; a store's root through the hasher
 * equals its root in-thread.
 */
import { randomBytes } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openStore } from '../../../src/store/index.ts'
import { EntryKind } from '../../../src/store/state-codec.ts'
import { changeLanes, type LaneChange } from '../../../src/store/state-hash.ts'
import { createStateHasher } from '../../../src/store/state-hasher.ts'
import { addr, changes, commitNext, tempDir, word } from './fixtures.ts'

const dir = tempDir('state-hasher')
test.after(() => rmSync(dir, { recursive: true, force: true }))

const someChanges = (count: number): LaneChange[] =>
  Array.from({ length: count }, (_, i) => ({
    kind: EntryKind.account,
    key: randomBytes(20),
    old: i % 3 === 0 ? undefined : randomBytes(40),
    next: i % 5 === 0 ? undefined : randomBytes(40),
  }))

test('a worker computes the same lanes as this thread', async () => {
  const hasher = await createStateHasher({ worker: true })
  try {
    assert.is(hasher.mode, 'worker')
    const batch = someChanges(300)
    const [a, b] = await Promise.all([hasher.changeLanes(batch), hasher.changeLanes(batch.slice(0, 7))])
    assert.equal([...a], [...changeLanes(batch)])
    assert.equal([...b], [...changeLanes(batch.slice(0, 7))])
    assert.ok(a.some((lane) => lane !== 0))
  } finally {
    await hasher.close()
  }
})

test('no worker wanted, or none that starts: the same lanes in this thread', async () => {
  const batch = someChanges(20)
  const off = await createStateHasher({ worker: false })
  assert.is(off.mode, 'in-thread')
  assert.equal([...(await off.changeLanes(batch))], [...changeLanes(batch)])
  const missing = await createStateHasher({
    worker: true,
    workerFile: pathToFileURL(join(dir, 'no-such-worker.mjs')),
    startTimeoutMs: 2000,
  })
  assert.is(missing.mode, 'in-thread')
  assert.equal([...(await missing.changeLanes(batch))], [...changeLanes(batch)])
})

test('in this thread a large job gives the event loop turns while it hashes', async () => {
  // issue 27: a node of one thread hashes every block here, between its admissions
  const hasher = await createStateHasher({ worker: false })
  try {
    const batch = someChanges(2000)
    let turnRan = false
    let turnBeforeAnswer = false
    const lanes = hasher.changeLanes(batch).then((answer) => {
      turnBeforeAnswer = turnRan
      return answer
    })
    setImmediate(() => {
      turnRan = true
    })
    assert.equal([...(await lanes)], [...changeLanes(batch)])
    assert.ok(turnBeforeAnswer, 'the job held the thread until it was done')
  } finally {
    await hasher.close()
  }
})

test('a worker that dies with a job in hand: the job is done in this thread, later ones too', async () => {
  const dying = join(dir, 'dying-worker.mjs')
  writeFileSync(
    dying,
    "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', () => process.exit(3))\nparentPort.postMessage({ ready: true })\n",
  )
  const hasher = await createStateHasher({ worker: true, workerFile: pathToFileURL(dying) })
  assert.is(hasher.mode, 'worker')
  const batch = someChanges(10)
  assert.equal([...(await hasher.changeLanes(batch))], [...changeLanes(batch)])
  assert.is(hasher.mode, 'in-thread')
  assert.equal([...(await hasher.changeLanes(batch))], [...changeLanes(batch)])
  await hasher.close()
})

test("a store's root through a worker equals its root in this thread", async () => {
  const store = await openStore(join(dir, 'ledger'))
  const hasher = await createStateHasher({ worker: true })
  try {
    await commitNext(store, { changes: changes({ accounts: [[addr('x'), { balance: 5n, nonce: 0n }]] }) })
    const next = changes({ accounts: [[addr('y'), { balance: 9n, nonce: 1n }]], storage: [[addr('x'), [[word(1), word(2)]]]] })
    assert.is(await store.stateRootAfterOn(hasher, next), store.stateRootAfter(next))
  } finally {
    await hasher.close()
    await store.close()
  }
})

test.run()
