/**
 * The Java executor child (src/exec/jvm/child.ts, jvm/src) on its own, with a map as the ledger:
 * the instrumented bytecode of javac's trickier shapes still verifies and runs (switches, nested
 * try/catch/finally, exceptions through frames and out of constructors, lambdas, streams, records,
 * enums), the call depth is counted right when exceptions unwind, step counts repeat exactly, a
 * `finally` cannot outlive a spent budget, a restarted child reloads its code on demand, and the
 * heap follows the step budget of the calls (docs/jvm.md §5 "Memory").
 */

import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { JvmCode } from '../../../src/exec/jvm/child.ts'
import { createJvmExecutor, heapFloorMiB, type JvmArgs, type JvmCallResult, type JvmExecutor } from '../../../src/exec/jvm/child.ts'
import { createLogger } from '../../../src/log.ts'
import { compileJava } from '../../helpers/jvm.ts'

const SOURCE = `package t;
import java.util.*;
import java.util.stream.*;
import keel.contract.Contract;
public class Tricky extends Contract {
  enum Size { SMALL, MEDIUM, LARGE }
  record Pair(String key, long value) {}
  static final String[] NAMES = {"zero", "one", "two"};
  static class Boom extends RuntimeException { Boom(String m) { super(m); } }
  static class Fragile { Fragile(int n) { if (n % 2 == 0) throw new Boom("even " + n); } }

  public String table(int n) {
    switch (n) { case 1: return "one"; case 2: return "two"; case 3: return "three"; default: return "many"; }
  }
  public String lookup(int n) {
    switch (n) { case -100: return "low"; case 0: return "zero"; case 100000: return "high"; default: return "other"; }
  }
  public int strings(String s) {
    switch (s) { case "apple": return 1; case "pear": return 2; default: return 0; }
  }
  public String sizes() {
    StringBuilder out = new StringBuilder();
    for (Size size : Size.values()) switch (size) { case SMALL: out.append('s'); break; case LARGE: out.append('l'); break; default: out.append('m'); }
    return out.toString();
  }
  private int thrower(int depth) { if (depth == 0) throw new Boom("bottom"); return thrower(depth - 1) + 1; }
  public int unwind(int times) {
    int caught = 0;
    for (int i = 0; i < times; i++) {
      try { thrower(20); } catch (Boom e) { caught++; } finally { caught += 0; }
    }
    return caught;
  }
  public int constructors(int times) {
    int built = 0;
    for (int i = 0; i < times; i++) { try { new Fragile(i); built++; } catch (Boom e) { } }
    return built;
  }
  public String nested(String key) {
    try {
      try { ledger.put(key, "inner"); throw new IllegalStateException("x"); }
      finally { ledger.put(key + ".finally", "ran"); }
    } catch (IllegalStateException e) { return ledger.get(key) + "/" + ledger.get(key + ".finally"); }
  }
  public String streams() {
    List<Pair> pairs = List.of(new Pair("b", 2), new Pair("a", 1), new Pair("c", 3));
    return pairs.stream().sorted(Comparator.comparing(Pair::key)).map(p -> p.key() + p.value()).collect(Collectors.joining(","))
        + " " + IntStream.rangeClosed(1, 10).sum() + " " + new Pair("a", 1).equals(new Pair("a", 1));
  }
  public String hashes() {
    Map<Object, Integer> m = new HashMap<>();
    for (int i = 0; i < 5; i++) m.put(new Object(), i);
    StringBuilder out = new StringBuilder();
    for (int v : m.values()) out.append(v);
    return out + " " + new Object();
  }
  public long work(int n) { long sum = 0; for (int i = 0; i < n; i++) sum += i % 7; return sum; }
  public void stubborn() { while (true) { try { work(1000); } finally { work(1000); } } }
  public String names(int i) { String before = NAMES[i]; NAMES[i] = "changed"; return before; }
  public long[][] grid(int rows, int cols) { return new long[rows][cols]; }
}
`

let executor: JvmExecutor
let code: JvmCode
const HASH = '0x7472696b6b790000'
const ledger = new Map<string, Uint8Array>()

async function run(method: string, args: string[] = [], steps = 10_000_000): Promise<JvmCallResult> {
  const typed: JvmArgs = { form: 'strings', args }
  const result = await executor.call({
    hash: HASH,
    code: () => code,
    method,
    args: typed,
    ctx: { sender: '0x01', origin: '0x01', extra: '', self: '0x02', txHash: '0x03', blockNumber: '1', timestamp: '1' },
    steps,
    read: (_address, key) => ledger.get(key),
    callee: () => ({ error: 'no cross-contract calls here' }),
  })
  if (result.ok) for (const [, key, value] of result.writes) value === null ? ledger.delete(key) : ledger.set(key, value)
  return result
}

async function text(method: string, ...args: string[]): Promise<string> {
  const result = await run(method, args)
  if (!result.ok) throw new Error(`${method}: ${result.kind} ${result.error}`)
  return Buffer.from(result.ret).toString('utf8')
}

