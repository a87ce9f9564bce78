package keel.jvm;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.BitSet;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.StringJoiner;
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
import java.util.stream.Collectors;
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
    text(o);
    String s = String.valueOf(o);
    Meter.allocate(JdkCosts.TEXT_BYTES * s.length());
    return b.append(s);
  }

  public static StringBuffer append(StringBuffer b, Object o) {
    text(o);
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

  // ---- text the JDK makes from a container's elements: bounded and charged before it is made ----

  /**
   * A text longer than this many characters is over every memory budget (TEXT_BYTES a character):
   * measuring stops there, so the bound of a huge nesting costs no more steps than reaching it.
   */
  static final long TEXT_CAP = 1L << 40;
  /** containers nested deeper than this are not measured (an indirect cycle would never end) */
  static final int TEXT_DEPTH = 64;

  private static long add(long a, long b) {
    long s = a + b;
    return s < 0 || s > TEXT_CAP ? TEXT_CAP + 1 : s;
  }

  /** whether a class is the contract's own (its methods are contract code, metered as they run) */
  private static boolean own(Class<?> c) {
    return c.getClassLoader() instanceof ContractLoader;
  }

  /** the class declaring `o`'s toString() */
  private static final ClassValue<Class<?>> TO_STRING =
      new ClassValue<>() {
        @Override
        protected Class<?> computeValue(Class<?> type) {
          try {
            return type.getMethod("toString").getDeclaringClass();
          } catch (NoSuchMethodException e) {
            return Object.class;
          }
        }
      };

  private static final ClassValue<java.lang.reflect.Field[]> RECORD_FIELDS =
      new ClassValue<>() {
        @Override
        protected java.lang.reflect.Field[] computeValue(Class<?> type) {
          List<java.lang.reflect.Field> out = new java.util.ArrayList<>();
          for (java.lang.reflect.Field f : type.getDeclaredFields()) {
            if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) continue;
            f.setAccessible(true);
            out.add(f);
          }
          return out.toArray(new java.lang.reflect.Field[0]);
        }
      };

  private static UnsupportedOperationException opaque(Object o) {
    return new UnsupportedOperationException(
        "the JDK cannot make text from a collection, map, array, Optional or record holding an object of "
            + o.getClass().getName()
            + ", whose text is not known before the JDK builds it (its toString is the contract's own, or one the executor does not measure); build the text with a StringBuilder");
  }

  /**
   * The longest text String.valueOf(o) can be, in characters: a String's or builder's length, a boxed
   * value's longest text, a JDK container's elements' (recursively, with the JDK's separators).
   * One step for each element measured. An object whose toString is the contract's own (or a
   * provided class's) is refused when it is inside a container (`nested`): the JDK would call it
   * once per reference, and what it returns is not known before.
   */
  static long textBound(Object o, int depth, boolean nested) {
    Meter.charge(1);
    if (o == null) return 4;
    if (o instanceof String) return ((String) o).length();
    if (o instanceof StringBuilder) return ((StringBuilder) o).length();
    if (o instanceof StringBuffer) return ((StringBuffer) o).length();
    if (o instanceof Integer) return 11;
    if (o instanceof Long) return 20;
    if (o instanceof Short) return 6;
    if (o instanceof Byte) return 4;
    if (o instanceof Character) return 1;
    if (o instanceof Boolean) return 5;
    if (o instanceof Float) return 15;
    if (o instanceof Double) return 24;
    // a decimal digit is more than 3 bits; a BigDecimal's text adds at most a sign, a point, 7 zeros or an exponent
    if (o instanceof BigInteger) return ((BigInteger) o).bitLength() / 3 + 2;
    if (o instanceof BigDecimal) return ((BigDecimal) o).unscaledValue().bitLength() / 3 + 24;
    if (o instanceof java.math.MathContext) return 64;
    if (o instanceof OptionalInt || o instanceof OptionalLong || o instanceof OptionalDouble) return 40;
    if (o instanceof StringJoiner) return ((StringJoiner) o).length();
    if (o instanceof BitSet) return 2 + 13L * ((BitSet) o).cardinality();
    Class<?> type = o.getClass();
    Class<?> declaring = TO_STRING.get(type);
    if (declaring == Object.class || declaring == Enum.class && o instanceof Enum) {
      // "name@hash", or an enum constant's name
      return o instanceof Enum ? ((Enum<?>) o).name().length() : type.getName().length() + 9;
    }
    if (declaring.getClassLoader() != null && !(o instanceof Collection) && !(o instanceof Map)) {
      // the contract's own toString (or a provided class's): contract code where it stands alone, unknown inside a container
      if (!nested) return 0;
      throw opaque(o);
    }
    if (depth >= TEXT_DEPTH)
      throw new UnsupportedOperationException("the JDK cannot make text from containers nested more than " + TEXT_DEPTH + " deep");
    if (o instanceof Collection || o instanceof Map) {
      if (declaring.getClassLoader() != null) {
        if (!nested) return 0;
        throw opaque(o);
      }
      return containerBound(o, depth);
    }
    if (o instanceof Map.Entry) {
      Map.Entry<?, ?> e = (Map.Entry<?, ?>) o;
      return add(1 + textBound(e.getKey(), depth + 1, true), textBound(e.getValue(), depth + 1, true));
    }
    if (o instanceof Optional) return 10 + textBound(((Optional<?>) o).orElse(null), depth + 1, true);
    if (o instanceof Throwable && declaring == Throwable.class && !own(type)) {
      String m = ((Throwable) o).getMessage();
      return type.getName().length() + 2 + (m == null ? 0 : m.length());
    }
    // any other JDK object an allowed class can hand out: its text is its own fixed form (a charset's name, a lambda's class)
    if (!nested) return 0;
    throw opaque(o);
  }

  /** a collection's text ("[a, b]", "(this Collection)" for itself) or a map's ("{k=v}", "(this Map)") as the JDK's abstract classes make it */
  private static long containerBound(Object o, int depth) {
    long total = 2;
    if (o instanceof Collection) {
      for (Object e : (Collection<?>) o) {
        total = add(total, 2 + (e == o ? 17 : textBound(e, depth + 1, true)));
        if (total > TEXT_CAP) return total;
      }
      return total;
    }
    for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
      Object k = e.getKey(), v = e.getValue();
      total = add(total, 3 + (k == o ? 10 : textBound(k, depth + 1, true)));
      total = add(total, v == o ? 10 : textBound(v, depth + 1, true));
      if (total > TEXT_CAP) return total;
    }
    return total;
  }

  /** Before `super.toString()` naming a JDK class: a subclass of a JDK collection or map gets the JDK's text of its elements. */
  public static void superText(Object o) {
    if (o instanceof Collection || o instanceof Map) {
      Meter.charge(1);
      Meter.allocate(JdkCosts.TEXT_BYTES * containerBound(o, 0));
    }
  }

  private static long recordBound(Object o, int depth, boolean nested) {
    if (nested) throw opaque(o);
    long total = o.getClass().getSimpleName().length() + 2;
    for (java.lang.reflect.Field f : RECORD_FIELDS.get(o.getClass())) {
      Object v;
      try {
        v = f.get(o);
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
      total = add(total, f.getName().length() + 3 + textBound(v, depth + 1, true));
    }
    return total;
  }

  /**
   * Before the JDK makes text from `o` (its toString, String.valueOf, Objects.toString, appending or
   * inserting it in a builder, concatenating it): a JDK container's longest text is charged to
   * memory, TEXT_BYTES a character (the JDK builds it in a builder that doubles), so it is refused by
   * the budget before it is made. Anything else makes text that is contract code's or charged after.
   */
  public static void text(Object o) {
    if (o == null || o instanceof String || o instanceof StringBuilder || o instanceof StringBuffer) return;
    if (o instanceof Collection || o instanceof Map || o instanceof Map.Entry || o instanceof Optional || o instanceof BitSet) {
      if (TO_STRING.get(o.getClass()).getClassLoader() != null) return; // the contract's own toString: contract code
      Meter.allocate(JdkCosts.TEXT_BYTES * textBound(o, 0, false));
    }
  }

  /** A record's toString (javac's, made by the JDK from its fields): its longest text, charged before. */
  public static void recordText(Object record) {
    if (record != null && record.getClass().isRecord()) Meter.allocate(JdkCosts.TEXT_BYTES * recordBound(record, 0, false));
  }

  /** Before Arrays.toString / deepToString: the text of every element (an array's elements too, when `deep`). */
  private static long arrayBound(Object a, int depth, boolean deep) {
    Meter.charge(1);
    if (a == null) return 4;
    if (depth >= TEXT_DEPTH)
      throw new UnsupportedOperationException("the JDK cannot make text from arrays nested more than " + TEXT_DEPTH + " deep");
    int n = java.lang.reflect.Array.getLength(a);
    Class<?> t = a.getClass().getComponentType();
    if (t.isPrimitive()) {
      Meter.charge(n >> 4);
      long each = t == char.class ? 1 : t == boolean.class ? 5 : t == long.class ? 20 : t == float.class ? 15 : t == double.class ? 24 : 11;
      return 2 + (each + 2) * n;
    }
    long total = 2;
    for (Object e : (Object[]) a) {
      total = add(total, 2 + (deep && e != null && e.getClass().isArray() ? (e == a ? 5 : arrayBound(e, depth + 1, true)) : textBound(e, depth + 1, true)));
      if (total > TEXT_CAP) return total;
    }
    return total;
  }

  public static void arrayText(Object a) {
    Meter.allocate(JdkCosts.TEXT_BYTES * arrayBound(a, 0, false));
  }

  public static void deepArrayText(Object a) {
    Meter.allocate(JdkCosts.TEXT_BYTES * arrayBound(a, 0, true));
  }

  /**
   * An operand of string concatenation (javac's invokedynamic) that is not a String: made a String
   * here, a JDK container's text charged before it is made, so the concatenation sees only Strings
   * and primitives, whose lengths are charged before it runs ({@link #concat}).
   */
  public static String concatOperand(Object o) {
    text(o);
    return String.valueOf(o);
  }

  /** Before a concatenation: its operands' text (the Strings' lengths and the primitives' longest), two bytes a character. */
  public static void concat(long characters) {
    Meter.allocate(2 * characters + 24);
  }

  public static long length(String s) {
    return s == null ? 4 : s.length();
  }

  // ---- joining: each element's text and a delimiter, charged as it is added ----

  private static String joined(CharSequence cs) {
    return String.valueOf(cs);
  }

  public static String join(CharSequence delimiter, CharSequence[] elements) {
    String d = String.valueOf(delimiter);
    String[] texts = new String[elements.length];
    Meter.allocate(8L * elements.length + 16);
    long total = 0;
    for (int i = 0; i < elements.length; i++) {
      Meter.charge(1);
      texts[i] = joined(elements[i]);
      total = add(total, texts[i].length() + d.length());
      if (total > TEXT_CAP) break;
    }
    Meter.allocate(JdkCosts.TEXT_BYTES * total);
    return String.join(d, texts);
  }

  public static String join(CharSequence delimiter, Iterable<? extends CharSequence> elements) {
    String d = String.valueOf(delimiter);
    List<String> texts = new java.util.ArrayList<>();
    long total = 0;
    for (Iterator<? extends CharSequence> it = elements.iterator(); it.hasNext(); ) {
      Meter.charge(1);
      Meter.allocate(8);
      String t = joined(it.next());
      texts.add(t);
      total = add(total, t.length() + d.length());
      if (total > TEXT_CAP) break;
    }
    Meter.allocate(JdkCosts.TEXT_BYTES * total);
    return String.join(d, texts);
  }

  public static StringJoiner add(StringJoiner joiner, CharSequence element) {
    int before = joiner.length();
    joiner.add(joined(element));
    Meter.allocate(JdkCosts.TEXT_BYTES * Math.max(0, joiner.length() - before));
    return joiner;
  }

  public static StringJoiner merge(StringJoiner joiner, StringJoiner other) {
    int before = joiner.length();
    joiner.merge(other);
    Meter.allocate(JdkCosts.TEXT_BYTES * Math.max(0, joiner.length() - before));
    return joiner;
  }

  private static Collector<CharSequence, ?, String> charging(long delimiter, Collector<CharSequence, ?, String> joining) {
    return Collectors.mapping(
        (CharSequence cs) -> {
          String t = joined(cs);
          Meter.allocate(JdkCosts.TEXT_BYTES * (t.length() + delimiter));
          return (CharSequence) t;
        },
        joining);
  }

  public static Collector<CharSequence, ?, String> joining() {
    return charging(0, Collectors.joining());
  }

  public static Collector<CharSequence, ?, String> joining(CharSequence delimiter) {
    return charging(delimiter.length(), Collectors.joining(delimiter));
  }

  public static Collector<CharSequence, ?, String> joining(CharSequence delimiter, CharSequence prefix, CharSequence suffix) {
    Meter.allocate(JdkCosts.TEXT_BYTES * ((long) prefix.length() + suffix.length()));
    return charging(delimiter.length(), Collectors.joining(delimiter, prefix, suffix));
  }

  /**
   * Collectors.toMap without a merge function: the JDK's duplicate-key exception writes both values'
   * text into its message (a container's, unbounded); this one names no value.
   */
  public static <T, K, U> Collector<T, ?, Map<K, U>> toMap(
      java.util.function.Function<? super T, ? extends K> key, java.util.function.Function<? super T, ? extends U> value) {
    return Collectors.toMap(
        key,
        value,
        (a, b) -> {
          throw new IllegalStateException("Duplicate key (two elements map to one key)");
        },
        java.util.HashMap::new);
  }
}
