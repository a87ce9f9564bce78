package keel.contract;

import java.nio.charset.StandardCharsets;
import keel.jvm.Host;

/**
 * The contract's key-value store on the chain (string keys, byte-string values). Reads see the
 * writes earlier transactions of the block made and this call's own; writes become part of the
 * chain only when the call returns normally. A contract reaches it as {@code ledger} (Contract);
 * helper classes may be handed the same object.
 */
public final class Ledger {
  static final Ledger INSTANCE = new Ledger();

  private Ledger() {}

  /** The value under `key` as UTF-8 text, or null when there is none. */
  public String get(String key) {
    byte[] value = Host.get(key);
    return value == null ? null : new String(value, StandardCharsets.UTF_8);
  }

  /** The value under `key`, or `otherwise` when there is none. */
  public String get(String key, String otherwise) {
    String value = get(key);
    return value == null ? otherwise : value;
  }

  /** The raw bytes under `key`, or null. */
  public byte[] getBytes(String key) {
    return Host.get(key);
  }

  /** The decimal number under `key` (as put(key, long) stores it); 0 when there is none. */
  public long getLong(String key) {
    String value = get(key);
    return value == null ? 0 : Long.parseLong(value);
  }

  public boolean has(String key) {
    return Host.get(key) != null;
  }

  public void put(String key, String value) {
    if (value == null) throw new IllegalArgumentException("put: the value is null (use remove)");
    Host.put(key, value.getBytes(StandardCharsets.UTF_8));
  }

  public void put(String key, byte[] value) {
    if (value == null) throw new IllegalArgumentException("put: the value is null (use remove)");
    Host.put(key, value.clone());
  }

  /** Stores the number in decimal. */
  public void put(String key, long value) {
    put(key, Long.toString(value));
  }

  public void remove(String key) {
    Host.put(key, null);
  }
}
