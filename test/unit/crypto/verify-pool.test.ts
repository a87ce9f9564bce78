import { readdirSync, readFileSync } from 'node:fs'
import { getPriority } from 'node:os'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { signStringCandidates, type TxFields } from '../../../src/crypto/sign-string.ts'
import { signSecp256k1, signSm2 } from '../../../src/crypto/signature.ts'
import { createVerifyClient, createVerifyPool, type VerifyItem } from '../../../src/crypto/verify-pool.ts'
import { createLogger } from '../../../src/log.ts'
import { manualDeploy, SDK_ADDRESS, SDK_PRIVATE_KEY, sm2Sdk } from './vectors.ts'

/** A mixed batch: SDK-format txs (valid, tampered, wrong signer), an SM2 tx, a 2017 legacy one, garbage. */
function mixedBatch(): { items: VerifyItem<string>[]; expected: boolean[] } {
  const items: VerifyItem<string>[] = []
  const expected: boolean[] = []
  for (let i = 0; i < 30; i++) {
    const tx: TxFields = {
      from: SDK_ADDRESS,
      to: '0x3434343434343434343434343434343434343434',
      value: i,
      type: 'TRANSFER',
      opcode: 0,
      timestamp: 1700000000000000000n + BigInt(i),
      nonce: 1000000000000000 + i,
      gasPrice: 0,
      gasLimit: 1000000000,
      expirationTimestamp: 1700000300000000000n + BigInt(i),
      version: '4.1',
    }
    const signature = signSecp256k1(signStringCandidates(tx)[0], SDK_PRIVATE_KEY, { lowS: false })
    const kind = i % 3
    if (kind === 0) items.push({ id: `ok-${i}`, tx, signature })
    if (kind === 1) items.push({ id: `tampered-${i}`, tx: { ...tx, value: i + 1 }, signature })
    if (kind === 2) items.push({ id: `wrong-from-${i}`, tx: { ...tx, from: sm2Sdk.address }, signature })
    expected.push(kind === 0)
  }
  const sm2Tx: TxFields = { from: sm2Sdk.address, to: SDK_ADDRESS, value: 7, timestamp: 1n, nonce: 2n }
  items.push({ id: 'sm2', tx: sm2Tx, signature: signSm2(signStringCandidates(sm2Tx)[0], sm2Sdk.privateKey) })
  expected.push(true)
  items.push({ id: 'manual-legacy', tx: manualDeploy.tx, signature: manualDeploy.signature })
  expected.push(true)
  items.push({ id: 'garbage', tx: manualDeploy.tx, signature: 'zz' })
  expected.push(false)
  items.push({ id: 'bad-flag', tx: manualDeploy.tx, signature: `0x02${manualDeploy.flaggedSignature.slice(4)}` })
  expected.push(false)
  return { items, expected }
}

const batch = mixedBatch()

test('worker pool: a mixed batch gets the right booleans, in order, ids kept', async () => {
  const pool = await createVerifyPool({ workers: 2, chunkSize: 8 })
  try {
    assert.is(pool.mode, 'workers')
    assert.is(pool.workerCount, 2)
    assert.is(pool.backend, 'native')
    const results = await pool.verify(batch.items)
    assert.equal(
      results.map((result) => result.id),
      batch.items.map((item) => item.id),
    )
    assert.equal(
      results.map((result) => result.valid),
      batch.expected,
    )
    // concurrent batches do not mix up
    const [a, b] = await Promise.all([pool.verify(batch.items.slice(0, 10)), pool.verify(batch.items.slice(10))])
    assert.equal([...a, ...b], results)
    assert.equal(await pool.verify([]), [])
  } finally {
    await pool.close()
  }
  const afterClose = await pool.verify(batch.items).then(
    () => 'resolved',
    (error: Error) => error.message,
  )
  assert.is(afterClose, 'verify pool is closed')
})

/** nice value of each thread of this process (field 19 of /proc/self/task/<tid>/stat) */
function threadNiceness(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
  })
}

test('the workers run below the threads that start them (workers/start.ts runAsBulkThread)', async () => {
  const own = getPriority()
  const before = threadNiceness().filter((nice) => nice > own).length
  const pool = await createVerifyPool({ workers: 2 })
  try {
    const lowered = threadNiceness().filter((nice) => nice === Math.min(19, own + 8)).length
    assert.ok(lowered - before >= 2, `two more threads at nice ${own + 8}, found ${lowered - before}`)
    assert.ok(getPriority() === own, 'the starting thread keeps its priority')
  } finally {
    await pool.close()
  }
})

