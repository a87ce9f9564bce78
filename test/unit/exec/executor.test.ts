import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { type ExecutionOutcome, ZERO_WORD } from '../../../src/domain.ts'
import { type BlockTx, createExecutor, FROZEN_DETAIL, JVM_UNAVAILABLE } from '../../../src/exec/executor.ts'
import { jumpAnalysisCount } from '../../../src/exec/jump-analysis.ts'
import { syncStepCount } from '../../../src/exec/sync-steps.ts'
import type { Tracer } from '../../../src/exec/trace.ts'
import { calldata, compile, DEPLOYER, deployTx, invokeTx, MapState, maintainTx, mkTx, OTHER, topic, transferTx, word } from './helpers.ts'

const SOURCE = `// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.0;

contract Store {
  uint256 value;
  function set(uint256 v) external { value = v; }
  function get() external view returns (uint256) { return value; }
}

contract StoreV2 {
  uint256 value;
  function set(uint256 v) external { value = v * 2; }
  function get() external view returns (uint256) { return value + 1; }
}

contract Emitter {
  event Ping(address indexed from, uint256 indexed n, string note);
  function ping(uint256 n) external { emit Ping(msg.sender, n, "hello"); }
}

contract Reverter {
  uint256 public x;
  function fail(uint256 v) external { x = v; require(v == 0, "nope"); }
}

contract Looper {
  function spin() external pure returns (uint256 i) { while (true) { unchecked { i++; } } }
}

contract BadCtor {
  constructor() { revert("no"); }
}

contract Factory {
  function make() external returns (address) { return address(new Store()); }
}

contract Caller {
  function callGet(address s) external returns (uint256) {
    (bool ok, bytes memory r) = s.call(abi.encodeWithSignature("get()"));
    if (!ok) return 999;
    return abi.decode(r, (uint256));
  }
}

contract Memory {
  function grow(uint256 at) external pure returns (uint256 v) {
    assembly { mstore(at, 1) mstore8(add(at, 40), 2) v := mload(add(at, 9)) }
  }
}

contract Token {
  mapping(address => uint256) public balanceOf;
  event Transfer(address indexed from, address indexed to, uint256 value);
  constructor() { balanceOf[msg.sender] = 1e30; }
  function transfer(address to, uint256 amount) external returns (bool) {
    balanceOf[msg.sender] -= amount;
    balanceOf[to] += amount;
    emit Transfer(msg.sender, to, amount);
    return true;
  }
}
`

const C = compile(SOURCE)
const CTX = { number: 1, timestamp: 1_700_000_000_123_456_789n }
const FIRST = '0xaeccd2fd1118334402c5de1cb014a9c192c498df'
const SECOND = '0x313bbf563991dc4c1be9d98a058a26108adfcf81'
const SET = (v: bigint) => calldata('set(uint256)', v)
const GET = calldata('get()')

const ok = (txs: BlockTx['tx'][]): BlockTx[] => txs.map((tx) => ({ tx, signatureValid: true }))

function expectOk(o: ExecutionOutcome): Extract<ExecutionOutcome, { ok: true }> {
  if (!o.ok)
    throw new assert.Assertion({
      message: `expected success, got ${o.invalidMsg}: ${o.detail}`,
      operator: 'ok',
      expects: true,
      actual: false,
    })
  return o
}
function expectFail(o: ExecutionOutcome): Extract<ExecutionOutcome, { ok: false }> {
  if (o.ok) throw new assert.Assertion({ message: 'expected a failure', operator: 'ok', expects: false, actual: true })
  return o
}
const stripTime = (os: ExecutionOutcome[]) => os.map(({ executeTimeNs: _, ...rest }) => rest)

/** A state where DEPLOYER has deployed Store (at FIRST), and the block that did it. */
async function withStore(ex = createExecutor()) {
  const state = new MapState().fund(DEPLOYER, 1000n)
  const r = await ex.executeBlock(state, ok([deployTx(C.Store.bin)]), CTX)
  expectOk(r.outcomes[0])
  state.apply(r.changes)
  return { ex, state }
}

