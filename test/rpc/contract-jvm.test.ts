/**
 * Java contracts (vmType JVM) through the contract_ methods of a real node, whose executor child
 * is a real JVM: contracts compiled with javac during the run, deployed and invoked in both payload
 * encodings (HVM and 1.x), events as logs (receipts, sub_getLogs, subscriptions), rollback of a
 * failed call, the step budget, the deploy-time sandbox, upgrade, freeze and permission, simulate,
 * and a killed executor. docs/jvm.md describes what is tested here.
 */
import { execFileSync } from 'node:child_process'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { cpuSeconds } from '../../bench/node-usage.ts'
import {
  type JavaContract,
  type JvmArg,
  jvmCallPayload,
  jvmDeployPayload,
  jvmInvokeArgsPayload,
  jvmRetText,
  jvmTarGzDeployPayload,
  jvmTopic,
} from '../../sdk/src/jvm.ts'
import { contractAddress } from '../../src/crypto/tx-hash.ts'
import type { KeelNode } from '../../src/node.ts'
import { commit, fails, ok, type Reply, receiptOf, SUBMIT, send, sleep, type WireReceipt, type WireTx } from '../helpers/chain.ts'
import { loadSdk } from '../helpers/jssdk.ts'
import { compileExample, compileJava, executorPidOf } from '../helpers/jvm.ts'
import { startTestNode } from '../helpers/node.ts'
import { type Wallet, wallet } from '../helpers/wallet.ts'

let node: KeelNode
let url: string
const owner = wallet()
const other = wallet()
let counter: JavaContract
let kv: JavaContract
let testing: JavaContract
let counterAt: string
let statusWatch: string

const JVM = { type: 'JVM' } as const

/** Deploys `payload` from `from`; the receipt (must succeed). */
const deployJvm = (from: Wallet, payload: string): Promise<WireReceipt & { hash: string }> =>
  commit(url, SUBMIT.deploy, from.deploy(payload, JVM))

const invokeJvm = (from: Wallet, to: string, payload: string, extra: { simulate?: boolean } = {}) =>
  send(url, SUBMIT.invoke, from.invoke(to, payload, { ...JVM, ...extra }))

/** Invokes and requires success; `ret` as text. */
async function callText(from: Wallet, to: string, method: string, ...args: JvmArg[]): Promise<string> {
  const { reply } = await invokeJvm(from, to, jvmCallPayload(method, ...args))
  if (reply.code !== 0) throw new Error(`${method} failed: ${reply.code} ${reply.message} ${await lastReason()}`)
  return jvmRetText((reply.result as WireReceipt).ret)
}

/** The reason of the last discarded transaction, from the executor's system-status events. */
async function lastReason(): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const events = await ok<{ message: string }[]>(url, 'sub_getSubscriptionChanges', [statusWatch])
    if (events.length > 0) return events[events.length - 1].message
    await sleep(20)
  }
  return '(no status event)'
}

/** A failing transaction: its receipt code, and the reason the status event gives. */
async function failure(reply: Reply<WireReceipt>): Promise<{ code: number; reason: string }> {
  assert.is.not(reply.code, 0, 'the transaction fails')
  return { code: reply.code, reason: await lastReason() }
}

const TESTING_SOURCE = `package t;
import java.util.*;
import keel.contract.Contract;
import keel.contract.ContractException;
public class Testing extends Contract {
  private int calls;
  static final int[] TABLE = {1, 2, 3};
  public String note(String key, String value) { ledger.put(key, value); emit("Noted", value, key); return value; }
  public String read(String key) { return ledger.get(key, "<none>"); }
  public void noteThenFail(String key, String value) { note(key, value); throw new ContractException("refused after writing " + key); }
  public void noteThenDivide(String key, int by) { note(key, "x"); int ignored = 1 / by; }
  public void spin() { long i = 0; while (true) { i++; } }
  public long recurse(long n) { return n == 0 ? 0 : 1 + recurse(n - 1); }
  public String fresh() { calls++; int before = TABLE[0]; TABLE[0] = 99; return calls + "," + before; }
  public String scan(String prefix, int n) {
    int present = 0;
    for (int i = 0; i < n; i++) if (ledger.has(prefix + i)) present++;
    ledger.put("scanned:" + prefix, present);
    return present + "/" + n;
  }
  public String who() { return sender() + " " + self() + " " + blockNumber(); }
  public List<String> sorted(List<String> items) { List<String> out = new ArrayList<>(items); Collections.sort(out); return out; }
}
`

