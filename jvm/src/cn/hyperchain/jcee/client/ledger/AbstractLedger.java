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

  private static final String DIRECTORY = "\u0000index";
  private static final String PAGE = "\u0000index:";
  private static final String NEXT_PAGE = "\u0000index#next";
  private static final int PAGE_KEYS = 64;

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

  // ---- the sorted key index ----

  private static String text(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  /** [[first key, page id], …] in key order */
  private static List<Object> directory() {
    String json = text(Host.get(DIRECTORY));
    if (json == null) return new ArrayList<>();
    @SuppressWarnings("unchecked")
    List<Object> d = (List<Object>) Beans.fromJson(json, List.class);
    return d;
  }

  private static String first(List<Object> directory, int i) {
    return (String) ((List<?>) directory.get(i)).get(0);
  }

  private static long pageId(List<Object> directory, int i) {
    return ((Number) ((List<?>) directory.get(i)).get(1)).longValue();
  }

  @SuppressWarnings("unchecked")
  private static List<String> page(long id) {
    String json = text(Host.get(PAGE + id));
    return json == null ? new ArrayList<>() : (List<String>) Beans.fromJson(json, List.class);
  }

  private static void save(String key, Object value) {
    Host.put(key, value == null ? null : Beans.toJson(value).getBytes(StandardCharsets.UTF_8));
  }

  /** The place of the page that holds (or would hold) `key`: the last whose first key is not above it, or 0. */
  private static int pageFor(List<Object> directory, String key) {
    int lo = 0, hi = directory.size() - 1, at = 0;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (first(directory, mid).compareTo(key) <= 0) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at;
  }

  private static List<Object> entry(String first, long id) {
    List<Object> e = new ArrayList<>(2);
    e.add(first);
    e.add(id);
    return e;
  }

  private static void index(String key) {
    List<Object> directory = directory();
    if (directory.isEmpty()) {
      List<String> keys = new ArrayList<>();
      keys.add(key);
      save(PAGE + 0, keys);
      directory.add(entry(key, 0));
      save(DIRECTORY, directory);
      save(NEXT_PAGE, 1L);
      return;
    }
    int at = pageFor(directory, key);
    long id = pageId(directory, at);
    List<String> keys = page(id);
    int i = java.util.Collections.binarySearch(keys, key);
    if (i >= 0) return;
    keys.add(-i - 1, key);
    if (keys.size() > PAGE_KEYS) {
      long next = Long.parseLong(text(Host.get(NEXT_PAGE)));
      List<String> upper = new ArrayList<>(keys.subList(keys.size() / 2, keys.size()));
      keys = new ArrayList<>(keys.subList(0, keys.size() / 2));
      save(PAGE + next, upper);
      directory.add(at + 1, entry(upper.get(0), next));
      save(NEXT_PAGE, next + 1);
    }
    save(PAGE + id, keys);
    directory.set(at, entry(keys.get(0), id));
    save(DIRECTORY, directory);
  }

  private static void unindex(String key) {
    List<Object> directory = directory();
    if (directory.isEmpty()) return;
    int at = pageFor(directory, key);
    long id = pageId(directory, at);
    List<String> keys = page(id);
    int i = java.util.Collections.binarySearch(keys, key);
    if (i < 0) return;
    keys.remove(i);
    if (keys.isEmpty()) {
      save(PAGE + id, null);
      directory.remove(at);
    } else {
      save(PAGE + id, keys);
      directory.set(at, entry(keys.get(0), id));
    }
    save(DIRECTORY, directory.isEmpty() ? null : directory);
  }

  private static List<String> range(String start, String end) {
    List<String> out = new ArrayList<>();
    List<Object> directory = directory();
    for (int p = directory.isEmpty() ? 0 : pageFor(directory, start); p < directory.size(); p++) {
      if (first(directory, p).compareTo(end) >= 0) break;
      for (String k : page(pageId(directory, p))) if (k.compareTo(start) >= 0 && k.compareTo(end) < 0) out.add(k);
    }
    return out;
  }

  // ---- reads and writes ----

  void write(String key, byte[] value) {
    boolean existed = Host.get(key) != null;
    Host.put(key, value);
    if (value == null && existed) unindex(key);
    else if (value != null && !existed) index(key);
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
