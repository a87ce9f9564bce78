package keel.jvm;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.DoubleSupplier;
import java.util.function.DoubleUnaryOperator;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import java.util.function.IntSupplier;
import java.util.function.IntUnaryOperator;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;
import java.util.function.ObjDoubleConsumer;
import java.util.function.ObjIntConsumer;
import java.util.function.ObjLongConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Collector;
import java.util.stream.DoubleStream;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;

/**
 * JDK calls redirected here by the Instrumenter (a static method taking the receiver first) where a
 * charge needs more than the call's operands (JdkCosts): an exponent or shift that sets the size of
 * the result, a stream source the JDK drives by itself (each element charged), `split` by a literal
 * only, a BitSet's growth, appending an object's text. Also the size limits of numbers.
 */
public final class Guards {
  private Guards() {}

  /** largest number a guarded BigInteger/BigDecimal operation may produce, in bits */
  static final long MAX_BITS = 1 << 20;
  /** largest scale (either sign) of a BigDecimal a contract may hold: 10^scale has about MAX_BITS × 3 bits */
  static final long MAX_SCALE = 1 << 20;

  /**
   * The size limits every number a contract holds is within (checked where numbers enter: a call's
   * arguments, and every JDK call returning one), so no single operation on them is unbounded.
   * Returns the number's size in bits.
   */
  static long checkNumber(Object n) {
    if (n instanceof BigInteger) {
      long bits = ((BigInteger) n).bitLength();
      if (bits > MAX_BITS) throw new ArithmeticException("a BigInteger of " + bits + " bits exceeds the limit of " + MAX_BITS + " bits");
      return bits;
    }
    BigDecimal d = (BigDecimal) n;
    if (Math.abs((long) d.scale()) > MAX_SCALE)
      throw new ArithmeticException("a BigDecimal with scale " + d.scale() + " exceeds the limit of ±" + MAX_SCALE);
    long bits = d.unscaledValue().bitLength();
    if (bits > MAX_BITS) throw new ArithmeticException("a BigDecimal of " + bits + " bits exceeds the limit of " + MAX_BITS + " bits");
    return bits;
  }

  private static void bits(long bits, String what) {
    if (bits > MAX_BITS) throw new ArithmeticException(what + ": the result would exceed " + MAX_BITS + " bits");
    Meter.allocate(bits / 8 + 16);
    // multiplication work grows faster than the size
    Meter.charge((bits / 64) * (bits / 64) / 64);
  }

  public static BigInteger pow(BigInteger base, int exponent) {
    if (exponent > 0) bits((long) base.bitLength() * exponent, "BigInteger.pow");
    return base.pow(exponent);
  }

  public static BigInteger shiftLeft(BigInteger value, int n) {
    if (n > 0) bits((long) value.bitLength() + n, "BigInteger.shiftLeft");
    return value.shiftLeft(n);
  }

  public static BigDecimal pow(BigDecimal base, int exponent) {
    if (exponent > 0) bits((long) base.unscaledValue().bitLength() * exponent, "BigDecimal.pow");
    return base.pow(exponent);
  }

  public static String repeat(String s, int count) {
    if (count > 0) Meter.allocate((long) s.length() * count * 2 + 16);
    return s.repeat(count);
  }

  public static <T> List<T> nCopies(int count, T value) {
    // the list itself is small, but whatever copies it from here is as long as `count`
    if (count > 0) Meter.allocate(8L * count);
    return Collections.nCopies(count, value);
  }

  // ---- stream sources the JDK drives by itself: every element they produce is charged ----

  public static IntStream intRange(int from, int to) {
    return IntStream.range(from, to).filter(x -> Meter.element());
  }

  public static IntStream intRangeClosed(int from, int to) {
    return IntStream.rangeClosed(from, to).filter(x -> Meter.element());
  }

  public static LongStream longRange(long from, long to) {
    return LongStream.range(from, to).filter(x -> Meter.element());
  }

  public static LongStream longRangeClosed(long from, long to) {
    return LongStream.rangeClosed(from, to).filter(x -> Meter.element());
  }

  public static IntStream intIterate(int seed, IntUnaryOperator next) {
    return IntStream.iterate(seed, next).filter(x -> Meter.element());
  }

  public static IntStream intIterate(int seed, IntPredicate hasNext, IntUnaryOperator next) {
    return IntStream.iterate(seed, hasNext, next).filter(x -> Meter.element());
  }

