package cn.hyperchain.core;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Map;
import java.util.RandomAccess;
import java.util.TreeMap;
import keel.jvm.Beans;
import keel.jvm.Host;

/**
 * Hyperchain HVM's ledger list: a {@code @StoreField} field whose elements are kept one ledger key
 * each (`f#<index>` → the element as JSON; `f#n` → the size), read when first touched in a call.
 * Keel's own implementation (docs/jvm.md §10). Elements are written when the call succeeds, if
 * their JSON changed, so an element changed in place after {@code get} is kept too. Inserting or
 * removing anywhere but at the end moves every later element (as HVM warns, a HyperList suits
 * appending; a HyperMap suits look-ups). Null elements are refused. A HyperList that is not a
 * {@code @StoreField} field is an ordinary list in memory.
 */
public class HyperList<E> extends AbstractList<E> implements RandomAccess {
  private final ArrayList<E> memory = new ArrayList<>();
  private String prefix;
  private Type elementType = Object.class;
  /** the size when the call began, and now; -1 until read */
  private long storedSize = -1, size = -1;
  /** elements this call touched, by index */
  private TreeMap<Long, Slot<E>> touched;

  private static final class Slot<E> {
    E value;
    boolean present;
    String stored;
  }

  public HyperList() {}

  // ---- for the engine (cn.hyperchain.core.Stores) ----

  void bind(String prefix, Type elementType) {
    this.prefix = prefix;
    this.elementType = elementType;
    this.touched = new TreeMap<>();
    this.storedSize = this.size = -1;
    memory.clear();
  }

  void flush() {
    for (Map.Entry<Long, Slot<E>> e : touched.entrySet()) {
      Slot<E> slot = e.getValue();
      String key = prefix + "#" + e.getKey();
      if (slot.present) {
        String json = Beans.toJson(slot.value);
        if (!json.equals(slot.stored)) Host.put(key, json.getBytes(StandardCharsets.UTF_8));
      } else if (slot.stored != null) {
        Host.put(key, null);
      }
    }
    if (size >= 0 && size != storedSize) Host.put(prefix + "#n", size == 0 ? null : Long.toString(size).getBytes(StandardCharsets.UTF_8));
  }

  // ---- ledger helpers ----

  private long length() {
    if (size < 0) {
      byte[] n = Host.get(prefix + "#n");
      storedSize = size = n == null ? 0 : Long.parseLong(new String(n, StandardCharsets.UTF_8));
    }
    return size;
  }

  @SuppressWarnings("unchecked")
  private Slot<E> slot(long index) {
    Slot<E> slot = touched.get(index);
    if (slot == null) {
      slot = new Slot<>();
      byte[] bytes = index < storedSize() ? Host.get(prefix + "#" + index) : null;
      if (bytes != null) {
        slot.stored = new String(bytes, StandardCharsets.UTF_8);
        slot.present = true;
        slot.value = (E) Beans.fromJson(slot.stored, elementType);
      }
      touched.put(index, slot);
    }
    return slot;
  }

  private long storedSize() {
    length();
    return storedSize;
  }

  private void check(long index, long bound) {
    if (index < 0 || index >= bound) throw new IndexOutOfBoundsException("index " + index + ", size " + length());
  }

  private static <E> E notNull(E e) {
    if (e == null) throw new NullPointerException("HyperList elements cannot be null");
    return e;
  }

  // ---- List ----

  @Override
  public E get(int index) {
    if (prefix == null) return memory.get(index);
    check(index, length());
    return slot(index).value;
  }

  @Override
  public E set(int index, E element) {
    notNull(element);
    if (prefix == null) return memory.set(index, element);
    check(index, length());
    Slot<E> slot = slot(index);
    E old = slot.value;
    slot.value = element;
    return old;
  }

  @Override
  public void add(int index, E element) {
    notNull(element);
    if (prefix == null) {
      memory.add(index, element);
      return;
    }
    long n = length();
    check(index, n + 1);
    for (long i = n; i > index; i--) {
      Slot<E> to = slot(i);
      to.value = slot(i - 1).value;
      to.present = true;
    }
    Slot<E> slot = slot(index);
    slot.value = element;
    slot.present = true;
    size = n + 1;
    modCount++;
  }

  @Override
  public E remove(int index) {
    if (prefix == null) return memory.remove(index);
    long n = length();
    check(index, n);
    E old = slot(index).value;
    for (long i = index; i < n - 1; i++) slot(i).value = slot(i + 1).value;
    Slot<E> last = slot(n - 1);
    last.value = null;
    last.present = false;
    size = n - 1;
    modCount++;
    return old;
  }

  @Override
  public int size() {
    if (prefix == null) return memory.size();
    return Math.toIntExact(length());
  }
}
