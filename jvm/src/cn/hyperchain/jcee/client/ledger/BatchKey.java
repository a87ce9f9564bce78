package cn.hyperchain.jcee.client.ledger;

import java.util.ArrayList;
import java.util.List;

/** Hyperchain 1.x: the keys of a batch read ({@code ledger.newBatchKey()}, then {@code ledger.batchRead}). */
public class BatchKey {
  final List<String> keys = new ArrayList<>();

  BatchKey() {}

  public void put(byte[] key) {
    keys.add(AbstractLedger.keyOf(key));
  }

  public void put(String key) {
    keys.add(AbstractLedger.keyOf(key));
  }

  public int size() {
    return keys.size();
  }
}