test('deploy: address from (sender, deploy count), runtime code returned, meta recorded, nonce incremented', async () => {
  const ex = createExecutor()
  const state = new MapState()
  const r = await ex.executeBlock(state, ok([deployTx(C.Store.bin), deployTx(C.Store.bin)]), CTX)
  const [a, b] = r.outcomes.map(expectOk)
  assert.is(a.contractAddress, FIRST)
  assert.is(b.contractAddress, SECOND)
  assert.is(a.ret, C.Store.runtime)
  assert.ok(a.gasUsed > 53_000, `gasUsed ${a.gasUsed} includes creation intrinsic gas`)
  assert.is(r.changes.accounts.get(DEPLOYER)?.nonce, 2n)
  assert.is(r.changes.code.get(FIRST), C.Store.runtime)
  assert.equal(r.changes.contracts.get(FIRST), {
    creator: DEPLOYER,
    createdAt: CTX.timestamp,
    createdInBlock: 1,
    status: 'normal',
    vmType: 'EVM',
  })
  assert.equal([...r.changes.accounts.keys()], [SECOND, DEPLOYER, FIRST].sort())
  assert.is(r.changes.accounts.get(FIRST)?.nonce, 1n, 'EIP-161: a new contract starts at nonce 1')
  assert.is(r.gasUsed, BigInt(a.gasUsed + b.gasUsed))
})

test('invoke: set then get in one block, the return value is ABI-encoded, storage lands in changes', async () => {
  const { ex, state } = await withStore()
  const r = await ex.executeBlock(state, ok([invokeTx(FIRST, SET(42n)), invokeTx(FIRST, GET)]), { number: 2, timestamp: 2n })
  const [set, get] = r.outcomes.map(expectOk)
  assert.is(set.ret, '0x')
  assert.is(set.contractAddress, null)
  assert.is(get.ret, `0x${word(42n)}`)
  assert.equal(r.changes.storage.get(FIRST), new Map([[`0x${word(0n)}`, `0x${word(42n)}`]]))
  assert.is(r.changes.accounts.size, 0, 'a zero-value call writes no account')
  assert.is(r.changes.code.size, 0)
  state.apply(r.changes)
  const again = await ex.executeBlock(state, ok([invokeTx(FIRST, GET), invokeTx(FIRST, SET(0n))]), { number: 3, timestamp: 3n })
  assert.is(expectOk(again.outcomes[0]).ret, `0x${word(42n)}`)
  assert.equal(again.changes.storage.get(FIRST), new Map([[`0x${word(0n)}`, ZERO_WORD]]), 'zeroing a slot deletes it (the zero word)')
  const refund = expectOk(again.outcomes[1]).gasUsed
  assert.ok(refund < expectOk(set).gasUsed, 'clearing a slot earns a refund')
})

test('events: logs carry the emitting address, topics and ABI data', async () => {
  const ex = createExecutor()
  const state = new MapState()
  const r1 = await ex.executeBlock(state, ok([deployTx(C.Emitter.bin)]), CTX)
  const address = expectOk(r1.outcomes[0]).contractAddress!
  state.apply(r1.changes)
  const r2 = await ex.executeBlock(state, ok([invokeTx(address, calldata('ping(uint256)', 7n), OTHER)]), CTX)
  const o = expectOk(r2.outcomes[0])
  assert.is(o.logs.length, 1)
  const [log] = o.logs
  assert.is(log.address, address)
  assert.equal(log.topics, [topic('Ping(address,uint256,string)'), `0x${word(OTHER)}`, `0x${word(7n)}`])
  const hello = Buffer.from('hello').toString('hex').padEnd(64, '0')
  assert.is(log.data, `0x${word(0x20n)}${word(5n)}${hello}`)
})

test('revert: INVOKE_CONTRACT_FAILED with the reason, and no state change at all', async () => {
  const ex = createExecutor()
  const state = new MapState()
  const r1 = await ex.executeBlock(state, ok([deployTx(C.Reverter.bin)]), CTX)
  const address = expectOk(r1.outcomes[0]).contractAddress!
  state.apply(r1.changes)
  const r2 = await ex.executeBlock(state, ok([invokeTx(address, calldata('fail(uint256)', 9n))]), CTX)
  const f = expectFail(r2.outcomes[0])
  assert.is(f.invalidMsg, 'INVOKE_CONTRACT_FAILED')
  assert.is(f.detail, 'reverted: nope')
  assert.ok(f.gasUsed > 21_000)
  assert.equal(r2.changes, { accounts: new Map(), code: new Map(), storage: new Map(), contracts: new Map() })
})

