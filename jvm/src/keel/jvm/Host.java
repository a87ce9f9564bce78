package keel.jvm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The ledger as a contract call sees it. Reads go to the node (a `get` frame answered by a
 * `value` frame, from the node's per-transaction state overlay); writes and events are kept here
 * and handed back with the result, which the node applies only when the call succeeded. Nothing
 * is cached beyond one call.
 */
public final class Host {
  private Host() {}

  static final int MAX_KEY_BYTES = 1024;
  static final int MAX_VALUE_BYTES = 64 * 1024;
  static final int MAX_WRITE_BYTES = 1024 * 1024;
  static final int MAX_EVENTS = 64;
  static final int MAX_EVENT_TOPICS = 3;
  static final int MAX_EVENT_BYTES = 16 * 1024;
  /** steps a ledger operation costs besides its size */
  static final int READ_STEPS = 200, WRITE_STEPS = 500, EVENT_STEPS = 400;

  private static final byte[] ABSENT = new byte[0];

  private static boolean active;
  private static long callId;
  private static Map<String, Object> context;
  private static final Map<String, byte[]> reads = new HashMap<>();
  private static final LinkedHashMap<String, byte[]> writes = new LinkedHashMap<>();
  private static final List<Map<String, Object>> events = new ArrayList<>();
  private static long writeBytes;

  static void begin(long id, Map<String, Object> ctx) {
    active = true;
    callId = id;
    context = ctx;
    reads.clear();
    writes.clear();
    events.clear();
    writeBytes = 0;
  }

  static void end() {
    active = false;
    context = null;
    reads.clear();
  }

  /** [[key, base64 value or null], …] in first-write order */
  static List<Object> writes() {
    List<Object> out = new ArrayList<>(writes.size());
    for (Map.Entry<String, byte[]> e : writes.entrySet()) {
      List<Object> pair = new ArrayList<>(2);
      pair.add(e.getKey());
      pair.add(e.getValue() == null ? null : Base64.getEncoder().encodeToString(e.getValue()));
      out.add(pair);
    }
    return out;
  }

  static List<Map<String, Object>> events() {
    return new ArrayList<>(events);
  }

  private static void requireActive() {
    if (!active) throw new IllegalStateException("the ledger is only available inside a contract call, not in a class initialiser");
  }

  private static int keyBytes(String key) {
    if (key == null) throw new IllegalArgumentException("ledger key is null");
    int n = key.getBytes(StandardCharsets.UTF_8).length;
    if (n == 0 || n > MAX_KEY_BYTES) throw new IllegalArgumentException("ledger keys are 1 to " + MAX_KEY_BYTES + " bytes of UTF-8");
    return n;
  }

  public static byte[] get(String key) {
    requireActive();
    keyBytes(key);
    Meter.charge(READ_STEPS);
    if (writes.containsKey(key)) {
      byte[] v = writes.get(key);
      return v == null ? null : v.clone();
    }
    byte[] cached = reads.get(key);
    if (cached == null) {
      cached = Main.fetch(callId, key);
      if (cached == null) cached = ABSENT;
      reads.put(key, cached);
    }
    Meter.charge(cached.length / 32);
    return cached == ABSENT ? null : cached.clone();
  }

  /** null value = remove */
  public static void put(String key, byte[] value) {
    requireActive();
    int k = keyBytes(key);
    int n = value == null ? 0 : value.length;
    if (n > MAX_VALUE_BYTES) throw new IllegalArgumentException("ledger values are at most " + MAX_VALUE_BYTES + " bytes");
    writeBytes += k + n;
    if (writeBytes > MAX_WRITE_BYTES) throw new IllegalArgumentException("a call writes at most " + MAX_WRITE_BYTES + " bytes to the ledger");
    Meter.charge(WRITE_STEPS + (k + n) / 8);
    writes.put(key, value);
  }

  public static void emit(String name, String data, String[] topics) {
    requireActive();
    if (name == null || name.isEmpty()) throw new IllegalArgumentException("an event needs a name");
    if (topics == null) topics = new String[0];
    if (topics.length > MAX_EVENT_TOPICS) throw new IllegalArgumentException("an event has at most " + MAX_EVENT_TOPICS + " topics besides its name");
    if (events.size() >= MAX_EVENTS) throw new IllegalArgumentException("a call emits at most " + MAX_EVENTS + " events");
    byte[] bytes = data.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > MAX_EVENT_BYTES) throw new IllegalArgumentException("event data is at most " + MAX_EVENT_BYTES + " bytes");
    List<Object> t = new ArrayList<>();
    for (String topic : topics) {
      if (topic == null) throw new IllegalArgumentException("an event topic is null");
      t.add(topic);
    }
    Meter.charge(EVENT_STEPS + bytes.length / 8);
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("name", name);
    e.put("data", Base64.getEncoder().encodeToString(bytes));
    e.put("topics", t);
    events.add(e);
  }

  public static String context(String field) {
    requireActive();
    Object v = context.get(field);
    return v == null ? "" : v.toString();
  }
}
