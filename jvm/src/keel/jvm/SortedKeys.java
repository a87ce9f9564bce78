package keel.jvm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A sorted set of strings kept in the contract's ledger, for what needs keys in order (1.x range
 * queries, HyperTable's rows, column families and columns), which a store addressed by key hashes
 * does not give. In pages of at most 64 strings: under `prefix` the directory `[[first string,
 * page id], …]` in order, under `prefix:<id>` a page (a JSON array), under `prefix#next` the next
 * page id. Adding or removing a string reads and writes the directory and one page; every access
 * goes through the ledger (Host), so it is metered and undone with the call like any other.
 */
public final class SortedKeys {
  static final int PAGE_KEYS = 64;

  private final String directoryKey;
  private final String pageKey;
  private final String nextKey;

  public SortedKeys(String prefix) {
    this.directoryKey = prefix;
    this.pageKey = prefix + ":";
    this.nextKey = prefix + "#next";
  }

  private static String text(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  /** [[first string, page id], …] in order */
  private List<Object> directory() {
    String json = text(Host.get(directoryKey));
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
  private List<String> page(long id) {
    String json = text(Host.get(pageKey + id));
    return json == null ? new ArrayList<>() : (List<String>) Beans.fromJson(json, List.class);
  }

  private static void save(String key, Object value) {
    Host.put(key, value == null ? null : Beans.toJson(value).getBytes(StandardCharsets.UTF_8));
  }

  /** The place of the page that holds (or would hold) `key`: the last whose first string is not above it, or 0. */
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

  public boolean isEmpty() {
    return Host.get(directoryKey) == null;
  }

  /** Adds `key`; false when it was there. */
  public boolean add(String key) {
    List<Object> directory = directory();
    if (directory.isEmpty()) {
      List<String> keys = new ArrayList<>();
      keys.add(key);
      save(pageKey + 0, keys);
      directory.add(entry(key, 0));
      save(directoryKey, directory);
      save(nextKey, 1L);
      return true;
    }
    int at = pageFor(directory, key);
    long id = pageId(directory, at);
    List<String> keys = page(id);
    int i = Collections.binarySearch(keys, key);
    if (i >= 0) return false;
    keys.add(-i - 1, key);
    if (keys.size() > PAGE_KEYS) {
      long next = Long.parseLong(text(Host.get(nextKey)));
      List<String> upper = new ArrayList<>(keys.subList(keys.size() / 2, keys.size()));
      keys = new ArrayList<>(keys.subList(0, keys.size() / 2));
      save(pageKey + next, upper);
      directory.add(at + 1, entry(upper.get(0), next));
      save(nextKey, next + 1);
    }
    save(pageKey + id, keys);
    directory.set(at, entry(keys.get(0), id));
    save(directoryKey, directory);
    return true;
  }

  /** Removes `key`; false when it was not there. */
  public boolean remove(String key) {
    List<Object> directory = directory();
    if (directory.isEmpty()) return false;
    int at = pageFor(directory, key);
    long id = pageId(directory, at);
    List<String> keys = page(id);
    int i = Collections.binarySearch(keys, key);
    if (i < 0) return false;
    keys.remove(i);
    if (keys.isEmpty()) {
      save(pageKey + id, null);
      directory.remove(at);
    } else {
      save(pageKey + id, keys);
      directory.set(at, entry(keys.get(0), id));
    }
    save(directoryKey, directory.isEmpty() ? null : directory);
    return true;
  }

  /** The strings from `start` (included; null: from the first) to `end` (excluded; null: to the last), in order. */
  public List<String> range(String start, String end) {
    List<String> out = new ArrayList<>();
    List<Object> directory = directory();
    for (int p = directory.isEmpty() || start == null ? 0 : pageFor(directory, start); p < directory.size(); p++) {
      if (end != null && first(directory, p).compareTo(end) >= 0) break;
      for (String k : page(pageId(directory, p)))
        if ((start == null || k.compareTo(start) >= 0) && (end == null || k.compareTo(end) < 0)) out.add(k);
    }
    return out;
  }
}
