package keel.jvm;

/**
 * The counters the instrumented contract code calls (Instrumenter). One call runs at a time on
 * one thread, so plain static fields serve; only the watchdog's time-out flag crosses threads.
 *
 * Once a call is stopped every later tick throws again (the limit drops below any count), so a
 * contract's `finally` block cannot keep running after the budget is gone.
 */
public final class Meter {
  private Meter() {}

  /** contract frames on the stack at most; far below the JVM's own limit with the executor's thread stack */
  static final int MAX_DEPTH = 400;

  private static long steps;
  private static volatile long limit;
  private static int depth;
  private static long memory;
  private static long memoryLimit;
  private static Stop stopped;

  /** Starts a call with fresh counters. */
  static void begin(long stepLimit, long memoryBytes) {
    steps = 0;
    limit = stepLimit;
    depth = 0;
    memory = 0;
    memoryLimit = memoryBytes;
    stopped = null;
  }

  /** The counters of a running call, kept while the executor loads a callee's code (not the call's work: nodes differ in what they have loaded). */
  static final class Saved {
    private final long steps, limit, memory, memoryLimit;
    private final int depth;
    private final Stop stopped;

    private Saved() {
      this.steps = Meter.steps;
      this.limit = Meter.limit;
      this.memory = Meter.memory;
      this.memoryLimit = Meter.memoryLimit;
      this.depth = Meter.depth;
      this.stopped = Meter.stopped;
    }
  }

  static Saved save() {
    return new Saved();
  }

  static void restore(Saved saved) {
    // a wall-clock stop decided meanwhile stays decided
    boolean timedOut = limit == Long.MIN_VALUE;
    steps = saved.steps;
    limit = timedOut ? Long.MIN_VALUE : saved.limit;
    memory = saved.memory;
    memoryLimit = saved.memoryLimit;
    depth = saved.depth;
    stopped = saved.stopped;
  }

  static long steps() {
    return steps;
  }

  static long memory() {
    return memory;
  }

  /** The watchdog's wall-clock stop: takes effect at the next tick. */
  static void timeOut() {
    limit = Long.MIN_VALUE;
  }

  /** Charges executor-side work (storage reads and writes, events) to the step budget. */
  static void charge(long n) {
    steps += n;
    if (steps > limit) exceeded();
  }

  public static void tick(int n) {
    if ((steps += n) > limit) exceeded();
  }

  private static void exceeded() {
    if (stopped == null) {
      stopped =
          limit == Long.MIN_VALUE
              ? new Stop(Stop.Kind.TIMEOUT, "wall-clock time-out")
              : new Stop(Stop.Kind.BUDGET, "step budget of " + limit + " exhausted");
      limit = -1;
    }
    throw stopped;
  }

  static Stop stop(Stop.Kind kind, String message) {
    if (stopped == null) stopped = new Stop(kind, message);
    limit = -1;
    return stopped;
  }

  public static void enter() {
    if (depth >= MAX_DEPTH) throw stop(Stop.Kind.DEPTH, "call depth of " + MAX_DEPTH + " contract frames exceeded");
    depth++;
  }

  public static void leave() {
    depth--;
  }

  /** Before `newarray`/`anewarray`: charges count × element size to the call's memory budget. */
  public static void array(int count, int elementSize) {
    if (count < 0) return; // the instruction throws NegativeArraySizeException itself
    allocate((long) count * elementSize + 16);
  }

  /** Before a two-dimensional `multianewarray` (one-dimensional: outer = 1): outer × inner elements. */
  public static void array2(int outer, int inner, int elementSize) {
    if (outer < 0 || inner < 0) return; // the instruction throws NegativeArraySizeException itself
    allocate((long) outer * (16 + (long) inner * elementSize) + 16 + 8L * outer);
  }

  /** Before a JDK constructor or method that reserves room for `count` elements (a capacity, a new length). */
  public static void capacity(int count, int elementSize) {
    if (count > 0) allocate((long) count * elementSize + 16);
  }

  /** Before `new` of an object of the contract's own class: its bytes (Instrumenter.objectBytes). */
  public static void object(int bytes) {
    allocate(bytes);
  }

  /** bytes of an object of a class: 16, and 8 a field (its super classes' included) */
  private static final ClassValue<Long> OBJECT_BYTES =
      new ClassValue<>() {
        @Override
        protected Long computeValue(Class<?> type) {
          long fields = 0;
          for (Class<?> c = type; c != null; c = c.getSuperclass())
            for (java.lang.reflect.Field f : c.getDeclaredFields()) if (!java.lang.reflect.Modifier.isStatic(f.getModifiers())) fields++;
          return 16 + 8 * fields;
        }
      };

