package keel.jvm;

/**
 * The wall-clock safety net of a call (the step budget is the real limit): past the deadline the
 * running call is stopped at its next metering tick. A call stopped this way is reported as a
 * time-out, which the node treats as not reproducible (see docs/jvm.md).
 */
final class Watchdog extends Thread {
  private long deadline;
  private boolean armed;

  Watchdog() {
    super("keel-watchdog");
    setDaemon(true);
  }

  synchronized void arm(long timeoutMs) {
    deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    armed = true;
    notifyAll();
  }

  synchronized void disarm() {
    armed = false;
  }

  @Override
  public synchronized void run() {
    for (;;) {
      try {
        if (!armed) {
          wait();
          continue;
        }
        long left = deadline - System.nanoTime();
        if (left > 0) {
          wait(left / 1_000_000L + 1);
          continue;
        }
        Meter.timeOut();
        armed = false;
      } catch (InterruptedException e) {
        return;
      }
    }
  }
}
