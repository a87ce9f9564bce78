/**
 * Crash consistency of archive_archive and archive_restore (reliability.md F2; src/archive/service.ts):
 * the node runs as a child process with the test-only batch delay on, so that an operation spans
 * seconds; it is SIGKILLed while it writes the archive file, while it removes archived blocks,
 * and while it writes them back. After each restart on the same data directory every block is
 * either wholly archived or wholly live, the replies of live blocks are byte for byte those from
 * before, and the interrupted operation is rolled back (before its marker) or completed (after).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'lmdb'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type NodeProcess, startNodeProcess, writeNodeConfig } from '../src/devnet/node-process.ts'
import { Keyspace } from '../src/store/keyspace.ts'
import { stringifyJson } from '../src/wire/json.ts'
import { operatorHeadersFor } from './helpers/chain.ts'
import { envelope, post } from './helpers/node.ts'
import { wallet } from './helpers/wallet.ts'

const BLOCKS = 30
/** the snapshot is taken at this block: blocks 1..SNAPSHOT_AT-1 are archived */
const SNAPSHOT_AT = 24
const BATCH_BLOCKS = 2
const BATCH_DELAY_MS = 150

const workDir = mkdtempSync(join(tmpdir(), 'keel-archive-crash-'))
const dataDir = join(workDir, 'data')
const configFile = join(workDir, 'keel.toml')
const ledger = join(dataDir, 'global', 'ledger')
const archiveDir = join(dataDir, 'global', 'archive')
const sender = wallet()
const receiver = wallet().address

let node: NodeProcess | undefined
let snapshotId: string
/** requested for block BLOCKS + 1 before the crashes: the request must survive them */
let futureId: string
/** raw replies before any archive: block n, and each tx and receipt by hash */
const before = new Map<string, string>()
const txOfBlock = new Map<number, string>()

interface Reply {
  code: number
  message: string
  result?: unknown
}

const hex = (n: number): string => `0x${n.toString(16)}`
const raw = async (method: string, params: unknown[] = []): Promise<string> => (await post(node!.url, envelope(method, params))).text
/** archive_snapshot, _archive, _restore, _restoreAll and _deleteSnapshot are operator methods: signed by the genesis account (the admin) */
const rpc = async (method: string, params: unknown[] = []): Promise<Reply> => {
  const body = stringifyJson(envelope(method, params))
  const headers = /^archive_(snapshot|archive|restore|restoreAll|deleteSnapshot)$/.test(method)
    ? operatorHeadersFor(body, sender.privateKey)
    : {}
  return (await post(node!.url, body, { headers })).body as Reply
}
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

async function start(): Promise<string[]> {
  const lines: string[] = []
  node = await startNodeProcess({ configFile, onOutput: (text) => lines.push(...text.split('\n')) })
  return lines
}

/** Starts the operation, SIGKILLs the node at the first log line matching `when`, restarts; the restart's output. */
async function killAt(when: RegExp, operation: () => Promise<Reply>): Promise<string[]> {
  let seen = false
  const watched = node!
  const deadline = Date.now() + 30_000
  const reply = await operation()
  assert.is(reply.code, 0, reply.message)
  await until(`a log line matching ${when}`, async () => {
    seen = watched
      .output()
      .split('\n')
      .some((line) => when.test(line))
    return seen || Date.now() > deadline
  })
  assert.ok(seen, `${when} was logged:\n${watched.output().slice(-2000)}`)
  const exit = await watched.kill('SIGKILL')
  assert.is(exit.signal, 'SIGKILL')
  return start()
}

