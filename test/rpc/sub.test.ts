/**
 * sub_ handlers against a real node: real signed transactions (a contract that emits `Set`
 * events, failing calls, a time-out) reach polling subscriptions filtered, in order and exactly
 * once; sub_getLogs reads the same logs from the stored receipts; unknown, removed and expired ids
 * answer -32012; the subscription cap answers -32006; system-status include/exclude lists.
 * Expiry runs on the node's injected subscription clock (StartOptions.events.nowMs).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { KeelNode } from '../../src/node.ts'
import {
  artifact,
  deploy,
  fails,
  invoke,
  ok,
  STORE_SOURCE,
  SUBMIT,
  send,
  sleep,
  topic,
  type WireBlock,
  type WireReceipt,
  word,
} from '../helpers/chain.ts'
import { startTestNode } from '../helpers/node.ts'
import { wallet } from '../helpers/wallet.ts'

type WireLog = WireReceipt['log'][number]
interface StatusMessage {
  module: string
  status: boolean
  subType: string
  errorCode: number
  message: string
  date: string
}

const SET_TOPIC = topic('Set(address,uint256)')
const MINUTE = 60_000
const NOT_EXIST = 'required subscription does not existed or has expired'

let node: KeelNode
let url: string
let clockMs = 1_000_000
const alice = wallet()
const bob = wallet()
const poor = wallet()
const store = artifact(STORE_SOURCE, 'Store')
let c1: string
let c2: string

test.before(async () => {
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5, txGasLimit: 1_000_000 },
      genesis: {
        accounts: [
          { address: alice.address, balance: '1000000' },
          { address: bob.address, balance: '1000000' },
          { address: poor.address, balance: '1' },
        ],
      },
    },
    { verifyWorkers: 1, events: { nowMs: () => clockMs, sweepEveryMs: 0 } },
  )
  url = node.url
  c1 = (await deploy(url, alice, store.bin)).address
  c2 = (await deploy(url, bob, store.bin)).address
})

test.after(async () => {
  await node?.stop()
})

const subscribe = (method: string, params: unknown[]): Promise<string> => ok<string>(url, method, params)
const poll = <T = unknown>(id: string): Promise<T[]> => ok<T[]>(url, 'sub_getSubscriptionChanges', [id])

/**
 * Polls until `count` items arrived (a block's event may reach the subscriptions a moment after
 * its receipt is readable), then once more to see that nothing else is pending; every poll's
 * items are kept, so a duplicate across polls shows.
 */
async function collect<T = unknown>(id: string, count: number, timeoutMs = 10_000): Promise<T[]> {
  const items: T[] = []
  const deadline = Date.now() + timeoutMs
  while (items.length < count) {
    items.push(...(await poll<T>(id)))
    if (items.length >= count) break
    if (Date.now() > deadline) throw new Error(`subscription ${id}: ${items.length} of ${count} items after ${timeoutMs} ms`)
    await sleep(10)
  }
  await sleep(30)
  items.push(...(await poll<T>(id)))
  return items
}

const setValue = async (from: typeof alice, contract: string, value: bigint): Promise<WireReceipt> => {
  const { reply } = await invoke(url, from, contract, 'set(uint256)', value)
  assert.is(reply.code, 0, reply.message)
  return reply.result as WireReceipt
}

const logValue = (log: WireLog): bigint => BigInt(`0x${log.data}`)