/** One class per refused API: the reason must name it. */
const REFUSED: { name: string; body: string; reason: RegExp }[] = [
  {
    name: 'Threads',
    body: 'public void f() { new Thread(() -> {}).start(); }',
    reason: /new at \d+: class java\.lang\.Thread is not allowed \(threads/,
  },
  {
    name: 'Time',
    body: 'public long f() { return System.currentTimeMillis(); }',
    reason: /invokestatic at \d+: call of java\.lang\.System\.currentTimeMillis is not allowed \(time\)/,
  },
  {
    name: 'Files',
    body: 'public boolean f() { return new java.io.File("/etc").exists(); }',
    reason: /class java\.io\.File is not allowed \(I\/O\)/,
  },
  {
    name: 'Network',
    body: 'public Object f() throws Exception { return new java.net.Socket("localhost", 1); }',
    reason: /class java\.net\.Socket is not allowed \(network\)/,
  },
  { name: 'Random', body: 'public double f() { return Math.random(); }', reason: /java\.lang\.Math\.random is not allowed \(randomness\)/ },
  {
    name: 'Reflection',
    body: 'public int f() { return getClass().getDeclaredMethods().length; }',
    reason: /getClass is not allowed \(reflection\)/,
  },
  {
    name: 'Loading',
    body: 'public Object f() throws Exception { return Class.forName("java.lang.Thread"); }',
    reason: /java\.lang\.Class\.forName is not allowed \(reflection\)/,
  },
  { name: 'Synchronised', body: 'public synchronized void f() {}', reason: /synchronized methods are not allowed/ },
  {
    name: 'Monitor',
    body: 'public void f() { synchronized (this) { } }',
    reason: /monitorenter at \d+: synchronized blocks are not allowed/,
  },
  { name: 'Native', body: 'public native void f();', reason: /native methods are not allowed/ },
  {
    name: 'Regex',
    body: 'public boolean f(String s) { return s.matches("(a+)+b"); }',
    reason: /call of java\.lang\.String\.matches is not allowed \(regular expressions/,
  },
  { name: 'StaticState', body: 'static int calls; public int f() { return ++calls; }', reason: /field calls: static fields must be final/ },
]

test.before(async () => {
  node = await startTestNode(
    {
      chain: { batchTimeoutMs: 5 },
      jvm: { callTimeoutMs: 20_000 },
      genesis: {
        accounts: [
          { address: owner.address, balance: '1000000' },
          { address: other.address, balance: '1000000' },
        ],
      },
    },
    { verifyWorkers: 1 },
  )
  url = node.url
  ;[counter, kv, testing] = await Promise.all([
    compileExample('counter', 'demo.Counter'),
    compileExample('kv', 'demo.KeyValue'),
    compileJava({ 't/Testing.java': TESTING_SOURCE }, 't.Testing'),
  ])
  statusWatch = await ok<string>(url, 'sub_newSystemStatusSubscription', [{ modules: ['executor'] }])
  counterAt = (await deployJvm(owner, jvmDeployPayload(counter))).contractAddress
})

test.after(async () => {
  await node?.stop()
})

test('counter (HVM encoding): the deploy receipt says JVM, ret is the code; calls count 1, 2; the contract queries answer as for EVM', async () => {
  assert.is(counterAt, contractAddress(owner.address, 0))
  assert.is(await callText(owner, counterAt, 'increment', 'visits'), '1')
  const second = await invokeJvm(other, counterAt, jvmCallPayload('increment', 'visits'))
  const receipt = second.reply.result as WireReceipt
  assert.is(jvmRetText(receipt.ret), '2')
  assert.is(receipt.vmType, 'JVM')
  assert.ok(receipt.gasUsed > 0 && receipt.gasUsed < 10_000, `gasUsed is the step count: ${receipt.gasUsed}`)
  assert.is(await callText(other, counterAt, 'add', 'visits', 40), '42')
  assert.is(await callText(other, counterAt, 'value', 'visits'), '42')
  assert.is(await callText(other, counterAt, 'value', 'nothing'), '0')

  const code = await ok<string>(url, 'contract_getCode', [counterAt])
  assert.is(code, jvmDeployPayload(counter), 'getCode returns the class stream (names sorted)')
  assert.is(await ok(url, 'contract_getStatus', [counterAt]), 'normal')
  assert.is(await ok(url, 'contract_getCreator', [counterAt]), owner.address)
  assert.match(await ok<string>(url, 'contract_getCreateTime', [counterAt]), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC$/)
  assert.ok((await ok<string[]>(url, 'contract_getDeployedList', [owner.address])).includes(counterAt))
  assert.ok(Number(await ok<string>(url, 'contract_getContractCountByAddr', [owner.address])) >= 1)
})

test('1.x encoding: a protobuf InvokeArgs holding a tar.gz with contract.properties deploys; InvokeArgs "invoke" calls by name with string arguments', async () => {
  const deployed = await deployJvm(other, jvmTarGzDeployPayload(counter, { name: 'counter' }))
  assert.is(deployed.vmType, 'JVM')
  const at = deployed.contractAddress
  const { reply } = await invokeJvm(other, at, jvmInvokeArgsPayload('add', 'apples', '5'))
  assert.is(reply.code, 0, reply.message)
  assert.is(jvmRetText((reply.result as WireReceipt).ret), '5')
  assert.is(await callText(owner, at, 'value', 'apples'), '5', 'the HVM call form reads what the 1.x form wrote')
  // a function taking one List gets all string arguments (1.x's f(List<String>) shape)
  const t = (await deployJvm(other, jvmTarGzDeployPayload(testing))).contractAddress
  const sorted = await invokeJvm(other, t, jvmInvokeArgsPayload('sorted', 'pear', 'apple', 'fig'))
  assert.is(jvmRetText((sorted.reply.result as WireReceipt).ret), '["apple","fig","pear"]')
  assert.is(await callText(other, t, 'sorted', ['b', 'a']), '["a","b"]', 'a JSON list argument in the HVM form')
  assert.match(await callText(other, t, 'who'), new RegExp(`^${other.address} ${t} [1-9]\\d*$`), 'sender, self and block number')
})

test('key-value store with events: logs in the receipt, found by sub_getLogs and pushed to a subscription', async () => {
  const deployed = await deployJvm(owner, jvmDeployPayload(kv))
  const at = deployed.contractAddress
  const subscription = await ok<string>(url, 'sub_newEventSubscription', [{ addresses: [at] }])
  const { reply } = await invokeJvm(owner, at, jvmCallPayload('set', 'colour', 'blue'))
  assert.is(reply.code, 0, reply.message)
  const receipt = reply.result as WireReceipt
  assert.is(receipt.log.length, 1)
  const [log] = receipt.log
  assert.is(log.address, at)
  assert.equal(log.topics, [jvmTopic('Set'), jvmTopic('colour')])
  assert.is(Buffer.from(log.data, 'hex').toString('utf8'), 'blue')
  assert.is(await callText(other, at, 'get', 'colour'), 'blue')
  assert.is(await callText(other, at, 'count'), '1')

  const range = { fromBlock: log.blockNumber, toBlock: log.blockNumber }
  assert.equal(await ok(url, 'sub_getLogs', [{ ...range, addresses: [at], topics: [jvmTopic('Set')] }]), [log])
  assert.equal(await ok(url, 'sub_getLogs', [{ ...range, topics: [null, jvmTopic('colour')] }]), [log])
  assert.equal(await ok(url, 'sub_getLogs', [{ ...range, topics: [jvmTopic('Deleted')] }]), [])
  let pushed: unknown[] = []
  for (let i = 0; i < 100 && pushed.length === 0; i++) {
    pushed = await ok<unknown[]>(url, 'sub_getSubscriptionChanges', [subscription])
    if (pushed.length === 0) await sleep(20)
  }
  assert.equal(pushed, [log], 'the subscription gets the same log')

  const deleted = await invokeJvm(owner, at, jvmCallPayload('delete', 'colour'))
  assert.is(jvmRetText((deleted.reply.result as WireReceipt).ret), 'true')
  assert.equal(
    (deleted.reply.result as WireReceipt).log.map((l) => l.topics[0]),
    [jvmTopic('Deleted')],
  )
  assert.is(await callText(other, at, 'get', 'colour'), '')
})

test('exception → rollback: the writes and events of a failed call are gone; -32005 with the reason', async () => {
  const at = (await deployJvm(owner, jvmDeployPayload(testing))).contractAddress
  await callText(owner, at, 'note', 'k', 'kept')
  const thrown = await invokeJvm(owner, at, jvmCallPayload('noteThenFail', 'k', 'lost'))
  const f1 = await failure(thrown.reply)
  assert.is(f1.code, -32005)
  assert.match(f1.reason, /INVOKE_CONTRACT_FAILED \(refused after writing k \(at t\.Testing\.noteThenFail line \d+\)\)/)
  // the receipt says why: the failure name is the message, the reason its `data`, also as the official SDK reports it
  assert.is(thrown.reply.message, 'INVOKE_CONTRACT_FAILED')
  assert.match(String(thrown.reply.data), /^refused after writing k \(at t\.Testing\.noteThenFail line \d+\)$/)
  const sdk = loadSdk()
  const manager = await sdk.ProviderManager.createManager({ httpProviders: [new sdk.HttpProvider(1, url.replace(/^http:\/\//, ''))] })
  const sdkError = await sdk.ServiceManager.getTxService(manager)
    .getTransactionReceipt(thrown.hash)
    .send()
    .then(
      () => undefined,
      (error: unknown) => error,
    )
  assert.ok(sdkError instanceof sdk.RequestError, 'the SDK reports the failed receipt as a RequestError')
  assert.is(sdkError.getCode(), -32005)
  assert.match(String((sdkError as unknown as { response: { data?: string } }).response.data), /^refused after writing k/)
  const divided = await invokeJvm(owner, at, jvmCallPayload('noteThenDivide', 'k', 0))
  const f2 = await failure(divided.reply)
  assert.is(f2.code, -32005)
  assert.match(f2.reason, /ArithmeticException: \/ by zero/)
  assert.is(await callText(owner, at, 'read', 'k'), 'kept', 'the failed calls changed nothing')
  const logs = await ok<{ data: string }[]>(url, 'sub_getLogs', [{ fromBlock: 1, addresses: [at] }])
  assert.equal(
    logs.map((l) => Buffer.from(l.data, 'hex').toString()),
    ['kept'],
    'only the successful call left a log',
  )

  // the key-value store's all-or-nothing setAll: the second pair is refused, the first is undone
  const store = (await deployJvm(owner, jvmDeployPayload(kv))).contractAddress
  const partial = await invokeJvm(owner, store, jvmCallPayload('setAll', ['a', '1', '', '2']))
  assert.match((await failure(partial.reply)).reason, /the key is empty/)
  assert.is(await callText(owner, store, 'get', 'a'), '')
  const notOwner = await invokeJvm(other, store, jvmCallPayload('set', 'a', '1'))
  assert.match((await failure(notOwner.reply)).reason, /only the owner may set/)
})

test('runaway loop → the step budget ends it deterministically (-32005, time-out); the next call runs; deep recursion stops at the depth limit', async () => {
  const at = (await deployJvm(owner, jvmDeployPayload(testing))).contractAddress
  const started = performance.now()
  const spun = await invokeJvm(owner, at, jvmCallPayload('spin'))
  const spin = await failure(spun.reply)
  assert.is(spin.code, -32005)
  assert.match(spin.reason, /execution budget exhausted \(time-out\): step budget of 10000000 exhausted/)
  assert.ok(performance.now() - started < 15_000, 'not stalled')
  assert.is(await callText(owner, at, 'note', 'after', 'fine'), 'fine')
  const deep = await invokeJvm(owner, at, jvmCallPayload('recurse', 100_000))
  assert.match((await failure(deep.reply)).reason, /call depth of 400 contract frames exceeded/)
  assert.is(await callText(owner, at, 'recurse', 300), '300')
})

test('each refused API: the deploy fails with -32004 and a reason naming the class, method and instruction', async () => {
  const sources: Record<string, string> = {}
  for (const { name, body } of REFUSED) sources[`bad/${name}.java`] = `package bad;\npublic class ${name} {\n  ${body}\n}\n`
  const compiled = await compileJava(sources, `bad.${REFUSED[0].name}`)
  for (const { name, reason } of REFUSED) {
    const classes = new Map([...compiled.classes].filter(([className]) => className.startsWith(`bad/${name}`)))
    const { reply } = await send(url, SUBMIT.deploy, owner.deploy(jvmDeployPayload({ main: `bad.${name}`, classes }), JVM))
    const refused = await failure(reply)
    assert.is(refused.code, -32004, name)
    assert.match(refused.reason, new RegExp(`DEPLOY_CONTRACT_FAILED \\(contract refused: class bad\\.${name}`), name)
    assert.match(refused.reason, reason, name)
  }
})

test('payloads that are not JVM code or calls, a type that names the other engine, an unknown type', async () => {
  const notCode = await send(url, SUBMIT.deploy, owner.deploy('0x6080604052', JVM))
  const bad = await failure(notCode.reply)
  assert.is(bad.code, -32004)
  assert.match(bad.reason, /the payload is not JVM contract code/)
  const notCall = await invokeJvm(owner, counterAt, '0x1234')
  assert.match((await failure(notCall.reply)).reason, /the payload is not a JVM call/)
  const evmStyle = await send(url, SUBMIT.invoke, owner.invoke(counterAt, '0x12345678'))
  assert.match((await failure(evmStyle.reply)).reason, /the contract is a JVM contract: send the transaction with type JVM/)
  const noSuch = await invokeJvm(owner, counterAt, jvmCallPayload('nothing'))
  assert.match((await failure(noSuch.reply)).reason, /the contract has no public function nothing/)
  const badArg = await invokeJvm(owner, counterAt, jvmCallPayload('add', 'x', 'ten'))
  assert.match((await failure(badArg.reply)).reason, /argument 2 of add is not a long/)
  const code = jvmDeployPayload(counter)
  await fails(
    url,
    SUBMIT.deploy,
    [owner.deploy(code, { type: 'BVM' })],
    -32602,
    '`type` BVM calls a built-in contract: send it with contract_invokeContract (got a deploy transaction)',
  )
  await fails(url, SUBMIT.deploy, [owner.deploy(code, { type: 'WASM' })], -32602, /at \/type: must be equal to one of the allowed values/)
  await fails(
    url,
    SUBMIT.deploy,
    [owner.deploy(code, { type: 'TRANSFER' })],
    -32602,
    '`type` "TRANSFER" is not supported: EVM (the default), JVM, HVM or BVM',
  )
  await fails(url, SUBMIT.deploy, [owner.deploy(code, { type: 'wasm' })], -32602, /at \/type: must be equal to one of the allowed values/)
  assert.is(
    await ok(url, SUBMIT.transfer, [owner.transfer(other.address, 1, { type: 'TRANSFER' })]).then((h) => typeof h),
    'string',
    'a transfer may say TRANSFER',
  )
})

test('upgrade keeps the storage; only the creator may upgrade; code that does not load leaves the old code', async () => {
  const at = (await deployJvm(owner, jvmDeployPayload(counter))).contractAddress
  assert.is(await callText(owner, at, 'add', 'n', 7), '7')
  const v2 = await compileJava(
    {
      'demo/Counter.java': `package demo;
import keel.contract.Contract;
public class Counter extends Contract {
  public long increment(String name) { long next = ledger.getLong(name) + 10; ledger.put(name, next); return next; }
  public long value(String name) { return ledger.getLong(name); }
  public String version() { return "2"; }
}`,
    },
    'demo.Counter',
  )
  const stolen = await send(url, SUBMIT.maintain, other.maintain(at, 1, jvmDeployPayload(v2), JVM))
  assert.is((await failure(stolen.reply)).code, -32008)
  const refused = await send(
    url,
    SUBMIT.maintain,
    owner.maintain(at, 1, jvmDeployPayload({ main: 'bad.Threads', classes: new Map() }), JVM),
  )
  assert.match((await failure(refused.reply)).reason, /upgrade failed: the payload holds no class files/)
  const upgraded = await send(url, SUBMIT.maintain, owner.maintain(at, 1, jvmTarGzDeployPayload(v2), JVM))
  assert.is(upgraded.reply.code, 0, upgraded.reply.message)
  assert.is(await callText(owner, at, 'version'), '2')
  assert.is(await callText(owner, at, 'value', 'n'), '7', 'the storage is kept')
  assert.is(await callText(owner, at, 'increment', 'n'), '17')
  assert.is(await ok(url, 'contract_getCode', [at]), jvmDeployPayload(v2))
})

test('freeze and unfreeze: only the creator; a frozen contract cannot be invoked; unfrozen it works again', async () => {
  const at = (await deployJvm(owner, jvmDeployPayload(counter))).contractAddress
  assert.is((await failure((await send(url, SUBMIT.maintain, other.maintain(at, 2, undefined, JVM))).reply)).code, -32008)
  assert.is((await send(url, SUBMIT.maintain, owner.maintain(at, 2, undefined, JVM))).reply.code, 0)
  assert.is(await ok(url, 'contract_getStatus', [at]), 'frozen')
  const frozen = await invokeJvm(owner, at, jvmCallPayload('increment', 'x'))
  assert.match((await failure(frozen.reply)).reason, /Try to invoke a frozen contract/)
  assert.is((await failure((await send(url, SUBMIT.maintain, other.maintain(at, 3, undefined, JVM))).reply)).code, -32008)
  assert.is((await send(url, SUBMIT.maintain, owner.maintain(at, 3, undefined, JVM))).reply.code, 0)
  assert.is(await ok(url, 'contract_getStatus', [at]), 'normal')
  assert.is(await callText(owner, at, 'increment', 'x'), '1')
})

test('simulate: the receipt of a simulated call, and no change to the state', async () => {
  const at = (await deployJvm(owner, jvmDeployPayload(counter))).contractAddress
  const hash = await ok<string>(url, SUBMIT.invoke, [owner.invoke(at, jvmCallPayload('increment', 's'), { ...JVM, simulate: true })])
  const receipt = await ok<WireReceipt>(url, 'tx_getTransactionReceipt', [hash])
  assert.is(receipt.vmType, 'JVM')
  assert.is(jvmRetText(receipt.ret), '1')
  assert.is(await callText(owner, at, 'value', 's'), '0', 'a simulation changes nothing')
  await fails(url, 'tx_getTransactionByHash', [hash], -32001)
})

test('no state outlives a call: instance fields start afresh, a static array is put back', async () => {
  const at = (await deployJvm(owner, jvmDeployPayload(testing))).contractAddress
  assert.is(await callText(owner, at, 'fresh'), '1,1')
  assert.is(await callText(owner, at, 'fresh'), '1,1')
})

test('the executor killed in the middle of a call: the node starts a new one and runs the call again; the result is the undisturbed one', async () => {
  const at = (await deployJvm(owner, jvmDeployPayload(testing))).contractAddress
  // each ledger read is a round trip to the node: 30,000 of them take a while
  const reads = 30_000
  const undisturbed = (await invokeJvm(owner, at, jvmCallPayload('scan', 'a', reads))).reply
  assert.is(undisturbed.code, 0, undisturbed.message)
  const first = executorPidOf(process.pid)
  assert.ok(first !== undefined, 'the executor runs')
  const before = cpuSeconds([first as number])
  const hash = await ok<string>(url, SUBMIT.invoke, [owner.invoke(at, jvmCallPayload('scan', 'b', reads), JVM)])
  // wait until the call is well under way (the child has worked a little), then kill it
  const deadline = Date.now() + 20_000
  while (cpuSeconds([first as number]) - before < 0.1 && Date.now() < deadline) await sleep(5)
  execFileSync('kill', ['-KILL', String(first)])
  const receipt = await receiptOf(url, hash, 60_000)
  assert.is(receipt.code, 0, `the call succeeded after the kill: ${receipt.message}`)
  const killed = receipt.result as WireReceipt
  const calm = undisturbed.result as WireReceipt
  assert.is(jvmRetText(killed.ret), `0/${reads}`)
  assert.is(killed.ret, calm.ret)
  assert.is(killed.gasUsed, calm.gasUsed, 'the same steps as the undisturbed call')
  const second = executorPidOf(process.pid)
  assert.ok(second !== undefined && second !== first, 'a new executor runs')
  const tx = await ok<WireTx>(url, 'tx_getTransactionByHash', [hash])
  assert.is(tx.invalid, undefined)
})

test('the wall-clock safety net stopped none of these calls: the steps decided every outcome', async () => {
  const metrics = await (await fetch(`${url}/metrics`)).text()
  assert.match(metrics, /^keel_jvm_wall_clock_stops_total\{[^}]*\} 0$/m)
})

test.run()
