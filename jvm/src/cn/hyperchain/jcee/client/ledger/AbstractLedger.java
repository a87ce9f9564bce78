package cn.hyperchain.jcee.client.ledger;

import cn.hyperchain.jcee.common.Bytes;
import cn.hyperchain.jcee.common.Event;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import keel.jvm.Beans;
import keel.jvm.Host;
import keel.jvm.SortedKeys;

/**
 * Hyperchain 1.x's ledger (the type of {@code ContractTemplate.ledger}), Keel's implementation
 * over the contract's key-value store (docs/jvm.md). A key is stored under its own text, so a
 * 1.x contract's keys are the same ledger keys a Keel contract would use.
 *
 * Range queries need the keys in order, which a store addressed by key hashes does not give: the
 * ledger keeps an index of the contract's keys, sorted, in pages of at most 64 keys (under keys
 * beginning with NUL, which contract keys may not). Writing a new key or deleting one costs a read
 * of the page directory and a page besides the value.
 */
public abstract class AbstractLedger implements ILedger {
  AbstractLedger() {}


  static String keyOf(byte[] key) {
    if (key == null) throw new IllegalArgumentException("a ledger key is null");
    try {
      return keyOf(
          StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(key)).toString());
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("ledger keys are UTF-8 text on Keel");
    }
  }

  static String keyOf(String key) {
    if (key == null) throw new IllegalArgumentException("a ledger key is null");
    if (key.isEmpty()) throw new IllegalArgumentException("a ledger key is empty");
    if (key.charAt(0) == '\u0000') throw new IllegalArgumentException("ledger keys beginning with NUL are reserved");
    return key;
  }

  /** the sorted index of the contract's keys (its layout: keel.jvm.SortedKeys) */
  private static final SortedKeys INDEX = new SortedKeys("\u0000index");

  private static List<String> range(String start, String end) {
    return INDEX.range(start, end);
  }

  // ---- reads and writes ----

  void write(String key, byte[] value) {
    boolean existed = Host.get(key) != null;
    Host.put(key, value);
    if (value == null && existed) INDEX.remove(key);
    else if (value != null && !existed) INDEX.add(key);
  }

  Result get0(String key) {
    return new Result(Host.get(key));
  }

  @Override
  public boolean put(byte[] key, byte[] value) {
    write(keyOf(key), value.clone());
    return true;
  }

  @Override
  public boolean put(String key, byte[] value) {
    write(keyOf(key), value.clone());
    return true;
  }

  @Override
  public boolean put(String key, String value) {
    return put(key, Bytes.toByteArray(value));
  }

  @Override
  public boolean put(String key, int value) {
    return put(key, Bytes.toByteArray(value));
  }

  @Override
  public boolean put(String key, long value) {
    return put(key, Bytes.toByteArray(value));
  }

  @Override
  public boolean put(String key, short value) {
    return put(key, Bytes.toByteArray(value));
  }

  @Override
  public boolean put(String key, double value) {
    return put(key, Bytes.toByteArray(value));
  }

  @Override
  public boolean put(String key, float value) {
    return put(key, Bytes.toByteArray(value));
  }

  @Override
  public boolean put(String key, boolean value) {
    return put(key, Bytes.toByteArray(value));
  }

  @Override
  public boolean put(String key, char value) {
    return put(key, Bytes.toByteArray(value));
  }

  /** An object as JSON (Strings and numbers as their text, like the typed puts). */
  @Override
  public boolean put(String key, Object value) {
    if (value instanceof byte[]) return put(key, (byte[]) value);
    if (value instanceof String || value instanceof Number || value instanceof Boolean || value instanceof Character)
      return put(key, String.valueOf(value));
    return put(key, Beans.toJson(value));
  }

  @Override
  public boolean put(byte[] key, String value) {
    return put(keyOf(key), value);
  }

  @Override
  public boolean put(byte[] key, int value) {
    return put(keyOf(key), value);
  }

  @Override
  public boolean put(byte[] key, long value) {
    return put(keyOf(key), value);
  }

  @Override
  public boolean put(byte[] key, double value) {
    return put(keyOf(key), value);
  }

  @Override
  public boolean put(byte[] key, Object value) {
    return put(keyOf(key), value);
  }

  @Override
  public Result get(byte[] key) {
    return get0(keyOf(key));
  }

  @Override
  public Result get(String key) {
    return get0(keyOf(key));
  }

  @Override
  public boolean delete(byte[] key) {
    write(keyOf(key), null);
    return true;
  }

  @Override
  public boolean delete(String key) {
    write(keyOf(key), null);
    return true;
  }

  @Override
  public BatchKey newBatchKey() {
    return new BatchKey();
  }

  @Override
  public Batch batchRead(BatchKey keys) {
    Batch batch = new Batch(this);
    for (String k : keys.keys) {
      byte[] v = Host.get(k);
      if (v != null) batch.entries.put(k, v);
    }
    return batch;
  }

  @Override
  public Batch newBatch() {
    return new Batch(this);
  }

  @Override
  public BatchValue rangeQuery(byte[] start, byte[] end) {
    return new BatchValue(this, range(keyOf(start), keyOf(end)));
  }

  @Override
  public BatchValue rangeQuery(String start, String end) {
    return new BatchValue(this, range(keyOf(start), keyOf(end)));
  }

  @Override
  public boolean post(Event event) {
    Map<String, String> attributes = event.getAttributes();
    Host.emit(event.getName(), Beans.toJson(attributes), event.getTopics().toArray(new String[0]));
    return true;
  }

  /** The one ledger object every 1.x contract instance holds: it keeps no state of its own. */
  static final AbstractLedger INSTANCE = new AbstractLedger() {};

  public static AbstractLedger instance() {
    return INSTANCE;
  }
}