test('in-thread pool (workers: 0) gives the same answers', async () => {
  const pool = await createVerifyPool({ workers: 0 })
  assert.is(pool.mode, 'in-thread')
  assert.is(pool.workerCount, 0)
  const results = await pool.verify(batch.items)
  assert.equal(
    results.map((result) => result.valid),
    batch.expected,
  )
  await pool.close()
})

test('in-thread pool: batches are verified first come first served, in turns of the event loop', async () => {
  // issue 27: a node of one thread verifies here; each waiting batch used to get 64 items a turn,
  // so every batch finished in the same turn, late, and a block waited behind all of them
  const pool = await createVerifyPool({ workers: 0 })
  const many = (copies: number): VerifyItem<string>[] => Array.from({ length: copies }, () => batch.items).flat()
  const events: string[] = []
  const first = pool.verify(many(4)).then((results) => {
    events.push('first answered')
    // a turn of the event loop that begins after the first batch's answer
    setImmediate(() => events.push('a later turn'))
    return results
  })
  const second = pool.verify(many(8)).then((results) => {
    events.push('second answered')
    return results
  })
  const [a, b] = await Promise.all([first, second])
  assert.equal(events, ['first answered', 'a later turn', 'second answered'])
  assert.equal(
    b.map((result) => result.valid),
    Array.from({ length: 8 }, () => batch.expected).flat(),
  )
  assert.is(a.length, batch.items.length * 4)
  await pool.close()
})

test('fallback: when no worker can start, the pool verifies in this thread', async () => {
  const pool = await createVerifyPool({ workers: 2, workerFile: new URL('./no-such-worker.ts', import.meta.url), startTimeoutMs: 5000 })
  assert.is(pool.mode, 'in-thread')
  const results = await pool.verify(batch.items)
  assert.equal(
    results.map((result) => result.valid),
    batch.expected,
  )
  await pool.close()
})

test('the node version reaches the workers (format B without a JSON version)', async () => {
  const tx: TxFields = { from: SDK_ADDRESS, to: SDK_ADDRESS, value: 1, timestamp: 1, nonce: 1, type: 'EVM' }
  // signed as a client that learnt version 2.5 from the node and sends none
  const signString = signStringCandidates(tx, { nodeVersion: '2.5' }).find((candidate) => candidate.includes('&version=2.5&'))!
  const signature = signSecp256k1(signString, SDK_PRIVATE_KEY)
  const pool = await createVerifyPool({ workers: 1, nodeVersion: '2.5' })
  const other = await createVerifyPool({ workers: 1 })
  try {
    assert.equal(await pool.verify([{ id: 1, tx, signature }]), [{ id: 1, valid: true }])
    assert.equal(await other.verify([{ id: 1, tx, signature }]), [{ id: 1, valid: false }])
  } finally {
    await pool.close()
    await other.close()
  }
})

test('a worker that dies is restarted after a back-off, and a client in another thread gets a port to its replacement (onWorker)', async () => {
  const lines: string[] = []
  // the worker copies this environment when it starts; its replacement starts after it is gone
  process.env.KEEL_FAILPOINTS = 'verify.worker=throw'
  const pool = await createVerifyPool({ workers: 1, log: createLogger({ level: 'info', write: (line) => lines.push(line) }) })
  delete process.env.KEEL_FAILPOINTS
  const client = createVerifyClient(pool.connect(), { backend: pool.backend })
  pool.onWorker((port) => client.addPort(port))
  try {
    assert.is(client.workerCount, 1)
    const { items, expected } = mixedBatch()
    // the worker dies on this job: the job is verified here instead, the answers unchanged
    assert.equal(
      (await client.verify(items)).map((r) => r.valid),
      expected,
    )
    const deadline = Date.now() + 30_000
    while (!lines.some((line) => line.includes('a verify worker restarted')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20))
    assert.ok(
      lines.some((line) => /a verify worker stopped unexpectedly \(exit code 1: failpoint verify\.worker/.test(line)),
      lines.join('\n'),
    )
    assert.ok(
      lines.some((line) => line.includes('a verify worker restarted (restart 1)')),
      lines.join('\n'),
    )
    while (client.workerCount === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.is(pool.workerCount, 1)
    assert.is(client.workerCount, 1, 'the client verifies on the replacement')
    assert.equal(
      (await client.verify(items)).map((r) => r.valid),
      expected,
    )
  } finally {
    delete process.env.KEEL_FAILPOINTS
    await client.close()
    await pool.close()
  }
})

test.run()