  public static IntStream intGenerate(IntSupplier s) {
    return IntStream.generate(s).filter(x -> Meter.element());
  }

  public static LongStream longIterate(long seed, LongUnaryOperator next) {
    return LongStream.iterate(seed, next).filter(x -> Meter.element());
  }

  public static LongStream longIterate(long seed, LongPredicate hasNext, LongUnaryOperator next) {
    return LongStream.iterate(seed, hasNext, next).filter(x -> Meter.element());
  }

  public static LongStream longGenerate(LongSupplier s) {
    return LongStream.generate(s).filter(x -> Meter.element());
  }

  public static DoubleStream doubleIterate(double seed, DoubleUnaryOperator next) {
    return DoubleStream.iterate(seed, next).filter(x -> Meter.element());
  }

  public static DoubleStream doubleGenerate(DoubleSupplier s) {
    return DoubleStream.generate(s).filter(x -> Meter.element());
  }

  public static <T> Stream<T> objectIterate(T seed, UnaryOperator<T> next) {
    return Stream.iterate(seed, next).filter(x -> Meter.element());
  }

  public static <T> Stream<T> objectIterate(T seed, Predicate<? super T> hasNext, UnaryOperator<T> next) {
    return Stream.iterate(seed, hasNext, next).filter(x -> Meter.element());
  }

  public static <T> Stream<T> objectGenerate(Supplier<? extends T> s) {
    return Stream.<T>generate(s).filter(x -> Meter.element());
  }

  // ---- split by a literal only: a regular expression's backtracking is not metered ----

  private static final String META = ".$|()[{^?*+\\";

  private static void literal(String regex) {
    boolean one = regex.length() == 1 && META.indexOf(regex.charAt(0)) < 0;
    boolean escaped = regex.length() == 2 && regex.charAt(0) == '\\' && !Character.isLetterOrDigit(regex.charAt(1));
    if (!one && !escaped)
      throw new IllegalArgumentException("split takes one character (or a backslash and one punctuation character), not the regular expression \"" + regex + "\"");
  }

  public static String[] split(String s, String regex) {
    literal(regex);
    Meter.allocate(2L * s.length() + 16);
    return s.split(regex);
  }

  public static String[] split(String s, String regex, int limit) {
    literal(regex);
    Meter.allocate(2L * s.length() + 16);
    return s.split(regex, limit);
  }

  // ---- a BitSet grows to the highest bit set: the growth is charged ----

  private static void grow(BitSet b, int highest) {
    if (highest >= b.size()) Meter.allocate(((long) highest - b.size()) / 8 + 16);
  }

  public static void set(BitSet b, int i) {
    grow(b, i);
    b.set(i);
  }

  public static void set(BitSet b, int i, boolean v) {
    grow(b, i);
    b.set(i, v);
  }

  public static void set(BitSet b, int from, int to) {
    grow(b, to);
    b.set(from, to);
  }

  public static void set(BitSet b, int from, int to, boolean v) {
    grow(b, to);
    b.set(from, to, v);
  }

  public static void flip(BitSet b, int i) {
    grow(b, i);
    b.flip(i);
  }

  public static void flip(BitSet b, int from, int to) {
    grow(b, to);
    b.flip(from, to);
  }

  // ---- appending an object appends its text: charged as that text ----

  /**
   * Text a builder takes in is charged 8 bytes a character (JdkCosts.TEXT_BYTES): two for the
   * character in UTF-16, and room for the builder's growth (it doubles, and holds the old array
   * while it copies), so a builder never holds more than was charged for it.
   */
  public static StringBuilder append(StringBuilder b, Object o) {
    String s = String.valueOf(o);
    Meter.allocate(JdkCosts.TEXT_BYTES * s.length());
    return b.append(s);
  }

  public static StringBuffer append(StringBuffer b, Object o) {
    String s = String.valueOf(o);
    Meter.allocate(JdkCosts.TEXT_BYTES * s.length());
    return b.append(s);
  }

  // the longest text of each primitive: a char 1, a boolean 5 (false), an int 11, a long 20, a float 15, a double 24

  public static StringBuilder append(StringBuilder b, char c) {
    Meter.allocate(JdkCosts.TEXT_BYTES);
    return b.append(c);
  }

