package cn.hyperchain.core;

import java.lang.reflect.Type;

/**
 * The engine's side of the ledger collections (not part of Hyperchain's API, and not a class a
 * contract may name: the deploy-time scan and the contract class loader refuse it).
 */
public final class Stores {
  private Stores() {}

  public static void bind(HyperMap<?, ?> map, String prefix, Type keyType, Type valueType) {
    map.bind(prefix, keyType, valueType);
  }

  public static boolean isBound(HyperMap<?, ?> map) {
    return map.isBound();
  }

  public static void flush(HyperMap<?, ?> map) {
    map.flush();
  }

  public static void bind(HyperList<?> list, String prefix, Type elementType) {
    list.bind(prefix, elementType);
  }

  public static void flush(HyperList<?> list) {
    list.flush();
  }

  public static void bind(HyperTable table, String field) {
    table.bind(field);
  }
}
