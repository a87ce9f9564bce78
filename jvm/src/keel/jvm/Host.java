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

  /**
   * One contract's part of a call: the transaction's own contract at the bottom, a contract called
   * across (docs/jvm.md §10, cross-contract calls) above it while it runs. Reads, writes and events
   * go to the top frame's contract.
   */
  private static final class Frame {
    final String address;
    final Map<String, Object> context;

    Frame(String address, Map<String, Object> context) {
      this.address = address;
      this.context = context;
    }
  }

  private static boolean active;
  private static long callId;
  private static final ArrayList<Frame> frames = new ArrayList<>();
  /** the node's values, by contract address then key (the overlay does not change during a call) */
  private static final Map<String, Map<String, byte[]>> reads = new HashMap<>();
  /** writes by contract address (in first-write order), then key in first-write order */
  private static final LinkedHashMap<String, LinkedHashMap<String, byte[]>> writes = new LinkedHashMap<>();
  private static final List<Map<String, Object>> events = new ArrayList<>();
  private static long writeBytes;

  static void begin(long id, Map<String, Object> ctx) {
    active = true;
    callId = id;
    frames.clear();
    frames.add(new Frame(String.valueOf(ctx.get("self")), ctx));
    reads.clear();
    writes.clear();
    events.clear();
    writeBytes = 0;
  }

  static void end() {
    active = false;
    frames.clear();
    reads.clear();
  }

  static long callId() {
    return callId;
  }

  /** contracts on the call's stack: 1 outside a cross-contract call */
  static int depth() {
    return frames.size();
  }

  static String address() {
    return frames.get(frames.size() - 1).address;
  }

  /**
   * What a cross-contract call may undo: the callee's writes as they were, the number of events,
   * the bytes written. A callee writes only to its own ledger, so its map is all there is to keep.
   */
  static final class Checkpoint {
    final String address;
    final LinkedHashMap<String, byte[]> writes;
    final int events;
    final long writeBytes;

    Checkpoint(String address) {
      this.address = address;
      LinkedHashMap<String, byte[]> w = Host.writes.get(address);
      // the copy is work a loop of calls could repeat: a step per entry
      if (w != null) Meter.charge(w.size());
      this.writes = w == null ? null : new LinkedHashMap<>(w);
      this.events = Host.events.size();
      this.writeBytes = Host.writeBytes;
    }
  }

  /** Enters `address` as a callee of the current contract; the context's `sender` is the caller. */
  static Checkpoint push(String address, Map<String, Object> context) {
    Checkpoint checkpoint = new Checkpoint(address);
    frames.add(new Frame(address, context));
    return checkpoint;
  }

  static Map<String, Object> context() {
    return frames.get(frames.size() - 1).context;
  }

  /** Leaves the callee; `undo`: its writes and events are dropped (it failed, or it ran as a library). */
  static void pop(Checkpoint checkpoint, boolean undo) {
    frames.remove(frames.size() - 1);
    if (!undo) return;
    if (checkpoint.writes == null) writes.remove(checkpoint.address);
    else writes.put(checkpoint.address, checkpoint.writes);
    while (events.size() > checkpoint.events) events.remove(events.size() - 1);
    writeBytes = checkpoint.writeBytes;
  }

  /** Suspends the ledger while the executor initialises a callee's classes (a class initialiser never touches it). */
  static boolean suspend() {
    boolean was = active;
    active = false;
    return was;
  }

  static void resume(boolean was) {
    active = was;
  }

  /** [[address, key, base64 value or null], …] in first-write order */
  static List<Object> writes() {
    List<Object> out = new ArrayList<>();
    for (Map.Entry<String, LinkedHashMap<String, byte[]>> a : writes.entrySet())
      for (Map.Entry<String, byte[]> e : a.getValue().entrySet()) {
        List<Object> triple = new ArrayList<>(3);
        triple.add(a.getKey());
        triple.add(e.getKey());
        triple.add(e.getValue() == null ? null : Base64.getEncoder().encodeToString(e.getValue()));
        out.add(triple);
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
    String address = address();
    LinkedHashMap<String, byte[]> own = writes.get(address);
    if (own != null && own.containsKey(key)) {
      byte[] v = own.get(key);
      return v == null ? null : v.clone();
    }
    Map<String, byte[]> known = reads.computeIfAbsent(address, a -> new HashMap<>());
    byte[] cached = known.get(key);
    if (cached == null) {
      cached = Main.fetch(callId, address, key);
      if (cached == null) cached = ABSENT;
      known.put(key, cached);
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
    writes.computeIfAbsent(address(), a -> new LinkedHashMap<>()).put(key, value);
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
    e.put("address", address());
    e.put("name", name);
    e.put("data", Base64.getEncoder().encodeToString(bytes));
    e.put("topics", t);
    events.add(e);
  }

  public static String context(String field) {
    requireActive();
    Object v = context().get(field);
    return v == null ? "" : v.toString();
  }
}
