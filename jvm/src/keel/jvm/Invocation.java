package keel.jvm;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Choosing the function a call names and converting its arguments; encoding the return value.
 *
 * Two argument forms: typed (HVM direct call: each argument carries its Java type name and a value,
 * the raw text for String, JSON otherwise) and strings (1.x: every argument a string, converted to
 * the declared parameter type; a function taking one List receives them all).
 */
final class Invocation {
  private Invocation() {}

  static final class Bound {
    final Method method;
    final Object[] values;

    Bound(Method method, Object[] values) {
      this.method = method;
      this.values = values;
    }
  }

  @SuppressWarnings("unchecked")
  static Bound bind(String name, List<Method> candidates, List<Object> args, boolean typed) throws Contracts.Failure {
    List<String> types = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    for (Object a : args) {
      if (typed) {
        Map<String, Object> arg = (Map<String, Object>) a;
        types.add((String) arg.get("type"));
        texts.add((String) arg.get("value"));
      } else {
        texts.add((String) a);
      }
    }
    List<Method> sameArity = new ArrayList<>();
    for (Method m : candidates) if (m.getParameterCount() == texts.size()) sameArity.add(m);
    Method chosen = null;
    if (sameArity.size() == 1) chosen = sameArity.get(0);
    else if (sameArity.size() > 1) {
      for (Method m : sameArity) {
        boolean match = true;
        Class<?>[] p = m.getParameterTypes();
        for (int i = 0; i < p.length && match; i++)
          match = typed ? sameType(p[i], types.get(i)) : p[i] == String.class;
        if (match) {
          if (chosen != null) throw ambiguous(name, texts.size());
          chosen = m;
        }
      }
      if (chosen == null) throw ambiguous(name, texts.size());
    } else if (!typed) {
      // 1.x shape: f(List<String> args) takes every argument
      for (Method m : candidates)
        if (m.getParameterCount() == 1 && m.getParameterTypes()[0].isAssignableFrom(ArrayList.class)) {
          return new Bound(m, new Object[] {new ArrayList<>(texts)});
        }
    }
    if (chosen == null)
      throw new Contracts.Failure("bad-args", "the contract has no function " + name + " taking " + texts.size() + " argument" + (texts.size() == 1 ? "" : "s"));
    Class<?>[] p = chosen.getParameterTypes();
    Type[] generic = chosen.getGenericParameterTypes();
    Object[] values = new Object[p.length];
    for (int i = 0; i < p.length; i++) {
      try {
        values[i] = convert(texts.get(i), p[i], generic[i], typed);
      } catch (IllegalArgumentException | ArithmeticException | Json.ParseException e) {
        throw new Contracts.Failure("bad-args", "argument " + (i + 1) + " of " + name + " is not a " + p[i].getSimpleName() + ": " + e.getMessage());
      }
    }
    return new Bound(chosen, values);
  }

  private static Contracts.Failure ambiguous(String name, int n) {
    return new Contracts.Failure("bad-args", "several functions " + name + " take " + n + " arguments: send typed arguments (the HVM form) to choose");
  }

  private static boolean sameType(Class<?> declared, String sent) {
    if (sent == null) return false;
    int generic = sent.indexOf('<');
    String erased = (generic < 0 ? sent : sent.substring(0, generic)).trim();
    return declared.getName().equals(erased) || declared.getCanonicalName() != null && declared.getCanonicalName().equals(erased);
  }

  private static String unquote(String text, boolean typed) throws Json.ParseException {
    String t = text.trim();
    if (typed && t.startsWith("\"")) {
      Object v = Json.parse(t);
      if (v instanceof String) return (String) v;
    }
    return t;
  }