test('sub_newBlockSubscription: hashes or full blocks of every new block, in order, once; a poll returns only what is new', async () => {
  const hashes = await subscribe('sub_newBlockSubscription', [false])
  const full = await subscribe('sub_newBlockSubscription', [true])
  assert.match(hashes, /^0x[0-9a-f]{32}$/)
  assert.is.not(hashes, full)
  assert.equal(await poll(hashes), [], 'nothing before a new block')

  const receipts: WireReceipt[] = []
  for (const value of [1n, 2n, 3n]) receipts.push(await setValue(alice, c1, value))
  const numbers = receipts.map((receipt) => receipt.log[0].blockNumber)
  const blocks = await Promise.all(numbers.map((number) => ok<WireBlock>(url, 'block_getBlockByNumber', [number])))

  const gotHashes = await collect<string>(hashes, 3)
  assert.equal(
    gotHashes,
    blocks.map((block) => block.hash),
  )
  const gotBlocks = await collect<WireBlock>(full, 3)
  assert.equal(gotBlocks, blocks, 'the full form equals block_getBlockByNumber')
  assert.equal(gotBlocks[0].transactions?.[0].hash, receipts[0].txHash)

  assert.equal(await poll(hashes), [], 'the next poll returns nothing: items are returned once')
  await setValue(alice, c1, 4n)
  const next = await collect<string>(hashes, 1)
  assert.is(next.length, 1, 'only the block written since the previous poll')
  assert.ok(!gotHashes.includes(next[0]))
  for (const id of [hashes, full]) assert.is(await ok(url, 'sub_unSubscription', [id]), true)
})

test('sub_newEventSubscription: addresses, topics with null wildcard and OR lists, block bounds; logs equal the receipts', async () => {
  const head = Number(await ok<string>(url, 'block_getChainHeight'))
  const subs = {
    all: await subscribe('sub_newEventSubscription', []),
    empty: await subscribe('sub_newEventSubscription', [{}]),
    c1: await subscribe('sub_newEventSubscription', [{ addresses: [c1.slice(2).toUpperCase()] }]),
    both: await subscribe('sub_newEventSubscription', [{ addresses: [c1, c2] }]),
    aliceOrBob: await subscribe('sub_newEventSubscription', [
      { topics: [SET_TOPIC, [`0x${word(alice.address)}`, `0x${word(bob.address)}`]] },
    ]),
    bobAnywhere: await subscribe('sub_newEventSubscription', [{ topics: [null, `0x${word(bob.address)}`] }]),
    aliceOnC2: await subscribe('sub_newEventSubscription', [{ addresses: [c2], topics: [[SET_TOPIC], `0x${word(alice.address)}`] }]),
    otherEvent: await subscribe('sub_newEventSubscription', [{ topics: [topic('Other(uint256)')] }]),
    tooManyTopics: await subscribe('sub_newEventSubscription', [{ topics: [null, null, null] }]),
    // only the second and third of the four blocks below
    window: await subscribe('sub_newEventSubscription', [{ fromBlock: head + 2, toBlock: `0x${(head + 3).toString(16)}` }]),
  }

  const receipts = [
    await setValue(alice, c1, 11n),
    await setValue(bob, c1, 12n),
    await setValue(alice, c2, 13n),
    await setValue(bob, c2, 14n),
  ]
  const logs = receipts.map((receipt) => {
    assert.is(receipt.log.length, 1)
    return receipt.log[0]
  })
  assert.equal(
    logs.map((log) => log.blockNumber),
    [head + 1, head + 2, head + 3, head + 4],
    'one block per call',
  )

  const expect = async (id: string, values: bigint[]): Promise<void> => {
    const got = await collect<WireLog>(id, values.length)
    assert.equal(got.map(logValue), values, `subscription ${Object.entries(subs).find(([, sub]) => sub === id)?.[0]}`)
    for (const log of got) assert.equal(log, logs[Number(logValue(log) - 11n)], 'the cached log equals the receipt log')
  }
  await expect(subs.all, [11n, 12n, 13n, 14n])
  await expect(subs.empty, [11n, 12n, 13n, 14n])
  await expect(subs.c1, [11n, 12n])
  await expect(subs.both, [11n, 12n, 13n, 14n])
  await expect(subs.aliceOrBob, [11n, 12n, 13n, 14n])
  await expect(subs.bobAnywhere, [12n, 14n])
  await expect(subs.aliceOnC2, [13n])
  await expect(subs.otherEvent, [])
  await expect(subs.tooManyTopics, [])
  await expect(subs.window, [12n, 13n])

  // sub_getLogs reads the same logs back from the stored receipts
  const range = { fromBlock: head + 1, toBlock: head + 4 }
  assert.equal(await ok(url, 'sub_getLogs', [range]), logs)
  assert.equal(await ok(url, 'sub_getLogs', [{ ...range, addresses: [c1] }]), logs.slice(0, 2))
  assert.equal(await ok(url, 'sub_getLogs', [{ ...range, topics: [null, `0x${word(bob.address)}`] }]), [logs[1], logs[3]])
  assert.equal(await ok(url, 'sub_getLogs', [{ ...range, topics: [[topic('Other(uint256)'), SET_TOPIC], [`0x${word(alice.address)}`]] }]), [
    logs[0],
    logs[2],
  ])
  assert.equal(await ok(url, 'sub_getLogs', [{ fromBlock: head + 2, toBlock: head + 3 }]), logs.slice(1, 3))
  // toBlock is lowered to the head, fromBlock raised to the genesis
  assert.equal(await ok(url, 'sub_getLogs', [{ fromBlock: 0, toBlock: 1_000_000, addresses: [c2] }]), logs.slice(2))
  const latest = Number(await ok<string>(url, 'block_getChainHeight'))
  await fails(url, 'sub_getLogs', [{ fromBlock: latest + 1 }], -32602, `invalid params. current genesis 1, current head ${latest}`)
  await fails(url, 'sub_getLogs', [{ topics: ['0x01'] }], -32602)
  await fails(url, 'sub_newEventSubscription', [{ fromBlock: 10, toBlock: 9 }], -32602, 'invalid params: toBlock 9 is below fromBlock 10')
  for (const id of Object.values(subs)) assert.is(await ok(url, 'sub_unSubscription', [id]), true)
})