test('a failure in the middle of a block leaves the transactions around it intact', async () => {
  const { ex, state } = await withStore()
  const r = await ex.executeBlock(state, ok([invokeTx(FIRST, SET(1n)), invokeTx(FIRST, '0xdeadbeef'), invokeTx(FIRST, GET)]), CTX)
  expectOk(r.outcomes[0])
  assert.is(expectFail(r.outcomes[1]).detail, 'reverted')
  assert.is(expectOk(r.outcomes[2]).ret, `0x${word(1n)}`)
})

test('infinite loop: deterministic budget exhaustion with equal gasUsed on every run', async () => {
  const ex = createExecutor()
  const state = new MapState()
  const r1 = await ex.executeBlock(state, ok([deployTx(C.Looper.bin)]), CTX)
  const address = expectOk(r1.outcomes[0]).contractAddress!
  state.apply(r1.changes)
  const block = ok([invokeTx(address, calldata('spin()')), invokeTx(address, calldata('spin()'))])
  const t0 = performance.now()
  const a = await ex.executeBlock(state, block, CTX)
  const ms = performance.now() - t0
  const b = await createExecutor().executeBlock(state, block, CTX)
  for (const o of [...a.outcomes, ...b.outcomes]) {
    const f = expectFail(o)
    assert.is(f.invalidMsg, 'INVOKE_CONTRACT_FAILED')
    assert.is(f.detail, 'execution budget exhausted (time-out)')
    assert.is(f.gasUsed, 10_000_000)
  }
  assert.equal(stripTime(a.outcomes), stripTime(b.outcomes))
  assert.is(a.changes.storage.size + a.changes.accounts.size, 0)
  console.log(`  (two 10 M gas infinite loops: ${ms.toFixed(0)} ms)`)
})

test('freeze: invoking a frozen contract fails, freezing twice fails, unfreeze restores', async () => {
  const { ex, state } = await withStore()
  const r = await ex.executeBlock(
    state,
    ok([
      maintainTx(FIRST, 2),
      invokeTx(FIRST, SET(3n)),
      maintainTx(FIRST, 2),
      maintainTx(FIRST, 3),
      invokeTx(FIRST, SET(3n)),
      maintainTx(FIRST, 3),
    ]),
    CTX,
  )
  const [freeze, frozenInvoke, freezeAgain, unfreeze, invoke, unfreezeAgain] = r.outcomes
  expectOk(freeze)
  assert.is(expectFail(frozenInvoke).invalidMsg, 'INVOKE_CONTRACT_FAILED')
  assert.is(expectFail(frozenInvoke).detail, FROZEN_DETAIL)
  assert.is(expectFail(freezeAgain).invalidMsg, 'INVOKE_CONTRACT_FAILED')
  assert.is(expectFail(freezeAgain).detail, 'the contract is already frozen')
  expectOk(unfreeze)
  expectOk(invoke)
  assert.is(expectFail(unfreezeAgain).detail, 'the contract is not frozen')
  assert.is(r.changes.contracts.size, 0, 'frozen then unfrozen: the metadata is back to its base value')
  const r2 = await ex.executeBlock(state, ok([maintainTx(FIRST, 2)]), CTX)
  assert.is(r2.changes.contracts.get(FIRST)?.status, 'frozen')
  state.apply(r2.changes)
  const r3 = await ex.executeBlock(state, ok([invokeTx(FIRST, GET)]), CTX)
  assert.is(expectFail(r3.outcomes[0]).detail, FROZEN_DETAIL)
})