test.before(async () => {
  code = await compileJava({ 't/Tricky.java': SOURCE }, 't.Tricky')
  executor = createJvmExecutor({ log: createLogger({ level: 'silent' }) })
  const loaded = await executor.load(HASH, code)
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.error)
})

test.after(async () => {
  await executor?.stop()
})

test('switches, string and enum switches, nested try/finally, streams, records run after instrumentation', async () => {
  assert.equal(await Promise.all([1, 2, 3, 9].map((n) => text('table', String(n)))), ['one', 'two', 'three', 'many'])
  assert.equal(await Promise.all([-100, 0, 100000, 5].map((n) => text('lookup', String(n)))), ['low', 'zero', 'high', 'other'])
  assert.is(await text('strings', 'pear'), '2')
  assert.is(await text('sizes'), 'sml')
  assert.is(await text('nested', 'k'), 'inner/ran')
  assert.is(await text('streams'), 'a1,b2,c3 55 true')
  assert.is(await text('grid', '2', '3'), '[[0,0,0],[0,0,0]]')
})

test('the depth count survives exceptions unwinding through frames and out of constructors', async () => {
  // 1,000 throws from 21 frames deep: a leaked count would pass the 400-frame limit at once
  assert.is(await text('unwind', '1000'), '1000')
  assert.is(await text('constructors', '1000'), '500')
})

test('identity hash codes are fixed, a static array is put back after each call', async () => {
  assert.is(await text('hashes'), '01234 java.lang.Object@1')
  assert.is(await text('names', '1'), 'one')
  assert.is(await text('names', '1'), 'one')
})

test('step counts repeat exactly; a spent budget stops a finally block too; the budget is exact', async () => {
  const a = await run('work', ['10000'])
  const b = await run('work', ['10000'])
  assert.ok(a.ok && b.ok)
  assert.is(a.steps, b.steps)
  const stubborn = await run('stubborn', [], 2_000_000)
  assert.is(stubborn.ok, false)
  assert.ok(!stubborn.ok && stubborn.kind === 'budget', JSON.stringify(stubborn))
  const exact = await run('work', ['10000'], a.steps)
  assert.ok(exact.ok, 'a budget of exactly the steps needed suffices')
  const short = await run('work', ['10000'], a.steps - 1)
  assert.ok(!short.ok && short.kind === 'budget', 'one step less does not')
})

test('a failing function called 20 times on one executor fails the same way each time (the JDK makes an accessor after 15 reflective calls)', async () => {
  const outcomes = []
  for (let i = 0; i < 20; i++) {
    const r = await run('stubborn', [], 20_000)
    outcomes.push(r.ok ? 'ok' : `${r.kind} ${r.error} ${r.steps}`)
  }
  assert.match(outcomes[0] ?? '', /^budget /)
  assert.equal(outcomes, Array(20).fill(outcomes[0]))
})

test('functions inherited from a package-private base class are callable', async () => {
  const child = await compileJava(
    {
      't/Base.java': 'package t;\nabstract class Base { public String hello(String who) { return "hello " + who; } }\n',
      't/Child.java': 'package t;\npublic class Child extends Base { public String bye() { return "bye"; } }\n',
    },
    't.Child',
  )
  const hash = '0x6368696c64000000'
  assert.ok((await executor.load(hash, child)).ok)
  const result = await executor.call({
    hash,
    code: () => child,
    method: 'hello',
    args: { form: 'strings', args: ['you'] },
    ctx: { sender: '0x01', origin: '0x01', extra: '', self: '0x02', txHash: '0x03', blockNumber: '1', timestamp: '1' },
    steps: 100_000,
    read: () => undefined,
    callee: () => ({ error: 'no cross-contract calls here' }),
  })
  assert.ok(result.ok, JSON.stringify(result))
  assert.is(Buffer.from(result.ok ? result.ret : new Uint8Array()).toString(), 'hello you')
})

test('a killed child is replaced and reloads the code when a call needs it', async () => {
  const pid = executor.pid()
  assert.ok(pid !== undefined)
  process.kill(pid as number, 'SIGKILL')
  await new Promise((resolve) => setTimeout(resolve, 200))
  assert.is(await text('table', '2'), 'two')
  assert.is.not(executor.pid(), pid)
})

test("the executor's heap covers the call's step budget: a call given more steps runs on a new executor with the larger floor, and ends the same way", async () => {
  const heapOf = (pid: number | undefined) =>
    readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .find((a) => a.startsWith('-Xmx'))
  const before = executor.pid()
  const usual = await run('work', ['10000'])
  assert.is(heapOf(executor.pid()), `-Xmx${heapFloorMiB(64 * 1024 * 1024, 10_000_000)}m`, 'the floor for 10,000,000 steps (498 MiB)')
  const larger = await run('work', ['10000'], 20_000_000)
  assert.equal(larger, usual, 'the same outcome and steps')
  assert.is.not(executor.pid(), before)
  assert.is(heapOf(executor.pid()), `-Xmx${heapFloorMiB(64 * 1024 * 1024, 20_000_000)}m`)
})

test.run()