test('polls in between transactions: every log exactly once, in order', async () => {
  const id = await subscribe('sub_newEventSubscription', [{ addresses: [c2] }])
  const seen: bigint[] = []
  for (let value = 100n; value < 106n; value++) {
    await setValue(value % 2n === 0n ? alice : bob, c2, value)
    if (value % 2n === 1n) seen.push(...(await poll<WireLog>(id)).map(logValue))
  }
  seen.push(...(await collect<WireLog>(id, 6 - seen.length)).map(logValue))
  assert.equal(seen, [100n, 101n, 102n, 103n, 104n, 105n])
  assert.is(await ok(url, 'sub_unSubscription', [id]), true)
})

test('unknown, removed and expired ids answer -32012; polling keeps a subscription alive', async () => {
  await fails(url, 'sub_getSubscriptionChanges', ['0x00000000000000000000000000000000'], -32012, NOT_EXIST)
  await fails(url, 'sub_unSubscription', ['0x00000000000000000000000000000000'], -32012, NOT_EXIST)

  const removed = await subscribe('sub_newBlockSubscription', [false])
  assert.is(await ok(url, 'sub_unsubscription', [removed]), true, 'the lower-case spelling reaches the same method')
  await fails(url, 'sub_getSubscriptionChanges', [removed], -32012, NOT_EXIST)
  await fails(url, 'sub_unSubscription', [removed], -32012, NOT_EXIST)

  const polled = await subscribe('sub_newBlockSubscription', [false])
  const idle = await subscribe('sub_newSystemStatusSubscription', [])
  clockMs += 4 * MINUTE
  assert.equal(await poll(polled), [])
  clockMs += 4 * MINUTE // 8 minutes after creation, 4 after its last poll
  assert.equal(await poll(polled), [], 'polled within 5 minutes: still active')
  await fails(url, 'sub_getSubscriptionChanges', [idle], -32012, NOT_EXIST)
  await fails(url, 'sub_unSubscription', [idle], -32012, NOT_EXIST)
  clockMs += 5 * MINUTE
  assert.equal(await poll(polled), [], 'exactly 5 minutes idle: still active')
  clockMs += 5 * MINUTE + 1
  await fails(url, 'sub_getSubscriptionChanges', [polled], -32012, NOT_EXIST)
})

