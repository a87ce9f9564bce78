package keel.jvm;

/**
 * The wall-clock safety net of a call (the step budget is the real limit): past the deadline the
 * running call is stopped at its next metering tick. A call stopped this way is reported as a
 * time-out, which the node treats as not reproducible (docs/jvm.md §5). The thread looks every 50
 * ms instead of being woken for each call: calls are many and short, deadlines long.
 */
final class Watchdog extends Thread {
  private static final long CHECK_EVERY_MS = 50;

  /** System.nanoTime() deadline of the running call; 0 when none runs */
  private long deadline;

  Watchdog() {
    super("keel-watchdog");
    setDaemon(true);
  }

  // arm, disarm and the check hold the lock: a stop decided for one call never lands on the next
  synchronized void arm(long timeoutMs) {
    deadline = System.nanoTime() + timeoutMs * 1_000_000L;
  }

  synchronized void disarm() {
    deadline = 0;
  }

  private synchronized void check() {
    if (deadline != 0 && System.nanoTime() - deadline > 0) {
      Meter.timeOut();
      deadline = 0;
    }
  }

  @Override
  public void run() {
    for (;;) {
      try {
        Thread.sleep(CHECK_EVERY_MS);
      } catch (InterruptedException e) {
        return;
      }
      check();
    }
  }
}
