/**
 * The cost ledger's split (bench/ledger.ts): a sample goes to the stage of the innermost frame a
 * rule names, generic helpers take their caller's stage, idle samples and samples outside the
 * window count for nothing, and each thread's /proc CPU is divided in its samples' proportion.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { buildLedger, formatLedger, profileSamples } from '../../../bench/ledger.ts'

const frame = (functionName: string, url: string) => ({ functionName, url, scriptId: '0', lineNumber: 0, columnNumber: 0 })

/** root → produce → commitBlock → keccak (generic); root → produce → executeBlock; root → admitOne → recover; idle; GC */
function profile(): object {
  const nodes = [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 6, 8, 9] },
    { id: 2, callFrame: frame('produce', 'file:///keel/dist/src/chain/producer.js'), children: [3, 5] },
    { id: 3, callFrame: frame('commitBlock', 'file:///keel/dist/src/store/index.js'), children: [4] },
    { id: 4, callFrame: frame('keccak256', 'file:///keel/dist/src/crypto/hash.js'), children: [] },
    { id: 5, callFrame: frame('executeBlock', 'file:///keel/dist/src/exec/executor.js'), children: [] },
    { id: 6, callFrame: frame('admitOne', 'file:///keel/dist/src/front/admission-job.js'), children: [7] },
    { id: 7, callFrame: frame('recover', 'file:///keel/dist/src/crypto/secp256k1.js'), children: [] },
    { id: 8, callFrame: frame('(idle)', ''), children: [] },
    { id: 9, callFrame: frame('(garbage collector)', ''), children: [] },
  ]
  // times: startTime 1,000 µs, one sample each 1,000 µs; the last two fall after the window
  const samples = [4, 4, 5, 7, 7, 7, 8, 8, 9, 2, 5, 5]
  return { nodes, startTime: 1_000, endTime: 13_000, samples, timeDeltas: samples.map(() => 1_000) }
}

test('samples go to the innermost named stage; idle and out-of-window samples count for nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-ledger-'))
  writeFileSync(join(dir, 'CPU.20261128.100000.4242.0.001.cpuprofile'), JSON.stringify(profile()))
  writeFileSync(join(dir, 'CPU.20261128.100000.9999.0.001.cpuprofile'), JSON.stringify(profile()))
  // samples stamped 2,000 … 13,000: the window [2,000, 11,000] keeps the first ten
  const [thread, ...others] = profileSamples(dir, 4242, 2_000, 11_000)
  assert.is(others.length, 0, 'another process’s profile is not read')
  assert.is(thread.threadId, 0)
  assert.is(thread.samples, 8, 'ten in the window, two of them idle')
  assert.equal(Object.fromEntries(thread.byStage), { commitEncoding: 3, execution: 1, signature: 3, gc: 1 })

  const ledger = buildLedger([thread], [{ thread: 'main', threadId: 0, lagP99Ms: 0, busy: 1, cpuSeconds: 0.008 }], 0.01, 1000)
  const us = Object.fromEntries(ledger.rows.filter((row) => row.total > 0).map((row) => [row.stage, row.total]))
  // 8 µs of thread CPU per transaction split 3 : 1 : 3 : 1; the process's other 2 µs are the threads without a loop
  assert.equal(us, { signature: 3, execution: 1, commitEncoding: 3, gc: 1 })
  assert.is(ledger.threadsTotal, 8)
  assert.is(ledger.otherThreads, 2)
  assert.is(ledger.sampledUs, 8)
})