test('at most 1000 subscriptions: the next one is -32006 (and a jsonrpc overload status); expired ones free their slots', async () => {
  clockMs += 10 * MINUTE // every earlier subscription has expired
  const watcher = await subscribe('sub_newSystemStatusSubscription', [{ modules: ['jsonrpc'] }])
  const ids = new Set<string>([watcher])
  for (let i = 1; i < 1000; i++) {
    const method = ['sub_newBlockSubscription', 'sub_newEventSubscription', 'sub_newSystemStatusSubscription'][i % 3]
    ids.add(await subscribe(method, method === 'sub_newBlockSubscription' ? [i % 2 === 0] : []))
  }
  assert.is(ids.size, 1000, 'ids are distinct')
  for (const id of ids) assert.match(id, /^0x[0-9a-f]{32}$/)
  const busy = 'too many subscriptions: at most 1000 active'
  await fails(url, 'sub_newBlockSubscription', [true], -32006, busy)
  await fails(url, 'sub_newEventSubscription', [{}], -32006, busy)
  await fails(url, 'sub_newSystemStatusSubscription', [], -32006, busy)

  const overload = { module: 'jsonrpc', status: false, subType: 'overload', errorCode: -32006, message: busy, date: '' }
  const told = await poll<StatusMessage>(watcher)
  assert.equal(
    told.map((message) => ({ ...message, date: '' })),
    [overload],
    'told once when the cap is hit, not once per refusal',
  )

  // removing one frees one slot
  const [first] = [...ids].filter((id) => id !== watcher)
  assert.is(await ok(url, 'sub_unSubscription', [first]), true)
  const again = await subscribe('sub_newBlockSubscription', [false])
  await fails(url, 'sub_newBlockSubscription', [false], -32006, busy)
  assert.equal(
    (await poll<StatusMessage>(watcher)).map((message) => ({ ...message, date: '' })),
    [overload],
    'told again after a slot was free',
  )
  clockMs += 5 * MINUTE + 1
  assert.match(await subscribe('sub_newBlockSubscription', [false]), /^0x[0-9a-f]{32}$/, 'expired subscriptions free their slots')
  await fails(url, 'sub_getSubscriptionChanges', [again], -32012, NOT_EXIST)
})

