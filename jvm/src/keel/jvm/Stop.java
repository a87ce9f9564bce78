package keel.jvm;

/**
 * Ends a contract call for a reason of the executor's own (budget, depth, memory, time-out). An
 * Error, so contract code cannot catch it (the scanner refuses catching Throwable and Error), and
 * without a stack trace: it is thrown often and its place is not interesting.
 */
final class Stop extends Error {
  enum Kind {
    BUDGET,
    DEPTH,
    MEMORY,
    TIMEOUT,
    LIMIT,
    /** a cross-contract call reached a frozen contract: the whole transaction fails, as with EVM contracts */
    FROZEN,
    /** the JVM's own limits: machine-dependent, reported as not reproducible */
    STACK,
    HEAP
  }

  final Kind kind;

  Stop(Kind kind, String message) {
    super(message, null, false, false);
    this.kind = kind;
  }
}