test('a contract calling a frozen contract fails the whole transaction, not just the inner call', async () => {
  const { ex, state } = await withStore()
  const r = await ex.executeBlock(state, ok([deployTx(C.Caller.bin), invokeTx(FIRST, SET(4n))]), CTX)
  const caller = expectOk(r.outcomes[0]).contractAddress!
  state.apply(r.changes)
  const viaCaller = invokeTx(caller, calldata('callGet(address)', FIRST))
  const before = await ex.executeBlock(state, ok([viaCaller]), CTX)
  assert.is(expectOk(before.outcomes[0]).ret, `0x${word(4n)}`)
  const frozen = await ex.executeBlock(
    state,
    ok([maintainTx(FIRST, 2), viaCaller, invokeTx(caller, calldata('callGet(address)', FIRST))]),
    CTX,
  )
  const f = expectFail(frozen.outcomes[1])
  assert.is(f.invalidMsg, 'INVOKE_CONTRACT_FAILED')
  assert.ok(f.detail.startsWith(FROZEN_DETAIL), f.detail)
  assert.is(f.gasUsed, 10_000_000, 'the whole transaction budget is charged')
  assert.equal(stripTime([frozen.outcomes[2]]), stripTime([f]), 'and the engine is fine afterwards')
  assert.equal([...frozen.changes.contracts.keys()], [FIRST])
  const read = await ex.call(state.apply(frozen.changes), { from: OTHER, to: caller, data: calldata('callGet(address)', FIRST) })
  assert.is(read.ok, false)
  assert.ok(read.detail?.startsWith(FROZEN_DETAIL))
})

test('maintain by anyone but the creator: INVALID_PERMISSION; on a non-contract: not a contract', async () => {
  const { ex, state } = await withStore()
  const r = await ex.executeBlock(
    state,
    ok([maintainTx(FIRST, 2, '0x', OTHER), maintainTx(FIRST, 1, C.StoreV2.bin, OTHER), maintainTx(OTHER, 2)]),
    CTX,
  )
  assert.is(expectFail(r.outcomes[0]).invalidMsg, 'INVALID_PERMISSION')
  assert.is(expectFail(r.outcomes[1]).invalidMsg, 'INVALID_PERMISSION')
  assert.is(expectFail(r.outcomes[2]).invalidMsg, 'INVOKE_CONTRACT_FAILED')
  assert.is(expectFail(r.outcomes[2]).detail, 'not a contract')
  assert.is(r.changes.contracts.size + r.changes.code.size, 0)
})

test('upgrade: new behaviour at the same address, storage kept', async () => {
  const { ex, state } = await withStore()
  const r = await ex.executeBlock(
    state,
    ok([
      invokeTx(FIRST, SET(5n)),
      maintainTx(FIRST, 1, C.StoreV2.bin),
      invokeTx(FIRST, GET),
      invokeTx(FIRST, SET(5n)),
      invokeTx(FIRST, GET),
    ]),
    CTX,
  )
  const [, upgrade, get1, , get2] = r.outcomes.map(expectOk)
  assert.ok(upgrade.gasUsed > 53_000)
  assert.is(get1.ret, `0x${word(6n)}`, 'V2 get() = stored 5 + 1: storage survived the upgrade')
  assert.is(get2.ret, `0x${word(11n)}`, 'V2 set(5) stores 10')
  assert.is(r.changes.code.get(FIRST), C.StoreV2.runtime)
  assert.is(r.changes.contracts.size, 0, 'creator and status unchanged')
  const bad = await ex.executeBlock(state, ok([maintainTx(FIRST, 1, C.BadCtor.bin), maintainTx(FIRST, 1, '0x')]), CTX)
  assert.is(expectFail(bad.outcomes[0]).detail, 'upgrade failed: reverted: no')
  assert.is(expectFail(bad.outcomes[1]).detail, 'contract code is empty')
  assert.is(bad.changes.code.size, 0)
})

test("a contract's jump destinations are analysed once across calls and blocks, and anew when its code changes", async () => {
  const { ex, state } = await withStore()
  const before = jumpAnalysisCount.performed
  const first = await ex.executeBlock(state, ok([invokeTx(FIRST, SET(1n)), invokeTx(FIRST, GET), invokeTx(FIRST, SET(2n))]), CTX)
  first.outcomes.map(expectOk)
  assert.is(jumpAnalysisCount.performed - before, 1, 'the runtime code, at its first call')
  state.apply(first.changes)
  const second = await ex.executeBlock(state, ok([invokeTx(FIRST, GET)]), { number: 3, timestamp: 3n })
  assert.is(expectOk(second.outcomes[0]).ret, `0x${word(2n)}`)
  assert.is(jumpAnalysisCount.performed - before, 1, 'a later block reuses it')
  const upgraded = await ex.executeBlock(state, ok([maintainTx(FIRST, 1, C.StoreV2.bin), invokeTx(FIRST, GET)]), {
    number: 4,
    timestamp: 4n,
  })
  const [, get] = upgraded.outcomes.map(expectOk)
  assert.is(get.ret, `0x${word(3n)}`, 'V2 runs: stored 2 + 1')
  assert.is(jumpAnalysisCount.performed - before, 3, "V2's init code and its runtime code")
})