/** Every block is wholly live (same replies as before) below `genesis` none is visible, and no half block exists on disk. */
async function assertConsistent(genesis: number): Promise<void> {
  assert.is((await rpc('block_getGenesisBlock')).result, hex(genesis))
  assert.is((await rpc('block_getChainHeight')).result, hex(BLOCKS))
  for (let n = 1; n <= BLOCKS; n++) {
    const tx = txOfBlock.get(n)!
    if (n < genesis) {
      const block = await rpc('block_getBlockByNumber', [n])
      assert.is(block.code, -32001, `block ${n} is archived`)
      assert.is(block.message, `Not found block number ${hex(n)}`)
      const found = await rpc('tx_getTransactionByHash', [tx])
      assert.is(found.code, -32001)
      assert.match(found.message, `its block ${hex(n)} was archived with snapshot ${snapshotId}`)
    } else {
      assert.is(await raw('block_getBlockByNumber', [n]), before.get(`block ${n}`), `block ${n} reads as before`)
      assert.is(await raw('tx_getTransactionByHash', [tx]), before.get(`tx ${tx}`), `tx of block ${n}`)
      assert.is(await raw('tx_getTransactionReceipt', [tx]), before.get(`receipt ${tx}`), `receipt of block ${n}`)
    }
  }
}

test.before(async () => {
  writeNodeConfig(configFile, {
    dataDir,
    batchSize: 1,
    batchTimeoutMs: 1,
    genesis: [{ address: sender.address, balance: 10n ** 12n }],
    archive: { batchBlocks: BATCH_BLOCKS, testBatchDelayMs: BATCH_DELAY_MS },
  })
  await start()
})

test.after(async () => {
  await node?.kill('SIGKILL')
  rmSync(workDir, { recursive: true, force: true })
})

test(`a chain of ${BLOCKS} blocks and a snapshot at block ${SNAPSHOT_AT}`, async () => {
  for (let n = 1; n <= BLOCKS; n++) {
    const sent = await rpc('tx_sendTransaction', [sender.transfer(receiver, n)])
    assert.is(sent.code, 0, sent.message)
    await until(`block ${n}`, async () => (await rpc('tx_getTransactionReceipt', [sent.result])).code === 0)
    await until(`height ${n}`, async () => (await rpc('block_getChainHeight')).result === hex(n))
    txOfBlock.set(n, sent.result as string)
    if (n === SNAPSHOT_AT) {
      snapshotId = (await rpc('archive_snapshot', [0])).result as string
      await until('the snapshot', async () => (await rpc('archive_querySnapshotExist', [snapshotId])).result === true)
    }
  }
  futureId = (await rpc('archive_snapshot', [BLOCKS + 1])).result as string
  assert.match(futureId, /^0x[0-9a-f]{32}$/)
  for (let n = 1; n <= BLOCKS; n++) {
    const tx = txOfBlock.get(n)!
    before.set(`block ${n}`, await raw('block_getBlockByNumber', [n]))
    before.set(`tx ${tx}`, await raw('tx_getTransactionByHash', [tx]))
    before.set(`receipt ${tx}`, await raw('tx_getTransactionReceipt', [tx]))
  }
})

test('kill -9 while the archive file is written: rolled back, nothing archived, the file removed', async () => {
  const restart = await killAt(/blocks written to the file/, () => rpc('archive_archive', [snapshotId, false]))
  assert.ok(
    restart.some((line) => /removing .*\.arc(\.[\w-]+\.tmp)?: left by an archive or restore that did not complete/.test(line)),
    'the partial file is removed at start',
  )
  assert.equal(readdirSync(archiveDir), [])
  assert.is((await rpc('archive_queryArchiveExist', [snapshotId])).result, false)
  await assertConsistent(1)
})

