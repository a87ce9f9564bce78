package demo;

import keel.contract.Contract;

/** Named counters: increment("visits") → 1, 2, 3, …; each increment emits an event. */
public class Counter extends Contract {
  public long increment(String name) {
    long next = ledger.getLong(name) + 1;
    ledger.put(name, next);
    emit("Incremented", Long.toString(next), name);
    return next;
  }

  public long add(String name, long delta) {
    require(delta >= 0, "add: delta must not be negative");
    long next = Math.addExact(ledger.getLong(name), delta);
    ledger.put(name, next);
    return next;
  }

  public long value(String name) {
    return ledger.getLong(name);
  }
}