test("plain opcodes step synchronously; with a step listener every step is the EVM's own runStep, with the same outcome", async () => {
  const { ex, state } = await withStore()
  const txs = ok([invokeTx(FIRST, SET(7n)), invokeTx(FIRST, GET)])
  const before = syncStepCount.taken
  const plain = await ex.executeBlock(state, txs, CTX)
  const fast = syncStepCount.taken - before
  assert.ok(fast > 50, `${fast} steps taken synchronously`)
  let steps = 0
  const onStep = (): void => void steps++
  const stepCounter: Tracer = {
    attach: (evm) => void evm.events.on('step', onStep),
    detach: (evm) => void evm.events.off('step', onStep),
    result: () => ({ gas: 0, failed: false, returnValue: '0x', structLogs: [] }),
  }
  const tracedSet = await ex.traceInBlock(state, [], txs[0], CTX, stepCounter)
  assert.is(syncStepCount.taken - before, fast, 'no synchronous step while a step listener watches')
  assert.ok(steps > 0)
  assert.equal(stripTime([tracedSet.outcome]), stripTime(plain.outcomes.slice(0, 1)))
  const tracedGet = await ex.traceInBlock(state, txs.slice(0, 1), txs[1], CTX, stepCounter)
  assert.equal(stripTime([...tracedGet.prior, tracedGet.outcome]), stripTime(plain.outcomes))
})

test("the frame loop here and the EVM's own (a step listener on) agree on every kind of frame: calls, creations, reverts, events, memory growth, out of gas", async () => {
  const ex = createExecutor({ txGasLimit: 1_000_000n })
  const state = new MapState().fund(DEPLOYER, 1000n)
  const watched: Tracer = {
    attach: (evm) => void evm.events.on('step', countStep),
    detach: (evm) => void evm.events.off('step', countStep),
    result: () => ({ gas: 0, failed: false, returnValue: '0x', structLogs: [] }),
  }
  let watchedSteps = 0
  function countStep(): void {
    watchedSteps++
  }
  /** each transaction of the block run again with a step listener, after the ones before it */
  async function sameWhenWatched(txs: BlockTx[]): Promise<ExecutionOutcome[]> {
    const frames = syncStepCount.frames
    const plain = await ex.executeBlock(state, txs, CTX)
    assert.ok(syncStepCount.frames > frames, 'the loop here ran the frames')
    for (let i = 0; i < txs.length; i++) {
      const framesBefore = syncStepCount.frames
      const traced = await ex.traceInBlock(state, txs.slice(0, i), txs[i]!, CTX, watched)
      assert.equal(stripTime([traced.outcome]), stripTime([plain.outcomes[i]!]), `transaction ${i}`)
      if (i === 0) assert.is(syncStepCount.frames, framesBefore, "a watched frame runs the EVM's own loop")
    }
    state.apply(plain.changes)
    return plain.outcomes
  }
  const names = ['Store', 'Emitter', 'Reverter', 'Looper', 'Factory', 'Caller', 'Token', 'Memory'] as const
  const deployed = await sameWhenWatched(ok([...names.map((name) => deployTx(C[name]!.bin)), deployTx(C.BadCtor.bin)]))
  const at = Object.fromEntries(names.map((name, i) => [name, expectOk(deployed[i]!).contractAddress!]))
  assert.is(expectFail(deployed[names.length]!).detail, 'reverted: no')
  const calls = await sameWhenWatched(
    ok([
      invokeTx(at.Store!, SET(5n)),
      invokeTx(at.Emitter!, calldata('ping(uint256)', 3n)),
      invokeTx(at.Reverter!, calldata('fail(uint256)', 1n)),
      invokeTx(at.Looper!, calldata('spin()')),
      invokeTx(at.Factory!, calldata('make()')),
      invokeTx(at.Caller!, calldata('callGet(address)', at.Store!)),
      invokeTx(at.Token!, calldata('transfer(address,uint256)', OTHER, 10n)),
      invokeTx(at.Store!, '0xdeadbeef'),
      invokeTx(at.Memory!, calldata('grow(uint256)', 0x10000n)),
      invokeTx(at.Memory!, calldata('grow(uint256)', 0x100000n)),
      invokeTx(at.Memory!, calldata('grow(uint256)', 1n << 255n)),
    ]),
  )
  assert.is(expectOk(calls[5]!).ret, `0x${word(5n)}`, 'the inner call read the stored value')
  assert.is(expectFail(calls[3]!).gasUsed, 1_000_000, 'the loop ran out of its budget')
  assert.is(expectOk(calls[8]!).ret, `0x${word((1n << 72n) + 2n)}`, "MLOAD reads MSTORE's word and MSTORE8's byte in grown memory")
  assert.is(expectFail(calls[9]!).gasUsed, 1_000_000, "memory growth beyond the budget: out of gas in MSTORE's gas")
  assert.is(expectFail(calls[10]!).gasUsed, 1_000_000, 'an offset near 2^256: out of gas')
  assert.ok(watchedSteps > 1000, `${watchedSteps} steps watched`)
})

