package cn.hyperchain.jcee.client.ledger;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Hyperchain 1.x: a batch. From {@code ledger.batchRead(keys)} it holds the values read; from
 * {@code ledger.newBatch()} it collects writes that {@link #commit} puts into the ledger together.
 */
public class Batch {
  private final AbstractLedger ledger;
  final Map<String, byte[]> entries = new LinkedHashMap<>();

  Batch(AbstractLedger ledger) {
    this.ledger = ledger;
  }

  public Result get(byte[] key) {
    return new Result(entries.get(AbstractLedger.keyOf(key)));
  }

  public Result get(String key) {
    return new Result(entries.get(AbstractLedger.keyOf(key)));
  }

  public void put(byte[] key, byte[] value) {
    entries.put(AbstractLedger.keyOf(key), value.clone());
  }

  public void put(String key, byte[] value) {
    entries.put(AbstractLedger.keyOf(key), value.clone());
  }

  public void put(String key, String value) {
    entries.put(AbstractLedger.keyOf(key), cn.hyperchain.jcee.common.Bytes.toByteArray(value));
  }

  public int size() {
    return entries.size();
  }

  /** Writes the batch's entries to the ledger (in the order they were put). */
  public boolean commit() {
    for (Map.Entry<String, byte[]> e : entries.entrySet()) ledger.write(e.getKey(), e.getValue());
    entries.clear();
    return true;
  }
}
