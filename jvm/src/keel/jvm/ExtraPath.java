package keel.jvm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * HVM's {@code getValueFromExtra(path)} (docs/jvm.md §10): a value picked out of the transaction's
 * `extra` text (JSON) by a path in the syntax HVM's manual documents — keys separated by '.',
 * `*` and `?` wildcards in a key (the first key that matches, in the document's order), `\` to
 * take '.', '*' or '?' literally, an array's element by its index, `#` for an array's length or,
 * followed by more path, for that path of every element, and the queries `#[key op value]` (the
 * first element that matches) and `#[key op value]#` (all of them) with ==, !=, <, <=, >, >=, %
 * (like, with * and ?) and !% (not like). A value keeps its JSON text: a String comes back as
 * itself, anything else as its JSON (a number as written). A path that finds nothing gives null.
 * The work is charged to the call: a step per 8 characters of extra, and per path element.
 */
public final class ExtraPath {
  private ExtraPath() {}

  /** A JSON value with the text it was written as. */
  private static final class Node {
    final char kind; // o a s n t f z (object, array, string, number, true, false, null)
    final String raw;
    Map<String, Node> object;
    List<Node> array;
    String string;

    Node(char kind, String raw) {
      this.kind = kind;
      this.raw = raw;
    }
  }

  /** The value at `path` in the JSON text `extra`, as text (a string as itself; with `json`, every value as its JSON), or null. */
  public static String find(String extra, String path, boolean json) {
    if (path == null) throw new IllegalArgumentException("a path is null");
    if (extra == null || extra.isEmpty()) return null;
    Meter.charge(extra.length() / 8 + path.length());
    Node root;
    try {
      Parser p = new Parser(extra);
      root = p.value();
      p.space();
      if (p.at < extra.length()) throw new IllegalArgumentException("text after the JSON value");
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("the transaction's extra is not JSON: " + e.getMessage());
    }
    Node found = walk(root, split(path), 0);
    if (found == null || found.kind == 'z') return null;
    return found.kind == 's' && !json ? found.string : found.raw;
  }

  /** a path's elements and queries within queries at most (the search recurses along them) */
  static final int MAX_PATH_ELEMENTS = 64, MAX_QUERY_NESTING = 8;

  /** the deepest nesting of the extra's JSON (the parser recurses) */
  static final int MAX_NESTING = 64;

  /** The path's elements: split at '.' not escaped; a query's brackets may hold dots. */
  private static List<String> split(String path) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    int depth = 0;
    for (int i = 0; i < path.length(); i++) {
      char c = path.charAt(i);
      if (c == '\\' && i + 1 < path.length()) {
        cur.append(c).append(path.charAt(++i));
      } else if (c == '[') {
        if (++depth > MAX_QUERY_NESTING) throw new IllegalArgumentException("a path nests queries at most " + MAX_QUERY_NESTING + " deep");
        cur.append(c);
      } else if (c == ']') {
        depth--;
        cur.append(c);
      } else if (c == '.' && depth == 0) {
        if (out.size() >= MAX_PATH_ELEMENTS) throw new IllegalArgumentException("a path has at most " + MAX_PATH_ELEMENTS + " elements");
        out.add(cur.toString());
        cur.setLength(0);
      } else cur.append(c);
    }
    out.add(cur.toString());
    return out;
  }

  private static Node walk(Node node, List<String> path, int i) {
    if (node == null) return null;
    if (i == path.size()) return node;
    Meter.charge(1);
    String key = path.get(i);
    if (node.kind == 'a') {
      if (key.equals("#")) {
        if (i + 1 == path.size()) return new Node('n', String.valueOf(node.array.size()));
        return collect(node.array, path, i + 1);
      }
      if (key.startsWith("#[")) {
        boolean all = key.endsWith("]#");
        int close = all ? key.length() - 2 : key.length() - 1;
        if (key.charAt(close) != ']') throw new IllegalArgumentException("a query of the path is not closed: " + key);
        String query = key.substring(2, close);
        List<Node> matches = new ArrayList<>();
        for (Node e : node.array) {
          if (matches(e, query)) {
            matches.add(e);
            if (!all) break;
          }
        }
        if (!all) return matches.isEmpty() ? null : walk(matches.get(0), path, i + 1);
        return collect(matches, path, i + 1);
      }
      if (isIndex(key)) {
        int index = Integer.parseInt(key);
        return index < node.array.size() ? walk(node.array.get(index), path, i + 1) : null;
      }
      return null;
    }
    if (node.kind != 'o') return null;
    boolean pattern = false;
    for (int k = 0; k < key.length(); k++) {
      char c = key.charAt(k);
      if (c == '\\') k++;
      else if (c == '*' || c == '?') pattern = true;
    }
    if (!pattern) return walk(node.object.get(unescape(key)), path, i + 1);
    for (Map.Entry<String, Node> e : node.object.entrySet()) if (like(e.getKey(), key)) return walk(e.getValue(), path, i + 1);
    return null;
  }

  /** The rest of the path for each element: an array of what was found. */
  private static Node collect(List<Node> elements, List<String> path, int from) {
    List<Node> out = new ArrayList<>();
    StringBuilder raw = new StringBuilder("[");
    for (Node e : elements) {
      Node found = walk(e, path, from);
      if (found == null) continue;
      if (!out.isEmpty()) raw.append(',');
      raw.append(found.raw);
      out.add(found);
    }
    Node n = new Node('a', raw.append(']').toString());
    n.array = out;
    return n;
  }

  private static boolean isIndex(String key) {
    if (key.isEmpty() || key.length() > 9) return false;
    for (int k = 0; k < key.length(); k++) if (key.charAt(k) < '0' || key.charAt(k) > '9') return false;
    return true;
  }

  private static String unescape(String key) {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < key.length(); k++) {
      char c = key.charAt(k);
      if (c == '\\' && k + 1 < key.length()) c = key.charAt(++k);
      b.append(c);
    }
    return b.toString();
  }

  /** Whether `text` matches `pattern` (* any run, ? one character, \ takes the next literally), by dynamic programming (no backtracking blow-up). */
  private static boolean like(String text, String pattern) {
    List<Character> p = new ArrayList<>();
    List<Boolean> literal = new ArrayList<>();
    for (int k = 0; k < pattern.length(); k++) {
      char c = pattern.charAt(k);
      boolean lit = false;
      if (c == '\\' && k + 1 < pattern.length()) {
        c = pattern.charAt(++k);
        lit = true;
      }
      p.add(c);
      literal.add(lit);
    }
    Meter.charge((long) (text.length() + 1) * (p.size() + 1) / 16);
    boolean[] prev = new boolean[text.length() + 1];
    prev[0] = true;
    for (int j = 0; j < p.size(); j++) {
      boolean[] cur = new boolean[text.length() + 1];
      char c = p.get(j);
      boolean star = c == '*' && !literal.get(j);
      boolean one = c == '?' && !literal.get(j);
      if (star) cur[0] = prev[0];
      for (int t = 1; t <= text.length(); t++) {
        if (star) cur[t] = prev[t] || cur[t - 1];
        else cur[t] = prev[t - 1] && (one || text.charAt(t - 1) == c);
      }
      prev = cur;
    }
    return prev[text.length()];
  }

  private static final String[] OPS = {"==", "!=", "<=", ">=", "!%", "<", ">", "%"};

  /** A query `key op value` (or a bare key: the element has it) against one element. */
  private static boolean matches(Node element, String query) {
    int at = -1;
    String op = null;
    for (int k = 0; k < query.length() && op == null; k++) {
      if (query.charAt(k) == '\\') {
        k++;
        continue;
      }
      for (String o : OPS)
        if (query.startsWith(o, k)) {
          at = k;
          op = o;
          break;
        }
    }
    if (op == null) return walk(element, split(query.trim()), 0) != null;
    Node left = walk(element, split(query.substring(0, at).trim()), 0);
    if (left == null) return false;
    String right = query.substring(at + op.length()).trim();
    Node value;
    try {
      Parser p = new Parser(right);
      value = p.value();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("the value of the query " + query + " is not JSON");
    }
    if (op.equals("%") || op.equals("!%")) {
      boolean like = left.kind == 's' && value.kind == 's' && like(left.string, value.string);
      return op.equals("%") == like;
    }
    int cmp;
    if (left.kind == 'n' && value.kind == 'n') cmp = new java.math.BigDecimal(left.raw).compareTo(new java.math.BigDecimal(value.raw));
    else if (left.kind == 's' && value.kind == 's') cmp = left.string.compareTo(value.string);
    else if (op.equals("==")) return left.raw.equals(value.raw);
    else if (op.equals("!=")) return !left.raw.equals(value.raw);
    else return false;
    switch (op) {
      case "==":
        return cmp == 0;
      case "!=":
        return cmp != 0;
      case "<":
        return cmp < 0;
      case "<=":
        return cmp <= 0;
      case ">":
        return cmp > 0;
      default:
        return cmp >= 0;
    }
  }

  /** JSON into Nodes that keep their text. */
  private static final class Parser {
    final String s;
    int at;
    int depth;

    Parser(String s) {
      this.s = s;
    }

    void space() {
      while (at < s.length() && Character.isWhitespace(s.charAt(at))) at++;
    }

    Node value() {
      if (++depth > MAX_NESTING) throw new IllegalArgumentException("nested more than " + MAX_NESTING + " deep");
      try {
        return value0();
      } finally {
        depth--;
      }
    }

    Node value0() {
      space();
      if (at >= s.length()) throw new IllegalArgumentException("the text ends early");
      int start = at;
      char c = s.charAt(at);
      if (c == '{') {
        at++;
        Map<String, Node> m = new LinkedHashMap<>();
        space();
        if (s.charAt(at) == '}') at++;
        else
          for (;;) {
            space();
            String k = string();
            space();
            expect(':');
            m.putIfAbsent(k, value());
            space();
            if (s.charAt(at) == ',') at++;
            else {
              expect('}');
              break;
            }
          }
        Node n = new Node('o', s.substring(start, at));
        n.object = m;
        return n;
      }
      if (c == '[') {
        at++;
        List<Node> l = new ArrayList<>();
        space();
        if (s.charAt(at) == ']') at++;
        else
          for (;;) {
            l.add(value());
            space();
            if (s.charAt(at) == ',') at++;
            else {
              expect(']');
              break;
            }
          }
        Node n = new Node('a', s.substring(start, at));
        n.array = l;
        return n;
      }
      if (c == '"') {
        String text = string();
        Node n = new Node('s', s.substring(start, at));
        n.string = text;
        return n;
      }
      for (String word : new String[] {"true", "false", "null"})
        if (s.startsWith(word, at)) {
          at += word.length();
          return new Node(word.charAt(0) == 'n' ? 'z' : word.charAt(0), word);
        }
      while (at < s.length() && "+-0123456789.eE".indexOf(s.charAt(at)) >= 0) at++;
      if (at == start) throw new IllegalArgumentException("unexpected '" + c + "' at " + start);
      String raw = s.substring(start, at);
      // within the limits every number a contract holds keeps (comparing numbers of far-apart scales is work)
      Guards.checkNumber(new java.math.BigDecimal(raw));
      return new Node('n', raw);
    }

    void expect(char c) {
      if (at >= s.length() || s.charAt(at) != c) throw new IllegalArgumentException("expected '" + c + "' at " + at);
      at++;
    }

    String string() {
      if (at >= s.length() || s.charAt(at) != '"') expect('"');
      int[] end = {at};
      try {
        String text = Json.readString(s, end);
        at = end[0];
        return text;
      } catch (IllegalArgumentException bad) {
        throw new IllegalArgumentException(bad.getMessage() + " at " + end[0]);
      }
    }
  }
}