test('deploy failures change nothing, not even the deploy count', async () => {
  const ex = createExecutor()
  const state = new MapState()
  const r = await ex.executeBlock(
    state,
    ok([
      deployTx(C.BadCtor.bin),
      deployTx('0x'),
      deployTx('0xzz'),
      mkTx({ kind: 'deploy', payload: C.Store.bin, vmType: 'JVM' }),
      deployTx(C.Store.bin),
    ]),
    CTX,
  )
  const [bad, empty, notHex, jvm, good] = r.outcomes
  assert.is(expectFail(bad).invalidMsg, 'DEPLOY_CONTRACT_FAILED')
  assert.is(expectFail(bad).detail, 'reverted: no')
  assert.is(expectFail(empty).detail, 'contract code is empty')
  assert.is(expectFail(notHex).detail, 'payload is not hex bytes')
  assert.is(expectFail(jvm).detail, JVM_UNAVAILABLE, 'an executor without a JVM engine refuses JVM deployments')
  assert.is(expectOk(good).contractAddress, FIRST, 'the failed deployments did not consume deploy count 0')
})

test('a JVM invoke of an EVM contract and an invoke of a non-contract fail cleanly', async () => {
  const { ex, state } = await withStore()
  const r = await ex.executeBlock(state, ok([mkTx({ kind: 'invoke', to: FIRST, payload: GET, vmType: 'JVM' }), invokeTx(OTHER, GET)]), CTX)
  assert.is(expectFail(r.outcomes[0]).detail, 'the contract is an EVM contract: send the transaction with type EVM')
  assert.is(expectFail(r.outcomes[1]).invalidMsg, 'INVOKE_CONTRACT_FAILED')
  assert.is(expectFail(r.outcomes[1]).detail, 'not a contract')
})

test('transfers: balances move without the EVM, OUTOFBALANCE changes nothing, a new receiver is created', async () => {
  const ex = createExecutor()
  const state = new MapState().fund(DEPLOYER, 100n)
  const third = '0x3333333333333333333333333333333333333333'
  const fourth = '0x4444444444444444444444444444444444444444'
  const r = await ex.executeBlock(
    state,
    ok([
      transferTx(DEPLOYER, OTHER, 60n),
      transferTx(DEPLOYER, OTHER, 50n),
      transferTx(OTHER, third, 10n),
      transferTx(DEPLOYER, DEPLOYER, 40n),
      transferTx(third, fourth, 0n),
      transferTx(fourth, third, 1n),
    ]),
    CTX,
  )
  const [a, short, b, self, zero, none] = r.outcomes
  assert.equal(expectOk(a), { ...expectOk(a), gasUsed: 0, ret: '0x', logs: [], contractAddress: null })
  assert.is(expectFail(short).invalidMsg, 'OUTOFBALANCE')
  expectOk(b)
  expectOk(self)
  expectOk(zero)
  assert.is(expectFail(none).invalidMsg, 'OUTOFBALANCE')
  assert.equal(
    r.changes.accounts,
    new Map([
      [OTHER, { balance: 50n, nonce: 0n }],
      [DEPLOYER, { balance: 40n, nonce: 0n }],
      [third, { balance: 10n, nonce: 0n }],
      [fourth, { balance: 0n, nonce: 0n }],
    ]),
  )
  assert.is(r.gasUsed, 0n)
})

