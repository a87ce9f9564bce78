/**
 * The compiler pool (src/compile/solc-pool.ts) with real solc releases in real worker threads:
 * one worker per release in use, unloaded when idle; the queue bound (-32006), the compile time
 * limit, a node without compilers and closing.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createSolcPool, NO_COMPILER } from '../../../src/compile/solc-pool.ts'
import { RpcError } from '../../../src/errors.ts'

const V8 = 'pragma solidity ^0.8.0;\ncontract A { function f() public pure returns (uint) { return 1; } }'
const V5 = 'pragma solidity ^0.5.0;\ncontract B { function f() public pure returns (uint) { return 2; } }'

async function rejection(promise: Promise<unknown>): Promise<RpcError> {
  try {
    await promise
  } catch (error) {
    assert.instance(error, RpcError)
    return error as RpcError
  }
  throw new Error('expected a rejection')
}

test('releases: every installed package; a missing one is left out', async () => {
  const pool = createSolcPool({ packages: ['solc-0.5.17', 'solc', 'solc-9.9.9-not-installed'] })
  try {
    assert.equal(pool.releases(), ['0.8.37', '0.5.17'])
    assert.equal(pool.loaded(), [], 'nothing loads before a source needs it')
  } finally {
    await pool.close()
  }
})

test('one worker per release in use, unloaded after idleMs', async () => {
  const pool = createSolcPool({ packages: ['solc-0.5.17', 'solc'], maxConcurrent: 2, idleMs: 300 })
  try {
    const [a, b] = await Promise.all([pool.compile(V8), pool.compile(V5)])
    assert.equal(a.types, ['A'])
    assert.equal(b.types, ['B'])
    await pool.compile(V8)
    assert.ok(pool.loaded().includes('0.8.37'), 'the release just used is loaded')
    if (process.platform === 'linux') {
      // each compiler thread is niced (10), so request threads get the CPU first
      const nices = readdirSync(`/proc/${process.pid}/task`).map(
        (tid) => readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16],
      )
      assert.ok(nices.includes('10'), `thread nice values: ${nices.join(' ')}`)
    }
    for (const deadline = Date.now() + 5_000; pool.loaded().length > 0; ) {
      assert.ok(Date.now() < deadline, `still loaded: ${pool.loaded().join(', ')}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    // and loads again when needed
    assert.equal((await pool.compile(V5)).types, ['B'])
  } finally {
    await pool.close()
  }
})

test('past maxWaiting: -32006 at once, the queued ones still compile', async () => {
  const pool = createSolcPool({ packages: ['solc'], maxConcurrent: 1, maxWaiting: 2 })
  try {
    const accepted = [pool.compile(V8), pool.compile(V8), pool.compile(V8)] // one running, two waiting
    const busy = await rejection(pool.compile(V8))
    assert.is(busy.code, -32006)
    assert.match(busy.message, /1 compilations running and 2 waiting, the most this node queues; send contract_compileContract again/)
    for (const result of await Promise.all(accepted)) assert.equal(result.types, ['A'])
  } finally {
    await pool.close()
  }
})

test('a compile past timeoutMs is stopped with its worker (-32000); the release loads again afterwards', async () => {
  const pool = createSolcPool({ packages: ['solc'], timeoutMs: 1 })
  try {
    const stopped = await rejection(pool.compile(V8))
    assert.is(stopped.code, -32000)
    assert.match(stopped.message, /^compile stopped: solc 0\.8\.37 took longer than 0\.001 s on this source/)
    assert.equal(pool.loaded(), [])
  } finally {
    await pool.close()
  }
})

test('no package: -32000 "no Solidity compiler installed"; a closed pool refuses and ends what waits', async () => {
  const none = createSolcPool({ packages: [] })
  assert.is((await rejection(none.compile(V8))).message, NO_COMPILER)
  await none.close()

  const pool = createSolcPool({ packages: ['solc'], maxConcurrent: 1 })
  const running = pool.compile(V8)
  const waiting = pool.compile(V8)
  await pool.close()
  assert.is((await rejection(waiting)).message, 'the node is stopping')
  assert.is((await rejection(running)).code, -32000)
  assert.is((await rejection(pool.compile(V8))).message, 'the node is stopping')
})

test.run()
