/**
 * Java contracts written as a hostile author would (issue 26): each function or class tries one
 * way out of the step budget, the memory budget or the per-call state, and the case says how the
 * executor must end it — the same way, at the same step, on every node and after any restart.
 * Shared by test/unit/exec/jvm-hostile.test.ts (one executor, restarted between two runs of each
 * case) and test/network/jvm-hostile.test.ts (the same calls on a 4-VP network).
 */
import { compileJava } from './jvm.ts'

export const HOSTILE_SOURCE = `package h;
import java.math.*;
import java.util.*;
import java.util.function.*;
import java.util.stream.*;
import keel.contract.Contract;
public class Hostile extends Contract {
  static final int[][] GRID = {{1}, {2}};
  static final class Res implements AutoCloseable {
    final StringBuilder log;
    Res(StringBuilder log) { this.log = log; log.append("open;"); }
    public void close() { log.append("close;"); }
  }
  private static void spin() { for (;;) { } }
  public String swap() { String before = GRID[0][0] + "," + GRID[1][0]; GRID[0] = GRID[1]; GRID[0][0] = 9; return before; }
  public void finallyAfterSpin() { String[] keys = {"f"}; try { spin(); } finally { for (String key : keys) ledger.put(key, "ran"); } }
  public void loopInFinally() { try { spin(); } finally { long s = 0; for (int i = 0; i < 1000; i++) s += i; ledger.put("s", s); } }
  public void spinInFinally() { String[] keys = {"f"}; try { spin(); } finally { for (String key : keys) spin(); } }
  public String resources() { StringBuilder log = new StringBuilder(); try (Res r = new Res(log)) { log.append("use;"); } return log.toString(); }
  public void resourcesSpin() { try (Res r = new Res(new StringBuilder())) { spin(); } }
  public String catchAll() { try { spin(); } catch (Throwable t) { return "caught " + t; } return "?"; }
  public long rangeSum() { return LongStream.range(0, Long.MAX_VALUE).sum(); }
  public long iterateCount() { return Stream.iterate("x", UnaryOperator.identity()).limit(Long.MAX_VALUE).count(); }
  public int split(String s, String by) { return s.split(by).length; }
  public int square(int times) {
    BigInteger x = BigInteger.TEN;
    BinaryOperator<BigInteger> mul = (a, b) -> a.multiply(b);
    for (int i = 0; i < times; i++) x = mul.apply(x, x);
    return x.bitLength();
  }
  public String plain(BigDecimal d) { return d.add(BigDecimal.ONE).toPlainString(); }
  public int capacity() { return new ArrayList<Integer>(30_000_000).size(); }
  public int doubling() { String s = "x"; for (int i = 0; i < 40; i++) s = s + s; return s.length(); }
  public int bigArray() { return new byte[1 << 30].length; }
  public int almostBudget() { return new long[7_000_000].length; }
  public String bigReturn() { return "x".repeat(8 << 20); }
  public int listHash(int n) {
    List<Integer> list = new ArrayList<>();
    for (int i = 0; i < n; i++) list.add(i);
    Object seen = list;
    int total = 0;
    for (int i = 0; i < 1_000_000; i++) total += seen.hashCode();
    return total;
  }
  public int identityKeys(int n) {
    Map<Object, Integer> seen = new HashMap<>();
    for (int i = 0; i < n; i++) seen.put(new Object(), i);
    return seen.size();
  }
  public int search(int n) { String hay = "a".repeat(n); String needle = "a".repeat(n / 2) + "b"; return hay.indexOf(needle); }
  // memory the JDK makes inside calls the steps charge little for: kept alive to the end of the call
  static final long[][] HOLD = new long[1][];
  static final class Fat {
    long a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7, c0, c1, c2, c3, c4, c5, c6, c7, d0, d1, d2, d3, d4, d5, d6, d7;
    long e0, e1, e2, e3, e4, e5, e6, e7, f0, f1, f2, f3, f4, f5, f6, f7, g0, g1, g2, g3, g4, g5, g6, g7, h0, h1, h2, h3, h4, h5, h6, h7;
    final Fat next;
    Fat(Fat next) { this.next = next; }
  }
  public int mapFill() { Map<Integer, Integer> m = new HashMap<>(); for (int i = 0; ; i++) m.put(i, i); }
  public int treeFill() { TreeMap<Integer, Integer> m = new TreeMap<>(); for (int i = 0; ; i++) m.put(i, i); }
  public int listGrowth() { List<Object> l = new ArrayList<>(); Object o = new Object(); for (;;) l.add(o); }
  public long boxedChurn() { long sum = 0; for (long i = 0; ; i++) { Long x = i; sum += x; } }
  public int builderText() { String s = "x".repeat(60_000) + "\u1234"; StringBuilder b = new StringBuilder(); for (;;) b.append(s); }
  public int builderNumbers() { StringBuilder b = new StringBuilder("\u1234"); for (;;) b.append(Long.MIN_VALUE); }
  public int fatObjects() { Fat f = null; for (;;) f = new Fat(f); }
  public int deepThrowables(int depth) {
    if (depth > 0) return deepThrowables(depth - 1);
    List<Throwable> kept = new ArrayList<>();
    for (;;) kept.add(new IllegalStateException());
  }
  public int distinctCopies() {
    List<Integer> source = new ArrayList<>();
    for (int i = 0; i < 100_000; i++) source.add(i);
    List<Object> kept = new ArrayList<>();
    for (;;) kept.add(source.stream().distinct().collect(Collectors.toList()));
  }
  enum Many { ${Array.from({ length: 1000 }, (_, i) => `M${i}`).join(', ')} }
  public int enumMaps() { List<Object> kept = new ArrayList<>(); for (;;) kept.add(new EnumMap<Many, Object>(Many.class)); }
  public int enumValues() { List<Object> kept = new ArrayList<>(); for (;;) kept.add(Many.values()); }
  public int arrayClones() { int[] a = new int[100_000]; List<Object> kept = new ArrayList<>(); for (;;) kept.add(a.clone()); }
  static final class Copyable implements Cloneable {
    long a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7, c0, c1, c2, c3, c4, c5, c6, c7, d0, d1, d2, d3, d4, d5, d6, d7;
    Copyable copy() { try { return (Copyable) clone(); } catch (CloneNotSupportedException e) { throw new IllegalStateException(e); } }
  }
  public int objectClones() { Copyable c = new Copyable(); List<Object> kept = new ArrayList<>(); for (;;) kept.add(c.copy()); }
  record Named(String name) {}
  public int recordTexts() { Named n = new Named("x".repeat(1_000_000)); List<Object> kept = new ArrayList<>(); for (;;) kept.add(n.toString()); }
  public int bitSetClones() { BitSet bits = new BitSet(); bits.set(1_000_000); List<Object> kept = new ArrayList<>(); for (;;) kept.add(bits.clone()); }
  public int listClones() {
    ArrayList<Integer> list = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) list.add(i);
    List<Object> kept = new ArrayList<>();
    for (;;) kept.add(list.clone());
  }
  public int addAllCopies() { Integer[] many = new Integer[100_000]; List<Object> kept = new ArrayList<>(); for (;;) { List<Integer> l = new ArrayList<>(); Collections.addAll(l, many); kept.add(l); } }
  record Holder(List<String> items) {}
  static final class Shown { final String text; Shown(String text) { this.text = text; } public String toString() { return text; } }
  /** text the JDK makes from 1,000 references to one 1,000,000-character String (10^9 characters), by each way in */
  public int elementsText(int way) {
    String big = "x".repeat(1_000_000);
    List<String> list = new ArrayList<>();
    for (int i = 0; i < 1000; i++) list.add(big);
    switch (way) {
      case 0: return list.toString().length();
      case 1: return String.valueOf(list).length();
      case 2: return ("" + list).length();
      case 3: return String.join(",", list).length();
      case 4: return list.stream().collect(Collectors.joining()).length();
      case 5: { StringJoiner j = new StringJoiner(","); for (String s : list) j.add(s); return j.toString().length(); }
      case 6: return new StringBuilder().append(list).length();
      case 7: { Map<Integer, List<String>> m = new TreeMap<>(); m.put(1, list); return m.toString().length(); }
      case 8: return Arrays.toString(list.toArray()).length();
      case 9: return new Holder(list).toString().length();
      case 10: { Shown shown = new Shown(big); List<Object> own = new ArrayList<>(); for (int i = 0; i < 1000; i++) own.add(shown); return own.toString().length(); }
      default: { String s = "x".repeat(8_000_000); return (${Array.from({ length: 100 }, () => 's').join(' + ')}).length(); }
    }
  }
  public int retain() { long[] before = HOLD[0]; HOLD[0] = new long[6_000_000]; return before == null ? 0 : before.length; }
}
`