test('sub_newSystemStatusSubscription: executor failures and time-outs, filtered by include and exclude lists', async () => {
  clockMs += 10 * MINUTE
  const subs = {
    all: await subscribe('sub_newSystemStatusSubscription', []),
    executor: await subscribe('sub_newSystemStatusSubscription', [{ modules: ['executor'] }]),
    notExecutor: await subscribe('sub_newSystemStatusSubscription', [{ modules_exclude: ['executor'] }]),
    // a non-empty include list wins over the exclude list of the same dimension
    includeWins: await subscribe('sub_newSystemStatusSubscription', [{ modules: ['executor'], modules_exclude: ['executor'] }]),
    timeouts: await subscribe('sub_newSystemStatusSubscription', [{ subtypes: ['timeout'] }]),
    invokeFailed: await subscribe('sub_newSystemStatusSubscription', [{ error_codes: [-32005] }]),
    notInvokeFailed: await subscribe('sub_newSystemStatusSubscription', [{ modules: ['executor'], error_codes_exclude: [-32005] }]),
    noFailures: await subscribe('sub_newSystemStatusSubscription', [{ subtypes_exclude: ['failure', 'timeout'] }]),
    consensus: await subscribe('sub_newSystemStatusSubscription', [{ modules: ['consensus'], subtypes: ['viewchange'] }]),
  }

  const failed = await invoke(url, alice, c1, 'fail()')
  assert.is(failed.reply.code, -32005)
  const spun = await invoke(url, alice, c1, 'spin()')
  assert.is(spun.reply.code, -32005)
  const broke = await send(url, SUBMIT.transfer, poor.transfer(alice.address, 1000))
  assert.is(broke.reply.code, -32002)
  await setValue(alice, c1, 7n) // a valid transaction raises nothing

  const all = await collect<StatusMessage>(subs.all, 3)
  assert.equal(
    all.map((m) => [m.module, m.status, m.subType, m.errorCode]),
    [
      ['executor', false, 'failure', -32005],
      ['executor', false, 'timeout', -32005],
      ['executor', false, 'failure', -32002],
    ],
  )
  assert.ok(all[0].message.includes(failed.hash) && all[0].message.includes('INVOKE_CONTRACT_FAILED'), all[0].message)
  assert.ok(all[1].message.includes(spun.hash) && all[1].message.includes('time-out'), all[1].message)
  assert.ok(all[2].message.includes(broke.hash) && all[2].message.includes('OUTOFBALANCE'), all[2].message)
  for (const message of all) {
    assert.match(message.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/)
    assert.ok(Math.abs(Date.parse(message.date) - Date.now()) < 60_000, message.date)
  }

  const kinds = async (id: string): Promise<string[]> => (await poll<StatusMessage>(id)).map((m) => `${m.subType}${m.errorCode}`)
  assert.equal(await kinds(subs.executor), ['failure-32005', 'timeout-32005', 'failure-32002'])
  assert.equal(await kinds(subs.notExecutor), [])
  assert.equal(await kinds(subs.includeWins), ['failure-32005', 'timeout-32005', 'failure-32002'])
  assert.equal(await kinds(subs.timeouts), ['timeout-32005'])
  assert.equal(await kinds(subs.invokeFailed), ['failure-32005', 'timeout-32005'])
  assert.equal(await kinds(subs.notInvokeFailed), ['failure-32002'])
  assert.equal(await kinds(subs.noFailures), [])
  assert.equal(await kinds(subs.consensus), [])
  assert.equal(await kinds(subs.all), [], 'polled once already')
  await fails(url, 'sub_newSystemStatusSubscription', [{ error_codes: ['-1'] }], -32602)
})

test('sub_ params are checked: missing flag, upper-case id, bad topic', async () => {
  await fails(url, 'sub_newBlockSubscription', [], -32602)
  await fails(url, 'sub_getSubscriptionChanges', ['0x4C29B6C3A7C8D0E1F2A3B4C5D6E7F809'], -32602)
  await fails(url, 'sub_newEventSubscription', [{ topics: [null, '0x01'] }], -32602)
  // its events are tested with the archive service, in archive.test.ts
  await fails(url, 'sub_newArchiveSubscription', [{}], -32602, 'too many params: sub_newArchiveSubscription takes 0, got 1')
})

test('sub_getLogs on a chain without blocks: -32011 up to the latest block, -32602 for a numbered range', async () => {
  const empty = await startTestNode({}, { verifyWorkers: 0 })
  try {
    await fails(empty.url, 'sub_getLogs', [{}], -32011, 'There is no block generated!')
    await fails(empty.url, 'sub_getLogs', [], -32011, 'There is no block generated!')
    await fails(empty.url, 'sub_getLogs', [{ toBlock: 'latest' }], -32011, 'There is no block generated!')
    await fails(empty.url, 'sub_getLogs', [{ fromBlock: 2 }], -32602, 'invalid params. current genesis 0, current head 0')
    await fails(empty.url, 'sub_getLogs', [{ fromBlock: 1, toBlock: 2 }], -32602, 'invalid params. current genesis 0, current head 0')
  } finally {
    await empty.stop()
  }
})

test.run()
