package keel.jvm;

import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Values of Hyperchain-style contracts as JSON, the way HVM keeps them (its `@StoreField` fields,
 * `HyperMap` entries, event data, bean arguments and results): numbers, strings and booleans as
 * themselves, collections and arrays as arrays, maps as objects, and a contract's own classes
 * (beans) as objects of their instance fields, super class fields first, each class's in
 * declaration order. Only the contract's own classes are read and built field by field: JDK
 * classes beyond the values above are refused, so nothing reaches into JDK internals. The text
 * costs steps by its length, like ledger values.
 */
public final class Beans {
  private Beans() {}

  static final int MAX_DEPTH = 64;

  /** The JSON text of `value`. */
  public static String toJson(Object value) {
    StringBuilder b = new StringBuilder();
    write(b, value, 0);
    Meter.charge(b.length() / 8);
    return b.toString();
  }

  /** `text` (JSON) as a value of `type`. */
  public static Object fromJson(String text, Type type) {
    Meter.charge(text.length() / 8);
    Object parsed;
    try {
      parsed = Json.parse(text);
    } catch (Json.ParseException e) {
      throw new IllegalArgumentException("not JSON: " + e.getMessage());
    }
    return convert(parsed, type, 0);
  }

  /** Whether `c` is one of a contract's own classes (defined by a contract's loader). */
  static boolean isOwn(Class<?> c) {
    return c.getClassLoader() instanceof ContractLoader;
  }