/** Classes the deploy must refuse, each a way into state that outlives a call or into unmetered work. */
export const REFUSED_SOURCES: Record<string, { source: string; reason: RegExp }> = {
  'r.ValueSubclass': {
    source: `package r;
import java.math.BigInteger;
public class ValueSubclass extends keel.contract.Contract {
  static final class Counter extends BigInteger { int n; Counter() { super("0"); } }
  static final BigInteger HITS = new Counter();
  public int hit() { return ++((Counter) HITS).n; }
}`,
    reason: /extending java\.math\.BigInteger is not allowed/,
  },
  'r.EnumBody': {
    source: `package r;
public class EnumBody extends keel.contract.Contract {
  enum Hits { ONE { int n; int next() { return ++n; } }; abstract int next(); }
  public int hit() { return Hits.ONE.next(); }
}`,
    reason: /enum constants are shared by every call/,
  },
  'r.Intern': {
    source: `package r;
public class Intern extends keel.contract.Contract {
  public boolean first(String s) { String t = new String(s); return t.intern() == t; }
}`,
    reason: /java\.lang\.String\.intern is not allowed/,
  },
  'r.Salted': {
    source: `package r;
public class Salted extends keel.contract.Contract {
  public String order() { return java.util.Set.of("a", "b", "c", "d", "e", "f", "g", "h").toString(); }
}`,
    reason: /java\.util\.Set\.of is not allowed \(their iteration order is salted/,
  },
  'r.Regex': {
    source: `package r;
public class Regex extends keel.contract.Contract {
  public boolean bad(String s) { return s.matches("(a+)+b"); }
}`,
    reason: /java\.lang\.String\.matches is not allowed \(regular expressions/,
  },
  'r.AdderReference': {
    source: `package r;
import java.util.ArrayList;
import java.util.List;
public class AdderReference extends keel.contract.Contract {
  public int copy() { List<Integer> from = new ArrayList<>(); from.add(1); List<Integer> to = new ArrayList<>(); from.forEach(to::add); return to.size(); }
}`,
    reason: /method reference to java\.util\.List\.add is not allowed \(the JDK would call it for each element it passes/,
  },
  'r.PowReference': {
    source: `package r;
import java.math.BigInteger;
import java.util.function.BiFunction;
public class PowReference extends keel.contract.Contract {
  public int pow() { BiFunction<BigInteger, Integer, BigInteger> p = BigInteger::pow; return p.apply(BigInteger.TEN, 100_000_000).bitLength(); }
}`,
    reason: /method reference to java\.math\.BigInteger\.pow is not allowed/,
  },
}

/** A call of Hostile and how it must end: `ok` with this ret, or failed with this kind and reason. */
export interface HostileCase {
  name: string
  method: string
  args: string[]
  expect: { ret: string } | { kind: string; error: RegExp }
}

export const HOSTILE_CASES: HostileCase[] = [
  { name: 'swapped slots of a nested static array', method: 'swap', args: [], expect: { ret: '1,2' } },
  // javac covers the entry of a finally holding a loop with the handler's own range when the finally
  // follows a local variable (these shapes): the stop used to be caught there again and again
  { name: 'finally after the budget ran out', method: 'finallyAfterSpin', args: [], expect: { kind: 'budget', error: /step budget/ } },
  { name: 'a loop inside finally', method: 'loopInFinally', args: [], expect: { kind: 'budget', error: /step budget/ } },
  { name: 'a spin inside finally', method: 'spinInFinally', args: [], expect: { kind: 'budget', error: /step budget/ } },
  { name: 'try-with-resources on an own AutoCloseable', method: 'resources', args: [], expect: { ret: 'open;use;close;' } },
  { name: 'try-with-resources round a spin', method: 'resourcesSpin', args: [], expect: { kind: 'budget', error: /step budget/ } },
  { name: 'catch (Throwable) round a spin', method: 'catchAll', args: [], expect: { kind: 'budget', error: /step budget/ } },
  // each element a JDK stream source makes is charged a step and 16 bytes (as if boxed): the memory runs out first
  {
    name: 'a stream over a huge range',
    method: 'rangeSum',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'an endless stream of a JDK function',
    method: 'iterateCount',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'split by a regular expression',
    method: 'split',
    args: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaa!', '(a+)+b'],
    expect: { kind: 'exception', error: /split takes one character/ },
  },
  { name: 'split by one character', method: 'split', args: ['a,b,c', ','], expect: { ret: '3' } },
  {
    name: 'BigInteger squared through a function value',
    method: 'square',
    args: ['40'],
    // multiplying is charged quadratically in the operands' words before it runs: the budget ends it first
    expect: { kind: 'budget', error: /step budget/ },
  },
  {
    name: 'a BigDecimal argument with a huge exponent',
    method: 'plain',
    args: ['1e-999999999'],
    expect: { kind: 'bad-args', error: /argument 1 of plain is not a BigDecimal: a BigDecimal with scale 999999999 exceeds the limit/ },
  },
  {
    name: 'a BigDecimal argument with a large exponent',
    method: 'plain',
    args: ['1e-1000000'],
    expect: { kind: 'budget', error: /step budget/ },
  },
  {
    name: 'an ArrayList of capacity 30,000,000',
    method: 'capacity',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'a string doubled 40 times',
    method: 'doubling',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  { name: 'a 1 GiB array', method: 'bigArray', args: [], expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ } },
  { name: 'a 56 MB array within the budget', method: 'almostBudget', args: [], expect: { ret: '7000000' } },
  {
    name: 'an 8 MiB return value',
    method: 'bigReturn',
    args: [],
    expect: { kind: 'limit', error: /the return value exceeds 65536 bytes/ },
  },
  {
    name: "a JDK list's hash through an Object reference, a million times",
    method: 'listHash',
    args: ['100000'],
    expect: { kind: 'budget', error: /step budget/ },
  },
  {
    name: 'a HashMap of keys that compare by identity (one bucket: identity hashes are all 1)',
    method: 'identityKeys',
    args: ['100000'],
    expect: { kind: 'budget', error: /step budget/ },
  },
  { name: 'a quadratic substring search', method: 'search', args: ['1000000'], expect: { kind: 'budget', error: /step budget/ } },
]

/**
 * Allocation-heavy calls: each keeps what it makes alive until its budget ends it. The outcome may
 * depend on the executor's heap nowhere (test/unit/exec/jvm-hostile.test.ts runs them on the
 * smallest heap the executor accepts and on a large one, and across a restart).
 */
export const ALLOCATION_CASES: HostileCase[] = [
  { name: 'a HashMap filled until the budget ends', method: 'mapFill', args: [], expect: { kind: 'budget', error: /step budget/ } },
  { name: 'a TreeMap filled until the budget ends', method: 'treeFill', args: [], expect: { kind: 'budget', error: /step budget/ } },
  { name: 'an ArrayList grown until the budget ends', method: 'listGrowth', args: [], expect: { kind: 'budget', error: /step budget/ } },
  { name: 'boxed values made and dropped', method: 'boxedChurn', args: [], expect: { kind: 'budget', error: /step budget/ } },
  {
    name: 'a StringBuilder grown by a 60,000-character text',
    method: 'builderText',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'a StringBuilder grown by numbers',
    method: 'builderNumbers',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'a chain of objects of 64 long fields',
    method: 'fatObjects',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    // each records 380 frames: charged by the depth in steps (the walk) and memory (the trace)
    name: 'exceptions made 350 frames deep and kept',
    method: 'deepThrowables',
    args: ['350'],
    expect: { kind: 'budget', error: /step budget/ },
  },
  {
    name: 'a stream collected again and again (distinct, toList)',
    method: 'distinctCopies',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'EnumMaps of an enum of 1,000 constants',
    method: 'enumMaps',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: "an enum's values(), again and again",
    method: 'enumValues',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'clones of a 100,000-element array',
    method: 'arrayClones',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'clones of an object of 32 long fields',
    method: 'objectClones',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: "a record's toString of a 1,000,000-character field, kept",
    method: 'recordTexts',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'clones of a BitSet of 1,000,000 bits',
    method: 'bitSetClones',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'clones of an ArrayList of 10,000 elements',
    method: 'listClones',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'Collections.addAll of 100,000 elements, again and again',
    method: 'addAllCopies',
    args: [],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: "a collection's toString of 1,000 references to a 1,000,000-character String",
    method: 'elementsText',
    args: ['0'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'String.valueOf of a collection of 1,000 references to a 1,000,000-character String',
    method: 'elementsText',
    args: ['1'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'a collection concatenated to a String of 1,000 references to a 1,000,000-character String',
    method: 'elementsText',
    args: ['2'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'String.join of a collection of 1,000 references to a 1,000,000-character String',
    method: 'elementsText',
    args: ['3'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'Collectors.joining of 1,000 references to a 1,000,000-character String',
    method: 'elementsText',
    args: ['4'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'a StringJoiner of 1,000 references to a 1,000,000-character String',
    method: 'elementsText',
    args: ['5'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'a collection appended to a StringBuilder of 1,000 references to a 1,000,000-character String',
    method: 'elementsText',
    args: ['6'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: "a map's toString, of a collection of 1,000 references to a 1,000,000-character String",
    method: 'elementsText',
    args: ['7'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: 'Arrays.toString of 1,000 references to a 1,000,000-character String',
    method: 'elementsText',
    args: ['8'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    name: "a record's toString, of a collection of 1,000 references to a 1,000,000-character String",
    method: 'elementsText',
    args: ['9'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  {
    // its toString is contract code the JDK would call for each reference: its length is not known before
    name: "a collection's toString of 1,000 references to an own object whose text is 1,000,000 characters",
    method: 'elementsText',
    args: ['10'],
    expect: { kind: 'exception', error: /h\.Hostile\$Shown, whose text is not known before the JDK builds it/ },
  },
  {
    name: 'a concatenation of 100 Strings of 8,000,000 characters',
    method: 'elementsText',
    args: ['11'],
    expect: { kind: 'memory', error: /memory budget of 64 MiB exceeded/ },
  },
  { name: 'a static slot given a 48 MB array in every call', method: 'retain', args: [], expect: { ret: '0' } },
]

export const compileHostile = () => compileJava({ 'h/Hostile.java': HOSTILE_SOURCE }, 'h.Hostile')

export async function compileRefused() {
  const sources: Record<string, string> = {}
  for (const [main, { source }] of Object.entries(REFUSED_SOURCES)) sources[`${main.replace('.', '/')}.java`] = source
  const all = await compileJava(sources, Object.keys(REFUSED_SOURCES)[0])
  const out = new Map<string, { main: string; classes: Map<string, Uint8Array> }>()
  for (const main of Object.keys(REFUSED_SOURCES)) {
    const prefix = main.replace('.', '/')
    out.set(main, { main, classes: new Map([...all.classes].filter(([name]) => name === prefix || name.startsWith(`${prefix}$`))) })
  }
  return out
}