  /**
   * Before `clone()`: the copy is as large as the original (an array's elements, an object's
   * fields; a JDK collection's or BitSet's contents too: 48 bytes an element or word, a node's worth).
   */
  public static void cloned(Object o) {
    if (o == null) return; // the call throws NullPointerException itself
    if (o.getClass().isArray()) madeArray(o);
    else allocate(OBJECT_BYTES.get(o.getClass()) + 48 * units(o));
  }

  /** Before `new EnumMap(type)`, `EnumSet.noneOf/allOf(type)`: a table of the enum's constants. */
  public static void enumTable(Class<?> type) {
    Object[] constants = type == null ? null : type.getEnumConstants();
    if (constants != null) allocate(8L * constants.length + 16);
  }

  /** frames below the contract's own on the executor's thread, which a stack trace records too */
  private static final int HOST_FRAMES = 32;

  /**
   * Before `new` of an exception: the JDK records the whole stack in it (every frame: memory, and
   * the work of walking them), so it is charged by the depth, as a caught exception's handler is.
   */
  public static void throwable(int bytes) {
    allocate(bytes + 48L * (depth + HOST_FRAMES));
    charge(1000 + 10L * depth);
  }

  /** Before `new BitSet(n)`: n bits. */
  public static void bits(int n) {
    if (n > 0) allocate(n / 8 + 16);
  }

  /** Before `System.arraycopy(…, length)`: the copy's work. */
  public static void copy(int length) {
    if (length > 0) charge(length >> 4);
  }

  // ---- work inside the JDK (JdkCosts): sizes of a call's operands, then its charge ----

  /** size of a JDK call's operand: characters, elements, or 64-bit words of a number; 0 for anything whose work is contract code */
  public static long units(Object o) {
    if (o == null) return 0;
    if (o instanceof String) return ((String) o).length();
    if (o instanceof StringBuilder) return ((StringBuilder) o).length();
    if (o instanceof StringBuffer) return ((StringBuffer) o).length();
    if (o instanceof java.math.BigInteger) return ((java.math.BigInteger) o).bitLength() / 64 + 1;
    if (o instanceof java.math.BigDecimal) {
      java.math.BigDecimal d = (java.math.BigDecimal) o;
      return (d.unscaledValue().bitLength() + Math.abs((long) d.scale()) * 10 / 3) / 64 + 1;
    }
    if (o instanceof java.math.MathContext) return ((java.math.MathContext) o).getPrecision() / 16 + 1;
    if (o instanceof Object[]) return ((Object[]) o).length;
    if (o.getClass().isArray()) return java.lang.reflect.Array.getLength(o);
    // a collection of the JDK's own (its work is not metered); an own class's is contract code, metered as it runs
    if (o.getClass().getClassLoader() != null || !o.getClass().getName().startsWith("java.util.")) return 0;
    if (o instanceof java.util.Collection) return ((java.util.Collection<?>) o).size();
    if (o instanceof java.util.Map) return ((java.util.Map<?, ?>) o).size();
    if (o instanceof java.util.BitSet) return ((java.util.BitSet) o).size() / 64;
    return 0;
  }

  /** An int operand of a number operation: a count of digits or bits (scale, precision, shift, exponent, bit index). */
  public static long unitsOfCount(int n) {
    long abs = Math.abs((long) n);
    if (abs > Guards.MAX_BITS)
      throw new ArithmeticException("a scale, precision, shift or bit index of " + n + " exceeds the limit of " + Guards.MAX_BITS);
    return abs / 16;
  }

  /** The receiver's size when it is a linked list (a position is found by walking it), else 0. */
  public static long unitsIfLinked(Object o) {
    return o instanceof java.util.LinkedList ? ((java.util.LinkedList<?>) o).size() : 0;
  }

  /** The size of a JDK hash table (HashMap, HashSet and their linked kinds), else 0. */
  public static long unitsIfHashed(Object o) {
    if (o == null || o.getClass().getClassLoader() != null) return 0;
    if (o instanceof java.util.HashMap) return ((java.util.HashMap<?, ?>) o).size();
    if (o instanceof java.util.HashSet) return ((java.util.HashSet<?>) o).size();
    return 0;
  }