test('kill -9 while archived blocks are removed: completed at restart', async () => {
  const restart = await killAt(/archive 0x[0-9a-f]{32}: \d+ of \d+ blocks \(/, async () => {
    const started = await rpc('archive_archive', [snapshotId, false])
    // one archive or restore at a time, and a snapshot being archived cannot go
    const busy = `the archive of snapshot ${snapshotId} is running; try again when it has finished`
    for (const [method, params] of [
      ['archive_restoreAll', [true]],
      ['archive_archive', [snapshotId, true]],
      ['archive_deleteSnapshot', [snapshotId]],
    ] as const) {
      const reply = await rpc(method, [...params])
      assert.is(reply.code, -32013, method)
      assert.is(reply.message, busy, method)
    }
    return started
  })
  assert.ok(
    restart.some((line) => line.includes(`completing the interrupted archive of snapshot ${snapshotId}`)),
    'recovery completes the archive',
  )
  assert.is((await rpc('archive_queryArchiveExist', [snapshotId])).result, true)
  await assertConsistent(SNAPSHOT_AT)
  assert.ok(existsSync(join(archiveDir, `${snapshotId}.arc`)))
})

test('kill -9 while archived blocks are written back: the restore completes at restart', async () => {
  const restart = await killAt(/restore 0x[0-9a-f]{32}: \d+ of \d+ blocks \(/, () => rpc('archive_restore', [snapshotId, false]))
  assert.ok(
    restart.some((line) => line.includes(`completing the interrupted restore of snapshot ${snapshotId}`)),
    'recovery completes the restore',
  )
  assert.is((await rpc('archive_queryArchiveExist', [snapshotId])).result, false)
  await assertConsistent(1)
  assert.equal(readdirSync(archiveDir), [], 'the archive file goes once restored')
})

test('after the crashes the operations still work: archive again, new blocks, the snapshot requested before the crashes, and the stopped store holds no archived entry', async () => {
  const archived = await rpc('archive_archive', [snapshotId, true])
  assert.is(archived.code, 0, archived.message)
  await assertConsistent(SNAPSHOT_AT)
  const sent = await rpc('tx_sendTransaction', [sender.transfer(receiver, 1)])
  await until('a new block', async () => (await rpc('block_getChainHeight')).result === hex(BLOCKS + 1))
  assert.is((await rpc('tx_getTransactionReceipt', [sent.result])).code, 0)
  await until(
    'the snapshot requested before the crashes',
    async () => (await rpc('archive_querySnapshotExist', [futureId])).result === true,
  )
  const manifests = (await rpc('archive_listSnapshot')).result as { filterId: string; height: number }[]
  assert.equal(
    manifests.map((m) => [m.filterId, m.height]),
    [
      [snapshotId, SNAPSHOT_AT],
      [futureId, BLOCKS + 1],
    ],
  )
  assert.is((await rpc('archive_checkSnapshot', [futureId])).result, true)
  await node!.kill('SIGTERM')
  node = undefined

  const env = open({ path: ledger, maxDbs: 64 })
  try {
    const blocks = env.openDB({ name: String(Keyspace.blocks), keyEncoding: 'uint32' })
    const txs = env.openDB({ name: String(Keyspace.txs), keyEncoding: 'binary', encoding: 'binary' })
    const receipts = env.openDB({ name: String(Keyspace.receipts), keyEncoding: 'binary', encoding: 'binary' })
    const archivedTxs = env.openDB({ name: String(Keyspace.archivedTxs), keyEncoding: 'binary', encoding: 'binary' })
    const numbers = [...blocks.getKeys()] as number[]
    assert.equal(
      numbers,
      Array.from({ length: BLOCKS + 2 - SNAPSHOT_AT }, (_, i) => SNAPSHOT_AT + i),
      'only the live blocks are in the store',
    )
    for (let n = 1; n <= BLOCKS; n++) {
      const key = Buffer.from(txOfBlock.get(n)!.slice(2), 'hex')
      const archived = n < SNAPSHOT_AT
      assert.is(txs.doesExist(key), !archived, `tx of block ${n}`)
      assert.is(receipts.doesExist(key), !archived, `receipt of block ${n}`)
      assert.is(archivedTxs.doesExist(key), archived, `archived mark of block ${n}`)
    }
  } finally {
    await env.close()
  }
})

test.run()