  static Object convert(String text, Class<?> type, Type generic, boolean typed) throws Json.ParseException {
    if (text == null) throw new IllegalArgumentException("missing");
    if (type == String.class || type == CharSequence.class || type == Object.class) return text;
    if (type == int.class || type == Integer.class) return Integer.parseInt(unquote(text, typed));
    if (type == long.class || type == Long.class) return Long.parseLong(unquote(text, typed));
    if (type == short.class || type == Short.class) return Short.parseShort(unquote(text, typed));
    if (type == byte.class || type == Byte.class) return Byte.parseByte(unquote(text, typed));
    if (type == double.class || type == Double.class) return Double.parseDouble(unquote(text, typed));
    if (type == float.class || type == Float.class) return Float.parseFloat(unquote(text, typed));
    if (type == boolean.class || type == Boolean.class) {
      String t = unquote(text, typed);
      if (t.equals("true")) return true;
      if (t.equals("false")) return false;
      throw new IllegalArgumentException("expected true or false, got " + t);
    }
    if (type == char.class || type == Character.class) {
      String t = typed ? unquote(text, true) : text;
      if (t.length() != 1) throw new IllegalArgumentException("expected one character");
      return t.charAt(0);
    }
    // numbers enter within the limits every number a contract holds keeps (Guards.checkNumber);
    // the text is bounded first: parsing decimal digits takes time quadratic in their count
    if (type == BigInteger.class || type == BigDecimal.class) {
      String digits = unquote(text, typed);
      if (digits.length() > MAX_NUMBER_CHARS) throw new ArithmeticException("a number argument has at most " + MAX_NUMBER_CHARS + " characters");
      Object n = type == BigInteger.class ? new BigInteger(digits) : new BigDecimal(digits);
      Guards.checkNumber(n);
      return n;
    }
    if (type == byte[].class) {
      String t = unquote(text, typed);
      if (t.startsWith("0x") || t.startsWith("0X")) t = t.substring(2);
      if (t.length() % 2 != 0) throw new IllegalArgumentException("odd number of hex digits");
      byte[] out = new byte[t.length() / 2];
      for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(t.substring(2 * i, 2 * i + 2), 16);
      return out;
    }
    Object parsed = Json.parse(text);
    if (type.isArray()) {
      if (!(parsed instanceof List)) throw new IllegalArgumentException("expected a JSON array");
      List<?> list = (List<?>) parsed;
      Object array = java.lang.reflect.Array.newInstance(type.getComponentType(), list.size());
      for (int i = 0; i < list.size(); i++)
        java.lang.reflect.Array.set(array, i, convert(jsonText(list.get(i)), type.getComponentType(), type.getComponentType(), true));
      return array;
    }
    if (type.isAssignableFrom(ArrayList.class)) {
      if (!(parsed instanceof List)) throw new IllegalArgumentException("expected a JSON array");
      Class<?> element = elementType(generic, 0);
      List<Object> out = new ArrayList<>();
      for (Object o : (List<?>) parsed) out.add(element == null ? o : convert(jsonText(o), element, element, true));
      return out;
    }
    if (type.isAssignableFrom(LinkedHashMap.class)) {
      if (!(parsed instanceof Map)) throw new IllegalArgumentException("expected a JSON object");
      Class<?> value = elementType(generic, 1);
      Map<Object, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) parsed).entrySet())
        out.put(e.getKey(), value == null ? e.getValue() : convert(jsonText(e.getValue()), value, value, true));
      return out;
    }
    // a contract's own class (an HVM bean) from its JSON
    if (Beans.isOwn(type)) return Beans.convert(parsed, generic, 0);
    throw new IllegalArgumentException("parameters of type " + type.getName() + " cannot be passed in a transaction");
  }

  /** The text form a nested JSON value has as a typed argument (strings raw, everything else JSON). */
  private static String jsonText(Object v) {
    return v instanceof String ? (String) v : Json.write(v);
  }

  private static Class<?> elementType(Type generic, int index) {
    if (generic instanceof ParameterizedType) {
      Type[] a = ((ParameterizedType) generic).getActualTypeArguments();
      if (index < a.length && a[index] instanceof Class) return (Class<?>) a[index];
    }
    return null;
  }

  /** the longest text of a BigInteger or BigDecimal argument */
  static final int MAX_NUMBER_CHARS = 20_000;

  /** the largest return value a receipt holds, bytes (a ledger value's limit) */
  static final int MAX_RET_BYTES = 64 * 1024;

  /** `ret`: empty for void/null, UTF-8 of a String, raw bytes of byte[], JSON of collections and arrays, text otherwise. */
  static byte[] encode(Object result, Class<?> returnType) {
    if (returnType == void.class || result == null) return new byte[0];
    byte[] ret;
    if (result instanceof byte[]) ret = bounded(((byte[]) result).length) ? ((byte[]) result).clone() : null;
    else if (result instanceof String) ret = bounded(((String) result).length()) ? ((String) result).getBytes(StandardCharsets.UTF_8) : null;
    else if (result instanceof Collection || result instanceof Map || result.getClass().isArray()) {
      try {
        ret = Json.write(result, MAX_RET_BYTES).getBytes(StandardCharsets.UTF_8);
      } catch (Json.TooLong e) {
        ret = null;
      }
    } else if (result instanceof BigDecimal) {
      Guards.checkNumber(result);
      ret = ((BigDecimal) result).toPlainString().getBytes(StandardCharsets.UTF_8);
    } else {
      String text = String.valueOf(result);
      ret = bounded(text.length()) ? text.getBytes(StandardCharsets.UTF_8) : null;
    }
    if (ret == null || ret.length > MAX_RET_BYTES)
      throw new Stop(Stop.Kind.LIMIT, "the return value exceeds " + MAX_RET_BYTES + " bytes (a receipt's limit); return less, or keep it in the ledger");
    return ret;
  }

  private static boolean bounded(int length) {
    return length <= MAX_RET_BYTES;
  }
}
