package keel.jvm;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON for the node protocol and for argument and result values: objects become LinkedHashMap,
 * arrays ArrayList, integers Long (BigDecimal when they do not fit), other numbers BigDecimal.
 */
final class Json {
  private Json() {}

  static final class ParseException extends Exception {
    ParseException(String message) {
      super(message);
    }
  }

  static Object parse(String text) throws ParseException {
    Json.Parser p = new Json.Parser(text);
    p.ws();
    Object v = p.value(0);
    p.ws();
    if (p.i != text.length()) throw new ParseException("trailing text at " + p.i);
    return v;
  }

  private static final class Parser {
    final String s;
    int i;

    Parser(String s) {
      this.s = s;
    }

    void ws() {
      while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\n' || s.charAt(i) == '\r' || s.charAt(i) == '\t')) i++;
    }

    ParseException error(String what) {
      return new ParseException(what + " at " + i);
    }

    Object value(int depth) throws ParseException {
      if (depth > 64) throw error("nested too deeply");
      if (i >= s.length()) throw error("unexpected end");
      char c = s.charAt(i);
      if (c == '{') {
        i++;
        Map<String, Object> m = new LinkedHashMap<>();
        ws();
        if (i < s.length() && s.charAt(i) == '}') {
          i++;
          return m;
        }
        for (;;) {
          ws();
          if (i >= s.length() || s.charAt(i) != '"') throw error("expected a key");
          String k = string();
          ws();
          expect(':');
          ws();
          m.put(k, value(depth + 1));
          ws();
          if (i < s.length() && s.charAt(i) == ',') {
            i++;
            continue;
          }
          expect('}');
          return m;
        }
      }
      if (c == '[') {
        i++;
        List<Object> l = new ArrayList<>();
        ws();
        if (i < s.length() && s.charAt(i) == ']') {
          i++;
          return l;
        }
        for (;;) {
          ws();
          l.add(value(depth + 1));
          ws();
          if (i < s.length() && s.charAt(i) == ',') {
            i++;
            continue;
          }
          expect(']');
          return l;
        }
      }
      if (c == '"') return string();
      if (s.startsWith("true", i)) {
        i += 4;
        return Boolean.TRUE;
      }
      if (s.startsWith("false", i)) {
        i += 5;
        return Boolean.FALSE;
      }
      if (s.startsWith("null", i)) {
        i += 4;
        return null;
      }
      int start = i;
      if (i < s.length() && s.charAt(i) == '-') i++;
      while (i < s.length() && "0123456789.eE+-".indexOf(s.charAt(i)) >= 0) i++;
      if (start == i) throw error("unexpected character '" + c + "'");
      String number = s.substring(start, i);
      try {
        BigDecimal d = new BigDecimal(number);
        if (number.indexOf('.') < 0 && number.indexOf('e') < 0 && number.indexOf('E') < 0) {
          try {
            return d.longValueExact();
          } catch (ArithmeticException tooBig) {
            return d;
          }
        }
        return d;
      } catch (NumberFormatException e) {
        throw error("bad number " + number);
      }
    }

    void expect(char c) throws ParseException {
      if (i >= s.length() || s.charAt(i) != c) throw error("expected '" + c + "'");
      i++;
    }

    String string() throws ParseException {
      int[] at = {i};
      try {
        String text = readString(s, at);
        i = at[0];
        return text;
      } catch (IllegalArgumentException bad) {
        i = at[0];
        throw error(bad.getMessage());
      }
    }
  }

  /**
   * The JSON string whose opening quote is at {@code s[at[0]]}: its text, with {@code at[0]} moved
   * past its closing quote. A malformed one throws IllegalArgumentException saying what is wrong,
   * {@code at[0]} where. The parser below and ExtraPath's path parser read strings with it.
   */
  static String readString(String s, int[] at) {
    int i = at[0] + 1;
    StringBuilder b = new StringBuilder();
    while (i < s.length()) {
      char c = s.charAt(i++);
      if (c == '"') {
        at[0] = i;
        return b.toString();
      }
      if (c != '\\') {
        b.append(c);
        continue;
      }
      if (i >= s.length()) break;
      char e = s.charAt(i++);
      switch (e) {
        case 'n':
          b.append('\n');
          break;
        case 't':
          b.append('\t');
          break;
        case 'r':
          b.append('\r');
          break;
        case 'b':
          b.append('\b');
          break;
        case 'f':
          b.append('\f');
          break;
        case 'u':
          at[0] = i;
          if (i + 4 > s.length()) throw new IllegalArgumentException("bad \\u escape");
          try {
            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          } catch (NumberFormatException x) {
            throw new IllegalArgumentException("bad \\u escape");
          }
          i += 4;
          break;
        default:
          b.append(e);
      }
    }
    at[0] = i;
    throw new IllegalArgumentException("unterminated string");
  }

  static String write(Object v) {
    StringBuilder b = new StringBuilder();
    write(b, v, Integer.MAX_VALUE);
    return b.toString();
  }

  static final class TooLong extends RuntimeException {
    TooLong(String message) {
      super(message, null, false, false);
    }
  }

  /** JSON of `v`, stopping with TooLong as soon as the text passes `limit` characters. */
  static String write(Object v, int limit) {
    StringBuilder b = new StringBuilder();
    write(b, v, limit);
    if (b.length() > limit) throw new TooLong("more than " + limit + " characters");
    return b.toString();
  }

  @SuppressWarnings("unchecked")
  static void write(StringBuilder b, Object v, int limit) {
    if (b.length() > limit) throw new TooLong("more than " + limit + " characters");
    if (v == null) b.append("null");
    else if (v instanceof String) quote(b, (String) v);
    else if (v instanceof Boolean || v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
        || v instanceof java.math.BigInteger)
      b.append(v);
    else if (v instanceof BigDecimal) b.append(((BigDecimal) v).toString());
    else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isFinite(d)) b.append(v);
      else quote(b, v.toString());
    } else if (v instanceof Character) quote(b, v.toString());
    else if (v instanceof Map) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<Object, Object> e : ((Map<Object, Object>) v).entrySet()) {
        if (!first) b.append(',');
        first = false;
        quote(b, String.valueOf(e.getKey()));
        b.append(':');
        write(b, e.getValue(), limit);
      }
      b.append('}');
    } else if (v instanceof Collection) {
      b.append('[');
      boolean first = true;
      for (Object o : (Collection<Object>) v) {
        if (!first) b.append(',');
        first = false;
        write(b, o, limit);
      }
      b.append(']');
    } else if (v.getClass().isArray()) {
      b.append('[');
      int n = java.lang.reflect.Array.getLength(v);
      for (int k = 0; k < n; k++) {
        if (k > 0) b.append(',');
        write(b, java.lang.reflect.Array.get(v, k), limit);
      }
      b.append(']');
    } else quote(b, v.toString());
  }

  static void quote(StringBuilder b, String s) {
    b.append('"');
    for (int k = 0; k < s.length(); k++) {
      char c = s.charAt(k);
      switch (c) {
        case '"':
          b.append("\\\"");
          break;
        case '\\':
          b.append("\\\\");
          break;
        case '\n':
          b.append("\\n");
          break;
        case '\r':
          b.append("\\r");
          break;
        case '\t':
          b.append("\\t");
          break;
        default:
          if (c < 0x20 || (c >= 0xd800 && c <= 0xdfff)) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
      }
    }
    b.append('"');
  }
}
