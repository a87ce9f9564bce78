package cn.hyperchain.jcee.client.ledger;

import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/** Hyperchain 1.x: the values of a range query, in the keys' order; each read when it is reached. */
public class BatchValue implements Iterator<Result> {
  private final AbstractLedger ledger;
  private final List<String> keys;
  private int next;
  private String key;

  BatchValue(AbstractLedger ledger, List<String> keys) {
    this.ledger = ledger;
    this.keys = keys;
  }

  @Override
  public boolean hasNext() {
    return next < keys.size();
  }

  @Override
  public Result next() {
    if (!hasNext()) throw new NoSuchElementException();
    key = keys.get(next++);
    return ledger.get(key);
  }

  /** The key of the value {@link #next} returned last (Keel's addition). */
  public String currentKey() {
    return key;
  }

  public int size() {
    return keys.size();
  }
}
