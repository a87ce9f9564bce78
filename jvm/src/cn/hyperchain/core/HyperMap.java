package cn.hyperchain.core;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import keel.jvm.Beans;
import keel.jvm.Host;

/**
 * Hyperchain HVM's ledger map: a {@code @StoreField} field whose entries are kept one ledger key
 * each, read when first touched in a call, so a call pays for the entries it uses, not for the
 * whole map. Keel's own implementation (docs/jvm.md, "Hyperchain's Java APIs").
 *
 * Ledger layout for the field `f`: entry `k` under `f:<k>` (a String key as it is, any other key
 * as JSON; the value as JSON); the number of entries under `f#n`; an index for iteration,
 * `f#k<i>` → the i-th key and `f#i<k>` → i (insertion order; a removal moves the last key into
 * the freed place). Values are written when the call succeeds, if their JSON changed, so a value
 * object changed in place after {@code get} is kept too.
 *
 * A HyperMap that is not a {@code @StoreField} field (a local variable) is an ordinary map in
 * memory. {@code clear} is not supported (as in HVM), nor are null keys or values.
 */
public class HyperMap<K, V> extends AbstractMap<K, V> {
  final LinkedHashMap<K, V> memory = new LinkedHashMap<>();
  String prefix;
  Type keyType = Object.class;
  Type valueType = Object.class;
  /** entries this call touched, by key text */
  private LinkedHashMap<String, Slot<V>> touched;

  private static final class Slot<V> {
    V value;
    boolean present;
    /** the JSON the ledger held when the call began; null when absent */
    String stored;
  }

  public HyperMap() {}

  // ---- for the engine (cn.hyperchain.core.Stores) ----

  void bind(String prefix, Type keyType, Type valueType) {
    this.prefix = prefix;
    this.keyType = keyType;
    this.valueType = valueType;
    this.touched = new LinkedHashMap<>();
    memory.clear();
  }

  boolean isBound() {
    return prefix != null;
  }

  void flush() {
    for (Map.Entry<String, Slot<V>> e : touched.entrySet()) {
      Slot<V> slot = e.getValue();
      String key = prefix + ":" + e.getKey();
      if (slot.present) {
        String json = encodeValue(slot.value);
        if (!json.equals(slot.stored)) Host.put(key, json.getBytes(StandardCharsets.UTF_8));
        flushed(slot.value);
      } else if (slot.stored != null) {
        Host.put(key, null);
      }
    }
  }

  // ---- for NestedMap: how values are kept, and what a put or a removal does besides ----

  String encodeValue(V value) {
    return Beans.toJson(value);
  }

  @SuppressWarnings("unchecked")
  V decodeValue(String keyText, String json) {
    return (V) Beans.fromJson(json, valueType);
  }

  void flushed(V value) {}

  void replaced(String keyText, V old, V value) {}

  String keyTextOf(Object key) {
    return keyText(key);
  }

  K keyFromText(String text) {
    return keyOf(text);
  }

  long entries() {
    return count();
  }

  String keyTextAt(long i) {
    return keyAt(i);
  }

  // ---- ledger helpers ----

