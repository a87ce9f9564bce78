package cn.hyperchain.jcee.client.ledger;

import cn.hyperchain.jcee.common.Event;

/**
 * Hyperchain 1.x: a contract's ledger. Keys are byte strings or Strings (on Keel: UTF-8 text of
 * at most 1 KiB, not starting with NUL); values bytes, Strings, numbers (their decimal text) or
 * objects (JSON).
 */
public interface ILedger {
  boolean put(byte[] key, byte[] value);

  boolean put(String key, byte[] value);

  boolean put(String key, String value);

  boolean put(String key, int value);

  boolean put(String key, long value);

  boolean put(String key, short value);

  boolean put(String key, double value);

  boolean put(String key, float value);

  boolean put(String key, boolean value);

  boolean put(String key, char value);

  boolean put(String key, Object value);

  boolean put(byte[] key, String value);

  boolean put(byte[] key, int value);

  boolean put(byte[] key, long value);

  boolean put(byte[] key, double value);

  boolean put(byte[] key, Object value);

  Result get(byte[] key);

  Result get(String key);

  boolean delete(byte[] key);

  boolean delete(String key);

  BatchKey newBatchKey();

  Batch batchRead(BatchKey keys);

  Batch newBatch();

  /** The values under the keys from `start` (included) to `end` (excluded), in the keys' order. */
  BatchValue rangeQuery(byte[] start, byte[] end);

  BatchValue rangeQuery(String start, String end);

  boolean post(Event event);
}
