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

  private static Stop stop(Stop.Kind kind, String message) {
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

  static void allocate(long bytes) {
    memory += bytes;
    // zeroing and copying cost time too: one step per 64 bytes
    charge(bytes >> 6);
    if (memory > memoryLimit) throw stop(Stop.Kind.MEMORY, "memory budget of " + (memoryLimit >> 20) + " MiB for arrays exceeded");
  }
}