  private static String text(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  private String keyText(Object key) {
    if (key == null) throw new NullPointerException("HyperMap keys cannot be null");
    return key instanceof String ? (String) key : Beans.toJson(key);
  }

  /** The key a key text stands for (String keys are their text; with raw types, every key reads back as its text). */
  @SuppressWarnings("unchecked")
  private K keyOf(String text) {
    if (keyType == String.class || keyType == Object.class) return (K) text;
    return (K) Beans.fromJson(text, keyType);
  }

  private Slot<V> slot(String keyText) {
    Slot<V> slot = touched.get(keyText);
    if (slot == null) {
      slot = new Slot<>();
      slot.stored = text(Host.get(prefix + ":" + keyText));
      if (slot.stored != null) {
        slot.present = true;
        slot.value = decodeValue(keyText, slot.stored);
      }
      touched.put(keyText, slot);
    }
    return slot;
  }

  private long count() {
    String n = text(Host.get(prefix + "#n"));
    return n == null ? 0 : Long.parseLong(n);
  }

  private void setCount(long n) {
    Host.put(prefix + "#n", n == 0 ? null : Long.toString(n).getBytes(StandardCharsets.UTF_8));
  }

  private String keyAt(long i) {
    return text(Host.get(prefix + "#k" + i));
  }

  private void index(String keyText) {
    long n = count();
    Host.put(prefix + "#k" + n, keyText.getBytes(StandardCharsets.UTF_8));
    Host.put(prefix + "#i" + keyText, Long.toString(n).getBytes(StandardCharsets.UTF_8));
    setCount(n + 1);
  }

  private void unindex(String keyText) {
    long n = count();
    long at = Long.parseLong(text(Host.get(prefix + "#i" + keyText)));
    String last = keyAt(n - 1);
    if (at != n - 1) {
      Host.put(prefix + "#k" + at, last.getBytes(StandardCharsets.UTF_8));
      Host.put(prefix + "#i" + last, Long.toString(at).getBytes(StandardCharsets.UTF_8));
    }
    Host.put(prefix + "#k" + (n - 1), null);
    Host.put(prefix + "#i" + keyText, null);
    setCount(n - 1);
  }

  // ---- Map ----

  @Override
  public V get(Object key) {
    if (prefix == null) return memory.get(key);
    Slot<V> slot = slot(keyText(key));
    return slot.present ? slot.value : null;
  }

  @Override
  public boolean containsKey(Object key) {
    if (prefix == null) return memory.containsKey(key);
    return slot(keyText(key)).present;
  }

  @Override
  public V put(K key, V value) {
    if (value == null) throw new NullPointerException("HyperMap values cannot be null (use remove)");
    if (prefix == null) {
      if (key == null) throw new NullPointerException("HyperMap keys cannot be null");
      return memory.put(key, value);
    }
    String k = keyText(key);
    Slot<V> slot = slot(k);
    V old = slot.present ? slot.value : null;
    if (!slot.present) index(k);
    replaced(k, old, value);
    slot.value = value;
    slot.present = true;
    return old;
  }

  @Override
  public V remove(Object key) {
    if (prefix == null) return memory.remove(key);
    String k = keyText(key);
    Slot<V> slot = slot(k);
    if (!slot.present) return null;
    V old = slot.value;
    replaced(k, old, null);
    slot.present = false;
    slot.value = null;
    unindex(k);
    return old;
  }

  @Override
  public int size() {
    if (prefix == null) return memory.size();
    return Math.toIntExact(count());
  }

  @Override
  public boolean isEmpty() {
    return size() == 0;
  }

  @Override
  public void clear() {
    throw new UnsupportedOperationException("HyperMap does not support clear (remove the keys one by one)");
  }

  @Override
  public Set<Map.Entry<K, V>> entrySet() {
    if (prefix == null) return memory.entrySet();
    return new AbstractSet<Map.Entry<K, V>>() {
      @Override
      public int size() {
        return HyperMap.this.size();
      }

      @Override
      public Iterator<Map.Entry<K, V>> iterator() {
        return new Iterator<Map.Entry<K, V>>() {
          private long next;
          private String current;

          @Override
          public boolean hasNext() {
            return next < count();
          }

          @Override
          public Map.Entry<K, V> next() {
            if (!hasNext()) throw new NoSuchElementException();
            current = keyAt(next++);
            K key = keyOf(current);
            String k = current;
            return new AbstractMap.SimpleEntry<K, V>(key, slot(k).value) {
              private static final long serialVersionUID = 1L;

              @Override
              public V setValue(V value) {
                V old = super.setValue(value);
                HyperMap.this.put(key, value);
                return old;
              }
            };
          }

          @Override
          public void remove() {
            if (current == null) throw new IllegalStateException();
            HyperMap.this.remove(keyOf(current));
            current = null;
            // the last key moved into the place just freed: visit that place again
            next--;
          }
        };
      }
    };
  }
}