  /** whether a class's equals is Object's (identity) */
  private static final ClassValue<Boolean> IDENTITY_EQUALS =
      new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
          try {
            return type.getMethod("equals", Object.class).getDeclaringClass() == Object.class;
          } catch (NoSuchMethodException e) {
            return true;
          }
        }
      };

  /** 1 when `key` compares by identity and cannot be ordered (a bucket of such keys is searched one by one), else 0. */
  public static long unitsIfIdentityKey(Object key) {
    return key != null && !(key instanceof Comparable) && IDENTITY_EQUALS.get(key.getClass()) ? 1 : 0;
  }

  /** Charges a JDK call before it runs: `first` is its receiver's size, `rest` the sum of its other operands'. */
  public static void jdk(long first, long rest, int plan) {
    int kind = plan & 7;
    long n = first + rest;
    long cost;
    switch (kind) {
      case JdkCosts.PRODUCT:
        cost = saturatingProduct(first, rest) / 64 + n / 16;
        break;
      case JdkCosts.QUADRATIC:
        cost = n + saturatingProduct(n, n) / 64;
        break;
      case JdkCosts.SORT:
        cost = n * (64 - Long.numberOfLeadingZeros(n) + 1) / 8;
        break;
      case JdkCosts.HASHED:
        // a walk through a bucket's tree, one entry at a time: a step each
        cost = rest > 0 ? first : 0;
        break;
      default:
        cost = n / 16;
    }
    if ((plan & 8) != 0) allocate(8 * rest + 16);
    charge(cost);
  }

  private static long saturatingProduct(long a, long b) {
    return a != 0 && b > Long.MAX_VALUE / 4 / a ? Long.MAX_VALUE / 4 : a * b;
  }

  /** After a JDK call that returned text: it is new memory (two bytes a character) and was written. */
  public static void madeText(Object s) {
    if (s instanceof String) allocate(2L * ((String) s).length() + 24);
  }

  /** After a JDK call that returned an array: new memory. */
  public static void madeArray(Object a) {
    if (a == null) return;
    long n = java.lang.reflect.Array.getLength(a);
    Class<?> t = a.getClass().getComponentType();
    int size = t == byte.class || t == boolean.class ? 1 : t == char.class || t == short.class ? 2 : t == long.class || t == double.class || !t.isPrimitive() ? 8 : 4;
    allocate(n * size + 16);
  }

  /** After a JDK call that returned a number: within the size limits, and new memory. */
  public static void madeNumber(Object n) {
    if (n instanceof java.math.BigInteger || n instanceof java.math.BigDecimal) allocate(Guards.checkNumber(n) / 8 + 24);
  }

  /** One element produced by a JDK stream source (a range, iterate, generate): a step, and room for it as if boxed. */
  static boolean element() {
    charge(2);
    allocate(16);
    return true;
  }

  /**
   * One element reaching a stream operation that holds all of them at once (distinct, sorted,
   * collect, toList, toArray): a step for the JDK's work on it, and room for it in the JDK's buffers
   * (a hash table's node, a list's slot, a collector's grouping).
   */
  static void buffered() {
    charge(2);
    allocate(64);
  }

  /** Before `Arrays.copyOfRange(a, from, to)`: the copy has to − from elements. */
  public static void range(int from, int to, int elementSize) {
    if (to > from) allocate((long) (to - from) * elementSize + 16);
  }

  static void allocate(long bytes) {
    memory += bytes;
    // the limit is checked before the steps are charged: a huge allocation is reported as what it is
    if (memory > memoryLimit) throw stop(Stop.Kind.MEMORY, "memory budget of " + (memoryLimit >> 20) + " MiB exceeded");
    // zeroing and copying cost time too: one step per 64 bytes
    charge(bytes >> 6);
  }

  /**
   * At the entry of every exception handler of contract code, with the caught exception: once a call
   * is stopped nothing of the contract may run, and the VM's own resource errors (whose moment
   * depends on the machine) are never the contract's to handle. The Instrumenter places this call
   * outside every exception range of the method, so what it throws leaves the method; at the
   * caller's handler it is thrown again, and so on up to the executor.
   */
  public static void caught(Throwable t) {
    if (stopped != null) throw stopped;
    if (t instanceof Stop) throw (Stop) t;
    if (t instanceof StackOverflowError) throw stop(Stop.Kind.STACK, "the thread stack overflowed");
    if (t instanceof OutOfMemoryError) throw stop(Stop.Kind.HEAP, "the executor ran out of memory");
    if (t instanceof VirtualMachineError) throw stop(Stop.Kind.HEAP, "the Java VM failed: " + t);
  }
}