test('SIGFAILED: nothing runs, nothing changes', async () => {
  const ex = createExecutor()
  const state = new MapState().fund(DEPLOYER, 100n)
  const r = await ex.executeBlock(
    state,
    [
      { tx: transferTx(DEPLOYER, OTHER, 60n), signatureValid: false },
      { tx: deployTx(C.Store.bin), signatureValid: false },
    ],
    CTX,
  )
  for (const o of r.outcomes) {
    assert.is(expectFail(o).invalidMsg, 'SIGFAILED')
    assert.is(o.gasUsed, 0)
  }
  assert.equal(r.changes, { accounts: new Map(), code: new Map(), storage: new Map(), contracts: new Map() })
})

test('block gas limit: later EVM transactions fail deterministically, transfers still run', async () => {
  const block = ok([
    deployTx(C.Store.bin),
    invokeTx(FIRST, SET(1n)),
    invokeTx(FIRST, SET(2n)),
    transferTx(DEPLOYER, OTHER, 1n),
    invokeTx(FIRST, SET(4n)),
  ])
  const state = new MapState().fund(DEPLOYER, 10n)
  const free = await createExecutor().executeBlock(state, block, CTX)
  const deployGas = BigInt(free.outcomes[0].gasUsed)
  // room for the deployment plus 30,000 gas: the first set() starts but cannot finish
  const limit = deployGas + 30_000n
  const ex = createExecutor({ blockGasLimit: limit })
  const r = await ex.executeBlock(state, block, CTX)
  const [deploy, set1, set2, transfer, set4] = r.outcomes
  expectOk(deploy)
  assert.is(expectFail(set1).detail, `execution budget exhausted (time-out): block gas limit ${limit} reached`)
  assert.is(set1.gasUsed, 30_000)
  assert.is(expectFail(set2).detail, `block gas limit ${limit} reached: transaction not executed`)
  assert.is(set2.gasUsed, 0)
  expectOk(transfer)
  assert.is(expectFail(set4).invalidMsg, 'INVOKE_CONTRACT_FAILED')
  assert.is(r.gasUsed, limit)
  assert.equal(stripTime((await ex.executeBlock(state, block, CTX)).outcomes), stripTime(r.outcomes))
})

test('a per-transaction budget too small for the intrinsic gas fails before running', async () => {
  const ex = createExecutor({ txGasLimit: 30_000n })
  const r = await ex.executeBlock(new MapState(), ok([deployTx(C.Store.bin)]), CTX)
  assert.match(expectFail(r.outcomes[0]).detail, /intrinsic gas \d+ exceeds the transaction gas limit 30000/)
})

test('contracts created by contracts get metadata, with the creating contract as creator', async () => {
  const ex = createExecutor()
  const state = new MapState()
  const r1 = await ex.executeBlock(state, ok([deployTx(C.Factory.bin)]), CTX)
  const factory = expectOk(r1.outcomes[0]).contractAddress!
  state.apply(r1.changes)
  const r2 = await ex.executeBlock(state, ok([invokeTx(factory, calldata('make()'))]), { number: 2, timestamp: 5n })
  const made = `0x${expectOk(r2.outcomes[0]).ret.slice(-40)}`
  assert.is(r2.changes.code.get(made), C.Store.runtime)
  assert.equal(r2.changes.contracts.get(made), { creator: factory, createdAt: 5n, createdInBlock: 2, status: 'normal', vmType: 'EVM' })
  assert.is(r2.changes.accounts.get(factory)?.nonce, 2n, "the factory's EVM nonce counts its creations")
})

