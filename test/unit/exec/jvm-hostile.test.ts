/**
 * Issue 26 part 1: a hostile contract author cannot fork or stall a network. Each case of
 * test/helpers/hostile-jvm.ts runs twice on one executor child (src/exec/jvm/child.ts), which is
 * stopped and replaced by a new one between the two runs: both must end the same way at the same step (the
 * outcome a node on another machine, or this one after a restart, reaches), and the wall-clock
 * safety net must never be what ended a call. The classes that would keep state outside the ledger
 * or do unmetered work are refused at load, before and after a restart alike. The allocation-heavy
 * calls end the same way, at the same step, on the smallest heap the executor accepts and on a
 * large one, and after a restart.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { JvmCallResult, JvmCode, JvmExecutor } from '../../../src/exec/jvm/child.ts'
import { createJvmExecutor } from '../../../src/exec/jvm/child.ts'
import { createLogger } from '../../../src/log.ts'
import {
  ALLOCATION_CASES,
  compileHostile,
  compileRefused,
  HOSTILE_CASES,
  type HostileCase,
  REFUSED_SOURCES,
} from '../../helpers/hostile-jvm.ts'

let executor: JvmExecutor
let hostile: JvmCode
let refused: Map<string, JvmCode>
const HASH = '0x686f7374696c6500'
const log = createLogger({ level: 'silent' })
// short enough that a call escaping the budget shows quickly as a wall-clock stop (which must not happen)
const options = { log, callTimeoutMs: 4_000 }

async function run(on: JvmExecutor, method: string, args: string[]): Promise<JvmCallResult> {
  return on.call({
    hash: HASH,
    code: () => hostile,
    method,
    args: { form: 'strings', args },
    ctx: { sender: '0x01', origin: '0x01', extra: '', self: '0x02', txHash: '0x03', blockNumber: '1', timestamp: '1' },
    steps: 10_000_000,
    read: () => undefined,
    callee: () => ({ error: 'no cross-contract calls here' }),
  })
}

/** wall-clock stops of the executors stopped so far */
let earlierStops = 0

/**
 * A new executor child in place of the running one (stopped, not killed: a killed child is replaced
 * after a back-off that grows with each death). The new one loads the code when a call needs it.
 */
async function restart(): Promise<void> {
  const pid = executor.pid()
  assert.ok(pid !== undefined, 'an executor runs')
  earlierStops += executor.wallClockStops()
  await executor.stop()
  executor = createJvmExecutor(options)
}

const comparable = (r: JvmCallResult) =>
  r.ok
    ? { ok: true, ret: Buffer.from(r.ret).toString('utf8'), steps: r.steps }
    : { ok: false, kind: r.kind, error: r.error, steps: r.steps }

function check(c: HostileCase, r: JvmCallResult): void {
  if ('ret' in c.expect) {
    assert.ok(r.ok, `${c.name}: ${JSON.stringify(comparable(r))}`)
    assert.is(Buffer.from(r.ok ? r.ret : new Uint8Array()).toString('utf8'), c.expect.ret, c.name)
  } else {
    assert.not.ok(r.ok, `${c.name} fails`)
    if (r.ok) return
    assert.is(r.kind, c.expect.kind, `${c.name}: ${r.error}`)
    assert.match(r.error, c.expect.error, c.name)
  }
}

test.before(async () => {
  ;[hostile, refused] = await Promise.all([compileHostile(), compileRefused()])
  executor = createJvmExecutor(options)
  const loaded = await executor.load(HASH, hostile)
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.error)
})

test.after(async () => {
  await executor?.stop()
})

for (const c of HOSTILE_CASES) {
  test(`${c.name}: the same outcome and steps before and after an executor restart`, async () => {
    const first = await run(executor, c.method, c.args)
    check(c, first)
    await restart()
    const second = await run(executor, c.method, c.args)
    assert.equal(comparable(second), comparable(first), `${c.name}: identical after the restart`)
    // and once more on the same child: a call leaves nothing behind for the next
    const third = await run(executor, c.method, c.args)
    assert.equal(comparable(third), comparable(first), `${c.name}: identical on a second call`)
  })
}

for (const [main, { reason }] of Object.entries(REFUSED_SOURCES)) {
  test(`${main} is refused at load, before and after an executor restart`, async () => {
    const code = refused.get(main) as JvmCode
    const hash = `0x${Buffer.from(main).toString('hex').slice(0, 16).padEnd(16, '0')}`
    const first = await executor.load(hash, code)
    assert.not.ok(first.ok, `${main} loads`)
    assert.match(first.ok ? '' : first.error, reason)
    await restart()
    const second = await executor.load(hash, code)
    assert.equal(second, first)
  })
}

test('allocation-heavy calls end alike on the smallest heap the executor accepts and on a large one, and after a restart', async () => {
  // heapMiB 64 is below the floor (docs/jvm.md §5): the executor runs with the floor itself
  let small = createJvmExecutor({ ...options, heapMiB: 64 })
  const large = createJvmExecutor({ ...options, heapMiB: 2048 })
  try {
    assert.ok((await small.load(HASH, hostile)).ok)
    assert.ok((await large.load(HASH, hostile)).ok)
    for (const c of ALLOCATION_CASES) {
      const onSmall = await run(small, c.method, c.args)
      check(c, onSmall)
      assert.equal(comparable(await run(large, c.method, c.args)), comparable(onSmall), `${c.name}: the large heap agrees`)
      assert.equal(comparable(await run(small, c.method, c.args)), comparable(onSmall), `${c.name}: a second call agrees`)
    }
    earlierStops += small.wallClockStops()
    await small.stop()
    small = createJvmExecutor({ ...options, heapMiB: 64 })
    for (const c of ALLOCATION_CASES) check(c, await run(small, c.method, c.args))
    assert.is(small.wallClockStops() + large.wallClockStops(), 0)
  } finally {
    await small.stop()
    await large.stop()
  }
})

test('the wall-clock safety net stopped no call', () => {
  assert.is(earlierStops + executor.wallClockStops(), 0)
})

test.run()