  private static void write(StringBuilder b, Object v, int depth) {
    if (depth > MAX_DEPTH) throw new IllegalArgumentException("a value nested more than " + MAX_DEPTH + " deep (or holding itself) cannot be stored");
    if (v == null || v instanceof String || v instanceof Boolean || v instanceof Number || v instanceof Character) {
      Json.write(b, v, Integer.MAX_VALUE);
    } else if (v instanceof Enum) {
      Json.quote(b, ((Enum<?>) v).name());
    } else if (v instanceof Map) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!first) b.append(',');
        first = false;
        Object k = e.getKey();
        Json.quote(b, k instanceof String ? (String) k : k instanceof Enum ? ((Enum<?>) k).name() : toJson(k));
        b.append(':');
        write(b, e.getValue(), depth + 1);
      }
      b.append('}');
    } else if (v instanceof Collection) {
      b.append('[');
      boolean first = true;
      for (Object o : (Collection<?>) v) {
        if (!first) b.append(',');
        first = false;
        write(b, o, depth + 1);
      }
      b.append(']');
    } else if (v.getClass().isArray()) {
      b.append('[');
      int n = Array.getLength(v);
      for (int i = 0; i < n; i++) {
        if (i > 0) b.append(',');
        write(b, Array.get(v, i), depth + 1);
      }
      b.append(']');
    } else if (isOwn(v.getClass())) {
      b.append('{');
      boolean first = true;
      for (Field f : fields(v.getClass())) {
        Object value;
        try {
          value = f.get(v);
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
        if (value == null) continue;
        if (!first) b.append(',');
        first = false;
        Json.quote(b, f.getName());
        b.append(':');
        write(b, value, depth + 1);
      }
      b.append('}');
    } else {
      throw new IllegalArgumentException("a " + v.getClass().getName() + " cannot be stored or returned as JSON (use numbers, strings, collections, maps, arrays or the contract's own classes)");
    }
  }

  /** Instance fields of an own class and its own super classes, super class first, each in declaration order. */
  static List<Field> fields(Class<?> c) {
    List<Field> out = new ArrayList<>();
    if (c.getSuperclass() != null && isOwn(c.getSuperclass())) out.addAll(fields(c.getSuperclass()));
    for (Field f : c.getDeclaredFields()) {
      int m = f.getModifiers();
      if (Modifier.isStatic(m) || Modifier.isTransient(m) || f.isSynthetic()) continue;
      f.setAccessible(true);
      out.add(f);
    }
    return out;
  }

  private static Class<?> raw(Type t) {
    if (t instanceof Class) return (Class<?>) t;
    if (t instanceof ParameterizedType) return (Class<?>) ((ParameterizedType) t).getRawType();
    if (t instanceof GenericArrayType) return Array.newInstance(raw(((GenericArrayType) t).getGenericComponentType()), 0).getClass();
    if (t instanceof WildcardType) return raw(((WildcardType) t).getUpperBounds()[0]);
    return Object.class;
  }

  private static Type argument(Type t, int i) {
    if (t instanceof ParameterizedType) {
      Type[] a = ((ParameterizedType) t).getActualTypeArguments();
      if (i < a.length) return a[i];
    }
    return Object.class;
  }

  private static long whole(Object v) {
    if (v instanceof Long) return (Long) v;
    if (v instanceof BigDecimal) return ((BigDecimal) v).longValueExact();
    if (v instanceof String) return Long.parseLong(((String) v).trim());
    throw new IllegalArgumentException("expected a number, got " + Json.write(v));
  }

  private static BigDecimal decimal(Object v) {
    if (v instanceof Long) return BigDecimal.valueOf((Long) v);
    if (v instanceof BigDecimal) return (BigDecimal) v;
    if (v instanceof String) return new BigDecimal(((String) v).trim());
    throw new IllegalArgumentException("expected a number, got " + Json.write(v));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static Object convert(Object v, Type type, int depth) {
    if (depth > MAX_DEPTH) throw new IllegalArgumentException("nested too deeply");
    Class<?> c = raw(type);
    if (v == null) {
      if (c.isPrimitive()) throw new IllegalArgumentException("null for a " + c.getName());
      return null;
    }
    if (c == Object.class) return v;
    if (c == String.class || c == CharSequence.class) return v instanceof String ? v : Json.write(v);
    if (c == int.class || c == Integer.class) return Math.toIntExact(whole(v));
    if (c == long.class || c == Long.class) return whole(v);
    if (c == short.class || c == Short.class) return (short) Math.toIntExact(whole(v));
    if (c == byte.class || c == Byte.class) return (byte) Math.toIntExact(whole(v));
    if (c == double.class || c == Double.class) return decimal(v).doubleValue();
    if (c == float.class || c == Float.class) return decimal(v).floatValue();
    if (c == boolean.class || c == Boolean.class) {
      if (v instanceof Boolean) return v;
      if ("true".equals(v)) return true;
      if ("false".equals(v)) return false;
      throw new IllegalArgumentException("expected true or false, got " + Json.write(v));
    }
    if (c == char.class || c == Character.class) {
      String s = String.valueOf(v);
      if (s.length() != 1) throw new IllegalArgumentException("expected one character, got " + Json.write(v));
      return s.charAt(0);
    }
    if (c == BigInteger.class) return decimal(v).toBigIntegerExact();
    if (c == BigDecimal.class) return decimal(v);
    if (c.isEnum()) return Enum.valueOf((Class) c, String.valueOf(v));
    if (c.isArray()) {
      List<?> list = list(v);
      Object array = Array.newInstance(c.getComponentType(), list.size());
      Type element = type instanceof GenericArrayType ? ((GenericArrayType) type).getGenericComponentType() : c.getComponentType();
      for (int i = 0; i < list.size(); i++) Array.set(array, i, convert(list.get(i), element, depth + 1));
      return array;
    }
    if (Collection.class.isAssignableFrom(c)) {
      Collection<Object> out;
      if (c.isAssignableFrom(ArrayList.class)) out = new ArrayList<>();
      else if (c.isAssignableFrom(LinkedHashSet.class)) out = new LinkedHashSet<>();
      else if (c.isAssignableFrom(TreeSet.class)) out = new TreeSet<>();
      else throw new IllegalArgumentException("a " + c.getName() + " cannot be read from JSON");
      for (Object o : list(v)) out.add(convert(o, argument(type, 0), depth + 1));
      return out;
    }
    if (Map.class.isAssignableFrom(c)) {
      if (!(v instanceof Map)) throw new IllegalArgumentException("expected a JSON object");
      Map<Object, Object> out;
      if (c.isAssignableFrom(LinkedHashMap.class)) out = new LinkedHashMap<>();
      else if (c.isAssignableFrom(TreeMap.class)) out = new TreeMap<>();
      else throw new IllegalArgumentException("a " + c.getName() + " cannot be read from JSON");
      Type keyType = argument(type, 0);
      for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
        Object key = raw(keyType) == String.class || raw(keyType) == Object.class ? e.getKey() : convert(keyText(e.getKey()), keyType, depth + 1);
        out.put(key, convert(e.getValue(), argument(type, 1), depth + 1));
      }
      return out;
    }
    if (isOwn(c)) {
      if (!(v instanceof Map)) throw new IllegalArgumentException("expected a JSON object for a " + c.getName());
      Object bean;
      try {
        Constructor<?> k = c.getDeclaredConstructor();
        k.setAccessible(true);
        bean = k.newInstance();
      } catch (NoSuchMethodException e) {
        throw new IllegalArgumentException(c.getName() + " needs a constructor without parameters to be read from JSON (a static nested class, not an inner one)");
      } catch (java.lang.reflect.InvocationTargetException e) {
        Throwable cause = e.getCause();
        if (cause instanceof RuntimeException) throw (RuntimeException) cause;
        if (cause instanceof Error) throw (Error) cause;
        throw new IllegalStateException(cause);
      } catch (ReflectiveOperationException e) {
        throw new IllegalArgumentException("cannot make a " + c.getName() + ": " + e);
      }
      Map<String, Object> m = (Map<String, Object>) v;
      for (Field f : fields(c)) {
        if (!m.containsKey(f.getName())) continue;
        try {
          f.set(bean, convert(m.get(f.getName()), f.getGenericType(), depth + 1));
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
      }
      return bean;
    }
    throw new IllegalArgumentException("a " + c.getName() + " cannot be read from JSON");
  }

  /** A map key's text as the JSON value it stands for (numbers and booleans unquoted). */
  private static Object keyText(String key) {
    try {
      return Json.parse(key);
    } catch (Json.ParseException e) {
      return key;
    }
  }

  private static List<?> list(Object v) {
    if (!(v instanceof List)) throw new IllegalArgumentException("expected a JSON array, got " + Json.write(v));
    return (List<?>) v;
  }
}