test('determinism: the same block from the same state gives the same outcomes and changes', async () => {
  const state = new MapState().fund(DEPLOYER, 1_000n).fund(OTHER, 5n)
  const block = ok([
    deployTx(C.Token.bin),
    invokeTx(FIRST, calldata('transfer(address,uint256)', OTHER, 1000n)),
    transferTx(DEPLOYER, OTHER, 10n),
    invokeTx(FIRST, calldata('transfer(address,uint256)', DEPLOYER, 1n), OTHER),
    invokeTx(FIRST, calldata('transfer(address,uint256)', DEPLOYER, 10n ** 40n), OTHER),
    deployTx(C.Emitter.bin),
    maintainTx(FIRST, 2),
    invokeTx(FIRST, calldata('balanceOf(address)', OTHER)),
    transferTx(OTHER, DEPLOYER, 1_000_000n),
  ])
  const ex = createExecutor()
  const a = await ex.executeBlock(state, block, CTX)
  const b = await ex.executeBlock(state, block, CTX)
  const c = await createExecutor().executeBlock(state, block, CTX)
  assert.equal(stripTime(a.outcomes), stripTime(b.outcomes))
  assert.equal(stripTime(a.outcomes), stripTime(c.outcomes))
  assert.equal(a.changes, b.changes)
  assert.equal(a.changes, c.changes)
  assert.equal([...a.changes.accounts.keys()], [...c.changes.accounts.keys()], 'same order too')
  assert.equal(
    a.outcomes.map((o) => (o.ok ? 'ok' : o.invalidMsg)),
    ['ok', 'ok', 'ok', 'ok', 'INVOKE_CONTRACT_FAILED', 'ok', 'ok', 'INVOKE_CONTRACT_FAILED', 'OUTOFBALANCE'],
  )
  assert.is(expectFail(a.outcomes[4]).detail, 'reverted: panic 0x11')
})

test('simulate runs one transaction on a throw-away overlay; call is read-only', async () => {
  const { ex, state } = await withStore()
  const before = state.storage.get(FIRST)?.size ?? 0
  const sim = expectOk(await ex.simulate(state, invokeTx(FIRST, SET(9n)), CTX))
  assert.is(sim.ret, '0x')
  assert.is(state.storage.get(FIRST)?.size ?? 0, before)
  const got = await ex.call(state, { from: OTHER, to: FIRST, data: GET })
  assert.equal(got.ok, true)
  assert.is(got.ret, `0x${word(0n)}`)
  const failing = await ex.call(state, { from: OTHER, to: OTHER, data: GET })
  assert.equal({ ok: failing.ok, detail: failing.detail }, { ok: false, detail: 'not a contract' })
  const simFail = expectFail(await ex.simulate(state, invokeTx(FIRST, '0x01'), CTX))
  assert.is(simFail.invalidMsg, 'INVOKE_CONTRACT_FAILED')
})

test('runs queue: concurrent blocks on one executor do not interleave', async () => {
  const { ex, state } = await withStore()
  const [a, b] = await Promise.all([
    ex.executeBlock(state, ok([invokeTx(FIRST, SET(1n)), invokeTx(FIRST, GET)]), CTX),
    ex.executeBlock(state, ok([invokeTx(FIRST, SET(2n)), invokeTx(FIRST, GET)]), CTX),
  ])
  assert.is(expectOk(a.outcomes[1]).ret, `0x${word(1n)}`)
  assert.is(expectOk(b.outcomes[1]).ret, `0x${word(2n)}`)
})

test('a state read failure is not a transaction outcome: the block rejects', async () => {
  const { ex, state } = await withStore()
  const broken = Object.assign(Object.create(Object.getPrototypeOf(state)), state) as MapState
  broken.getStorage = () => {
    throw new Error('disk gone')
  }
  await ex.executeBlock(broken, ok([invokeTx(FIRST, GET)]), CTX).then(
    () => assert.unreachable('should reject'),
    (e: Error) => assert.match(e.message, /state read failed: storage .*disk gone/),
  )
  const after = await ex.executeBlock(state, ok([invokeTx(FIRST, GET)]), CTX)
  expectOk(after.outcomes[0])
})

test.run()