test("JSON: a request body's parse is the envelope; a reply's stringify is the reply, a block push's the notification", () => {
  const nodes = [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 4, 7] },
    { id: 2, callFrame: frame('answerBody', 'file:///keel/dist/src/rpc/http.js'), children: [3] },
    { id: 3, callFrame: frame('parseObject', 'file:///keel/dist/sdk/src/json.js'), children: [] },
    { id: 4, callFrame: frame('handleBodyChunks', 'file:///keel/dist/src/rpc/dispatch.js'), children: [5] },
    { id: 5, callFrame: frame('stringifyJsonChunks', 'file:///keel/dist/sdk/src/json.js'), children: [6] },
    { id: 6, callFrame: frame('markedJson', 'file:///keel/dist/sdk/src/json.js'), children: [] },
    { id: 7, callFrame: frame('fullText', 'file:///keel/dist/src/events/block-event.js'), children: [8] },
    { id: 8, callFrame: frame('markedJson', 'file:///keel/dist/sdk/src/json.js'), children: [] },
  ]
  const samples = [3, 3, 6, 8, 8, 8]
  const dir = mkdtempSync(join(tmpdir(), 'keel-ledger-'))
  writeFileSync(
    join(dir, 'CPU.20261128.100000.4243.0.001.cpuprofile'),
    JSON.stringify({ nodes, startTime: 0, endTime: 6_000, samples, timeDeltas: samples.map(() => 1_000) }),
  )
  const [thread] = profileSamples(dir, 4243, 0, 10_000)
  assert.equal(Object.fromEntries(thread.byStage), { envelope: 2, reply: 1, notification: 3 })
})

test('a sample taken over 1.5 ms after the one before is counted late, by stage, and the ledger says how many were', () => {
  const nodes = [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 3] },
    { id: 2, callFrame: frame('postMessage', ''), children: [] },
    { id: 3, callFrame: frame('executeBlock', 'file:///keel/dist/src/exec/executor.js'), children: [] },
  ]
  // the second postMessage sample came 3 ms after the one before: the thread was off its core
  const samples = [2, 2, 3, 3]
  const dir = mkdtempSync(join(tmpdir(), 'keel-ledger-'))
  writeFileSync(
    join(dir, 'CPU.20261128.100000.4244.0.001.cpuprofile'),
    JSON.stringify({ nodes, startTime: 0, endTime: 6_000, samples, timeDeltas: [1_000, 3_000, 1_000, 1_400] }),
  )
  const [thread] = profileSamples(dir, 4244, 0, 10_000)
  assert.equal(Object.fromEntries(thread.lateByStage), { hop: 1 })
  const ledger = buildLedger([thread], [{ thread: 'main', threadId: 0, lagP99Ms: 0, busy: 1, cpuSeconds: 0.004 }], 0.004, 1000)
  assert.equal(Object.fromEntries(ledger.lateness), { hop: { samples: 2, late: 1 }, execution: { samples: 2, late: 0 } })
  assert.match(formatLedger('transfers', ledger, {}), /Samples taken late .*: 25% of all/)
})

test('the messages the threads posted each other are counted per transaction, by thread, and as one per so many transactions', () => {
  const threads = [
    { thread: 'main', threadId: 0, lagP99Ms: 0, busy: 1, cpuSeconds: 0.004, messages: 40 },
    { thread: 'rpc-1 2', threadId: 2, lagP99Ms: 0, busy: 1, cpuSeconds: 0.002, messages: 100 },
    // a thread without CPU figures says nothing about the workload
    { thread: 'node 3', threadId: 3, lagP99Ms: 0, busy: 0, messages: 7 },
  ]
  const ledger = buildLedger([], threads, 0.006, 1000)
  assert.equal(Object.fromEntries(ledger.messages ?? []), { main: 0.04, 'rpc-1 2': 0.1 })
  assert.match(
    formatLedger('transfers', ledger, {}),
    /Messages between threads: 0\.14 per transaction \(main 0\.04, rpc-1 2 0\.10\), one per 7\.1 transactions/,
  )
  // nodes whose monitor did not count messages (an older checkout's) print no such line
  const uncounted = buildLedger([], [{ thread: 'main', threadId: 0, lagP99Ms: 0, busy: 1, cpuSeconds: 0.004 }], 0.004, 1000)
  assert.is(uncounted.messages, undefined)
  assert.not.match(formatLedger('transfers', uncounted, {}), /Messages between threads/)
})

test.run()