  public static StringBuilder append(StringBuilder b, boolean v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 5);
    return b.append(v);
  }

  public static StringBuilder append(StringBuilder b, int v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 11);
    return b.append(v);
  }

  public static StringBuilder append(StringBuilder b, long v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 20);
    return b.append(v);
  }

  public static StringBuilder append(StringBuilder b, float v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 15);
    return b.append(v);
  }

  public static StringBuilder append(StringBuilder b, double v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 24);
    return b.append(v);
  }

  public static StringBuilder appendCodePoint(StringBuilder b, int v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 2);
    return b.appendCodePoint(v);
  }

  public static StringBuffer append(StringBuffer b, char c) {
    Meter.allocate(JdkCosts.TEXT_BYTES);
    return b.append(c);
  }

  public static StringBuffer append(StringBuffer b, boolean v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 5);
    return b.append(v);
  }

  public static StringBuffer append(StringBuffer b, int v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 11);
    return b.append(v);
  }

  public static StringBuffer append(StringBuffer b, long v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 20);
    return b.append(v);
  }

  public static StringBuffer append(StringBuffer b, float v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 15);
    return b.append(v);
  }

  public static StringBuffer append(StringBuffer b, double v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 24);
    return b.append(v);
  }

  public static StringBuffer appendCodePoint(StringBuffer b, int v) {
    Meter.allocate(JdkCosts.TEXT_BYTES * 2);
    return b.appendCodePoint(v);
  }

  // ---- stream operations that hold every element at once: each element reaching them is charged ----

  public static <T> Stream<T> objectDistinct(Stream<T> s) {
    return s.peek(x -> Meter.buffered()).distinct();
  }

  public static <T> Stream<T> objectSorted(Stream<T> s) {
    return s.peek(x -> Meter.buffered()).sorted();
  }

  public static <T> Stream<T> objectSorted(Stream<T> s, Comparator<? super T> c) {
    return s.peek(x -> Meter.buffered()).sorted(c);
  }

  public static <T, R, A> R objectCollect(Stream<T> s, Collector<? super T, A, R> c) {
    return s.peek(x -> Meter.buffered()).collect(c);
  }

  public static <T, R> R objectCollect(Stream<T> s, Supplier<R> make, BiConsumer<R, ? super T> add, BiConsumer<R, R> merge) {
    return s.peek(x -> Meter.buffered()).collect(make, add, merge);
  }

  public static <T> List<T> objectToList(Stream<T> s) {
    return s.peek(x -> Meter.buffered()).toList();
  }

  public static <T> Object[] objectToArray(Stream<T> s) {
    return s.peek(x -> Meter.buffered()).toArray();
  }

  public static <T, A> A[] objectToArray(Stream<T> s, IntFunction<A[]> make) {
    return s.peek(x -> Meter.buffered()).toArray(make);
  }

  public static IntStream intDistinct(IntStream s) {
    return s.peek(x -> Meter.buffered()).distinct();
  }

  public static IntStream intSorted(IntStream s) {
    return s.peek(x -> Meter.buffered()).sorted();
  }

  public static int[] intToArray(IntStream s) {
    return s.peek(x -> Meter.buffered()).toArray();
  }

  public static <R> R intCollect(IntStream s, Supplier<R> make, ObjIntConsumer<R> add, BiConsumer<R, R> merge) {
    return s.peek(x -> Meter.buffered()).collect(make, add, merge);
  }

  public static LongStream longDistinct(LongStream s) {
    return s.peek(x -> Meter.buffered()).distinct();
  }

  public static LongStream longSorted(LongStream s) {
    return s.peek(x -> Meter.buffered()).sorted();
  }

  public static long[] longToArray(LongStream s) {
    return s.peek(x -> Meter.buffered()).toArray();
  }

  public static <R> R longCollect(LongStream s, Supplier<R> make, ObjLongConsumer<R> add, BiConsumer<R, R> merge) {
    return s.peek(x -> Meter.buffered()).collect(make, add, merge);
  }

  public static DoubleStream doubleDistinct(DoubleStream s) {
    return s.peek(x -> Meter.buffered()).distinct();
  }

  public static DoubleStream doubleSorted(DoubleStream s) {
    return s.peek(x -> Meter.buffered()).sorted();
  }

  public static double[] doubleToArray(DoubleStream s) {
    return s.peek(x -> Meter.buffered()).toArray();
  }

  public static <R> R doubleCollect(DoubleStream s, Supplier<R> make, ObjDoubleConsumer<R> add, BiConsumer<R, R> merge) {
    return s.peek(x -> Meter.buffered()).collect(make, add, merge);
  }
}
