package cn.hyperchain.core;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Hyperchain HVM's nestable ledger map: a HyperMap (one ledger key per entry, read when touched)
 * whose values may themselves be NestedMaps, each kept under its parent's entry key
 * (`f:<k>:<k2>…`). Keel's own implementation (docs/jvm.md §10). As in HVM: a NestedMap made in a
 * call must be put into a stored one before it is used as a ledger map (entries put into it before
 * are moved in then); putting a NestedMap over another deletes the old one's entries; {@code put}
 * and {@code remove} return null; {@code size} and {@code clear} are not supported.
 */
public class NestedMap<K, V> extends HyperMap<K, V> {
  /** nested maps replaced in this call: their deletions are written too */
  private final List<NestedMap<?, ?>> retired = new ArrayList<>();

  public NestedMap() {}

  private boolean nested() {
    Type t = valueType;
    if (t instanceof ParameterizedType) t = ((ParameterizedType) t).getRawType();
    return t == NestedMap.class;
  }

  private Type inner(int i) {
    if (valueType instanceof ParameterizedType) {
      Type[] a = ((ParameterizedType) valueType).getActualTypeArguments();
      if (i < a.length && !(a[i] instanceof java.lang.reflect.TypeVariable)) return a[i];
    }
    return Object.class;
  }

  /** Binds a child to its entry's keys, moving in what was put into it before. */
  @SuppressWarnings("unchecked")
  private void adopt(String keyText, NestedMap<?, ?> child) {
    if (child.prefix != null) {
      if (!child.prefix.equals(prefix + ":" + keyText))
        throw new IllegalArgumentException("this NestedMap is stored elsewhere already: put a new NestedMap");
      return;
    }
    LinkedHashMap<Object, Object> before = new LinkedHashMap<>((Map<Object, Object>) (Map<?, ?>) child.memory);
    child.bind(prefix + ":" + keyText, inner(0), inner(1));
    for (Map.Entry<Object, Object> e : before.entrySet()) ((NestedMap<Object, Object>) child).put(e.getKey(), e.getValue());
  }

  @Override
  String encodeValue(V value) {
    return value instanceof NestedMap ? "{\"nested\":true}" : super.encodeValue(value);
  }

  @Override
  @SuppressWarnings("unchecked")
  V decodeValue(String keyText, String json) {
    if (!nested()) return super.decodeValue(keyText, json);
    NestedMap<Object, Object> child = new NestedMap<>();
    child.bind(prefix + ":" + keyText, inner(0), inner(1));
    return (V) child;
  }

  @Override
  void flushed(V value) {
    if (value instanceof NestedMap) ((NestedMap<?, ?>) value).flush();
  }

  @Override
  void flush() {
    super.flush();
    for (NestedMap<?, ?> old : retired) old.flush();
    retired.clear();
  }

  @Override
  void replaced(String keyText, V old, V value) {
    if (old instanceof NestedMap && old != value) {
      NestedMap<?, ?> gone = (NestedMap<?, ?>) old;
      gone.deleteAll();
      retired.add(gone);
    }
    if (value instanceof NestedMap) adopt(keyText, (NestedMap<?, ?>) value);
  }

  /** Removes every entry (and nested entries), last key first. */
  private void deleteAll() {
    for (long i = entries() - 1; i >= 0; i--) remove(keyFromText(keyTextAt(i)));
  }

  @Override
  public V put(K key, V value) {
    if (prefix == null && value instanceof NestedMap)
      throw new IllegalStateException("put this NestedMap into a stored one before putting NestedMaps into it");
    super.put(key, value);
    return null;
  }

  @Override
  public V remove(Object key) {
    super.remove(key);
    return null;
  }

  @Override
  public int size() {
    throw new UnsupportedOperationException("NestedMap does not support size (as in HVM)");
  }

  @Override
  public boolean isEmpty() {
    return prefix == null ? memory.isEmpty() : entries() == 0;
  }

  @Override
  public void clear() {
    throw new UnsupportedOperationException("NestedMap does not support clear (remove the keys one by one)");
  }
}
