package keel.jvm;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a call from contract code into the JDK costs, decided per call site when the contract is
 * loaded (docs/jvm.md §5 "Work and memory inside the JDK"). The steps only see contract bytecode;
 * work the JDK does for it is charged here instead, before it runs, from the sizes of what the call
 * is given (a String's length, an array's, a JDK collection's size, a number's 64-bit words), so a
 * call whose work grows with its input costs steps that grow the same way, on every node alike.
 *
 * <ul>
 *   <li>{@link #plan}: the operands a call is charged for and how (linear, product, quadratic,
 *       n log n, a linked list's walk, a hash bucket of identity keys); null for constant-time
 *       calls. A JDK call no table names is linear in all its operands.
 *   <li>{@link #capacity}: calls whose int argument reserves memory (a capacity, a length): charged
 *       to the memory budget before they run.
 *   <li>{@link #refusal}: JDK members refused outright: per-JVM randomness, shared identity,
 *       unmeterable work (regular expressions, formatting widths), constructors that can make
 *       tables grow without bound.
 * </ul>
 */
final class JdkCosts {
  private JdkCosts() {}

  /** cost kinds: steps = linear sum of operand sizes; product of the first and the rest; quadratic; n log n */
  static final int LINEAR = 0, PRODUCT = 1, QUADRATIC = 2, SORT = 3, LINKED = 4, HASHED = 5;

  /** How a call site is charged: its kind, and whether the receiver's size counts. */
  static final class Plan {
    final int kind;
    final boolean receiver;
    /** the operands' elements are copied into a collection: 8 bytes each are charged to memory */
    final boolean copies;

    Plan(int kind, boolean receiver, boolean copies) {
      this.kind = kind;
      this.receiver = receiver;
      this.copies = copies;
    }
  }

  /** bytes charged for each character a builder takes in: UTF-16's two, and room for its growth (it doubles, keeping the old array while it copies) */
  static final long TEXT_BYTES = 8;

  private static final Plan LINEAR_ALL = new Plan(LINEAR, true, false);
  /** text copied into a builder (append, insert, replace, a constructor's initial text): charged to memory (TEXT_BYTES a character) */
  private static final Plan TEXT_ARGS = new Plan(LINEAR, false, true);
  private static final Plan TEXT_ALL = new Plan(LINEAR, true, true);
  private static final Plan LINEAR_ARGS = new Plan(LINEAR, false, false);
  private static final Plan COPY_ARGS = new Plan(LINEAR, false, true);
  private static final Plan PRODUCT_ALL = new Plan(PRODUCT, true, false);
  private static final Plan QUADRATIC_ALL = new Plan(QUADRATIC, true, false);
  private static final Plan SORT_ALL = new Plan(SORT, true, false);
  /** the receiver's size counts only when it is a linked list (where a position is found by walking) */
  private static final Plan SEQUENTIAL = new Plan(LINKED, true, false);
  /**
   * A look-up by key in a hash table: constant-time, unless the key compares by identity (the
   * executor's identity hashes are all 1, so such keys share one bucket, searched one by one):
   * then the table's size is charged.
   */
  private static final Plan KEYED = new Plan(HASHED, true, false);
  private static final Set<String> HASH_OWNERS = Set.of("java/util/Map", "java/util/HashMap", "java/util/LinkedHashMap", "java/util/Set",
      "java/util/HashSet", "java/util/LinkedHashSet", "java/util/AbstractMap", "java/util/AbstractSet");
  private static final Set<String> KEYED_METHODS = Set.of("get", "put", "containsKey", "remove", "add", "contains", "putIfAbsent",
      "getOrDefault", "computeIfAbsent", "computeIfPresent", "compute", "merge", "replace");

  private static final Set<String> STRING_CONSTANT = Set.of("length", "isEmpty", "charAt", "codePointAt", "codePointBefore", "hashCode", "valueOf",
      "getClass", "describeConstable", "resolveConstantDesc");
  private static final Set<String> STRING_SEARCH = Set.of("indexOf", "lastIndexOf", "contains", "replace");

  private static final Set<String> BUILDERS = Set.of("java/lang/StringBuilder", "java/lang/StringBuffer");
  /** builder methods that work on the builder's whole contents */
  private static final Set<String> BUILDER_WHOLE = Set.of("toString", "indexOf", "lastIndexOf", "reverse", "insert", "delete", "deleteCharAt",
      "replace", "substring", "subSequence", "chars", "codePoints", "compareTo", "trimToSize", "codePointCount", "offsetByCodePoints");

  private static final Set<String> NUMBERS = Set.of("java/math/BigInteger", "java/math/BigDecimal", "java/math/MathContext");
  private static final Set<String> NUMBER_CONSTANT = Set.of("signum", "bitLength", "scale", "testBit", "intValue", "longValue", "shortValue",
      "byteValue", "getPrecision", "getRoundingMode", "valueOf");
  private static final Set<String> COLLECTIONS = Set.of("java/util/Collection", "java/util/List", "java/util/ArrayList", "java/util/LinkedList",
      "java/util/Map", "java/util/HashMap", "java/util/LinkedHashMap", "java/util/TreeMap", "java/util/SortedMap", "java/util/NavigableMap",
      "java/util/Set", "java/util/HashSet", "java/util/LinkedHashSet", "java/util/TreeSet", "java/util/SortedSet", "java/util/NavigableSet",
      "java/util/Queue", "java/util/Deque", "java/util/ArrayDeque", "java/util/PriorityQueue", "java/util/AbstractCollection",
      "java/util/AbstractList", "java/util/AbstractMap", "java/util/AbstractSet", "java/util/AbstractQueue", "java/util/EnumMap",
      "java/util/EnumSet", "java/util/BitSet", "java/util/Iterable", "java/lang/Iterable");
  /** collection methods that walk the whole receiver (or copy, compare or print it) */
  private static final Set<String> COLLECTION_WHOLE = Set.of("equals", "hashCode", "toString", "toArray", "containsValue", "stream", "clone",
      "forEach", "removeIf", "replaceAll", "cardinality", "toByteArray", "toLongArray", "length", "nextSetBit", "nextClearBit",
      "previousSetBit", "previousClearBit", "intersects", "and", "or", "xor", "andNot", "descendingIterator", "spliterator");
  private static final Set<String> SEQUENCES = Set.of("java/util/Collection", "java/util/List", "java/util/ArrayList", "java/util/LinkedList",
      "java/util/Queue", "java/util/Deque", "java/util/ArrayDeque", "java/util/PriorityQueue", "java/util/AbstractCollection",
      "java/util/AbstractList", "java/util/AbstractQueue");
  /** bulk methods whose argument's elements are copied into the receiver */
  private static final Set<String> COPYING = Set.of("addAll", "putAll", "<init>", "copyOf");

  /** The charge of a call to `owner.name descriptor` from contract code, or null when it is constant-time. */
  static Plan plan(String owner, String name, String descriptor) {
    if (owner.equals("java/lang/String")) {
      if (STRING_CONSTANT.contains(name) || name.equals("toString")) return null;
      if (name.equals("<init>")) return COPY_ARGS;
      return STRING_SEARCH.contains(name) && descriptor.indexOf("Ljava/lang/") > 0 && !descriptor.startsWith("(I") && !descriptor.startsWith("(C")
          ? PRODUCT_ALL
          : LINEAR_ALL;
    }
    if (BUILDERS.contains(owner)) {
      if (name.equals("append") || name.equals("<init>")) return descriptor.startsWith("(Ljava/lang/") || descriptor.startsWith("([C") ? TEXT_ARGS : null;
      if (name.equals("insert") || name.equals("replace")) return TEXT_ALL;
      if (BUILDER_WHOLE.contains(name)) return name.equals("indexOf") || name.equals("lastIndexOf") ? PRODUCT_ALL : LINEAR_ALL;
      return null;
    }
    if (NUMBERS.contains(owner)) {
      if (NUMBER_CONSTANT.contains(name) && !descriptor.startsWith("(Ljava/lang/String;")) return null;
      // multiplication, division and decimal conversion grow faster than their operands, and a decimal's
      // scale enters every operation (aligning 1e-n with 1e+n makes a number of 2n digits): all charged quadratically
      return QUADRATIC_ALL;
    }
    if (owner.equals("java/util/Arrays")) {
      if (name.equals("asList")) return null;
      if (name.equals("sort") || name.equals("stream")) return SORT_ALL;
      return LINEAR_ALL;
    }
    if (owner.equals("java/util/Collections")) {
      if (name.startsWith("empty") || name.startsWith("singleton") || name.startsWith("unmodifiable") || name.equals("reverseOrder")
          || name.equals("nCopies"))
        return null;
      if (name.equals("sort") || name.equals("max") || name.equals("min")) return SORT_ALL;
      // Collections.addAll(c, elements…) copies the elements into c
      if (name.equals("addAll")) return COPY_ARGS;
      return LINEAR_ALL;
    }
    // BitSet.valueOf copies the words (or bytes) it is given
    if (owner.equals("java/util/BitSet") && name.equals("valueOf")) return COPY_ARGS;
    if (owner.equals("java/util/List") || owner.equals("java/util/Set") || owner.equals("java/util/Map")) {
      if (name.equals("of") || name.equals("copyOf") || name.equals("ofEntries")) return COPY_ARGS;
    }
    if (owner.equals("java/util/StringJoiner") || owner.equals("java/util/HexFormat")
        || owner.equals("java/util/Base64$Encoder") || owner.equals("java/util/Base64$Decoder") || owner.equals("java/util/Objects")
        || owner.equals("java/nio/charset/Charset"))
      return name.equals("hashCode") || name.equals("requireNonNull") || name.equals("isNull") || name.equals("nonNull") ? null : LINEAR_ALL;
    if (COLLECTIONS.contains(owner)) {
      if (COPYING.contains(name)) return descriptor.contains("Ljava/util/Collection;") || descriptor.contains("Ljava/util/Map;")
          || descriptor.contains("Ljava/util/SortedMap;") || descriptor.contains("Ljava/util/SortedSet;") || descriptor.contains("Ljava/util/EnumMap;")
          ? COPY_ARGS
          : null;
      if (name.equals("removeAll") || name.equals("retainAll") || name.equals("containsAll")) return PRODUCT_ALL;
      if (name.equals("sort")) return SORT_ALL;
      if (COLLECTION_WHOLE.contains(name)) return LINEAR_ALL;
      if (HASH_OWNERS.contains(owner) && KEYED_METHODS.contains(name) && descriptor.startsWith("(Ljava/lang/Object;")) return KEYED;
      if (!SEQUENCES.contains(owner)) return null;
      // list.add(e), queue.remove() and peeks are constant-time; searching and removing an element walk the list
      if (name.equals("contains") || name.equals("indexOf") || name.equals("lastIndexOf") || name.equals("removeFirstOccurrence")
          || name.equals("removeLastOccurrence") || name.equals("remove") && descriptor.equals("(Ljava/lang/Object;)Z"))
        return LINEAR_ALL;
      // by position: constant-time on an array list, a walk on a linked list (charged when the list is one), a shift on insert or remove
      if (descriptor.startsWith("(I") && (name.equals("add") || name.equals("remove"))) return LINEAR_ALL;
      if (descriptor.startsWith("(I") && (name.equals("get") || name.equals("set") || name.equals("listIterator"))) return SEQUENTIAL;
      return null;
    }
    // views and function objects do constant work per call (a function's body, when it is the
    // contract's, is metered as it runs); System.arraycopy is charged by its length (capacity)
    if (owner.startsWith("java/util/function/") || owner.equals("java/util/Iterator") || owner.equals("java/util/ListIterator")
        || owner.equals("java/util/Map$Entry") || owner.startsWith("java/util/Optional") || owner.equals("java/lang/System"))
      return null;
    // everything else of the JDK (Object.toString and equals, Comparable.compareTo, CharSequence, the
    // boxed types' parsing, streams and collectors, charsets, …): linear in all its operands
    return owner.startsWith("java/") ? LINEAR_ALL : null;
  }

  /**
   * The plan a call site really gets: none when the call has nothing to measure (Math.max, a boxed
   * value of a primitive). `receiver`: the call has one (not static, not a constructor).
   */
  static Plan charged(String owner, String name, String descriptor, boolean receiver) {
    Plan plan = plan(owner, name, descriptor);
    if (plan == null) return null;
    boolean counts = owner.startsWith("java/math/");
    boolean measured = plan.receiver && receiver;
    for (String p : Instrumenter.params(descriptor)) {
      char c = p.charAt(0);
      measured |= c == 'L' || c == '[' || counts && (c == 'I' || c == 'S' || c == 'B' || c == 'C' || c == 'Z');
    }
    return measured ? plan : null;
  }

  /** A call whose int argument on top of the stack reserves that many elements: element size in bytes; 0 when not one. */
  static int capacity(String owner, String name, String descriptor) {
    Integer size = CAPACITY.get(owner + "." + name + descriptor);
    return size == null ? 0 : size;
  }

  /** `Arrays.copyOfRange(a, from, to)`: element size of the copy; 0 when not one. */
  static int range(String owner, String name, String descriptor) {
    if (!owner.equals("java/util/Arrays") || !name.equals("copyOfRange") || !descriptor.endsWith("II)" + descriptor.substring(descriptor.indexOf(')') + 1)))
      return 0;
    return Instrumenter.elementSizeOf(descriptor.substring(2));
  }

  /** capacity markers: a bit count (n / 8 bytes); a copy of n elements (steps, no memory) */
  static final int BITS = -1, COPY = -2;

  private static final Map<String, Integer> CAPACITY = new HashMap<>();

  static {
    for (String c : new String[] {"ArrayList", "HashMap", "LinkedHashMap", "HashSet", "LinkedHashSet", "ArrayDeque", "PriorityQueue"})
      CAPACITY.put("java/util/" + c + ".<init>(I)V", 8);
    CAPACITY.put("java/util/ArrayList.ensureCapacity(I)V", 8);
    for (String c : BUILDERS) {
      CAPACITY.put(c + ".<init>(I)V", 2);
      CAPACITY.put(c + ".ensureCapacity(I)V", 2);
      CAPACITY.put(c + ".setLength(I)V", 2);
    }
    // a BitSet of n bits holds n / 8 bytes: charged as n / 8 one-byte elements by the Instrumenter (BITS)
    CAPACITY.put("java/util/BitSet.<init>(I)V", BITS);
    for (char t : "ZBCSIFJD".toCharArray()) CAPACITY.put("java/util/Arrays.copyOf([" + t + "I)[" + t, Instrumenter.elementSizeOf(String.valueOf(t)));
    CAPACITY.put("java/util/Arrays.copyOf([Ljava/lang/Object;I)[Ljava/lang/Object;", 8);
    CAPACITY.put("java/lang/System.arraycopy(Ljava/lang/Object;ILjava/lang/Object;II)V", COPY);
  }

  /**
   * What a JDK call's result is charged as, by its return type: new text, a new array, a number
   * (bounded and charged); null for anything else. Own classes and the contract API are not JDK.
   */
  static String made(String owner, String descriptor) {
    String ret = descriptor.substring(descriptor.indexOf(')') + 1);
    if (ret.equals("Ljava/lang/String;")) return "madeText";
    if (ret.startsWith("[")) return "madeArray";
    if (ret.equals("Ljava/math/BigInteger;") || ret.equals("Ljava/math/BigDecimal;")) return "madeNumber";
    return null;
  }


  /** Why a JDK member may not be called from a contract, or null. Checked by the Scanner for calls and method references. */
  static String refusal(String owner, String name, String descriptor) {
    String member = owner + "." + name;
    switch (member) {
      case "java/lang/String.intern":
        return "String identity would be shared between calls (the JVM's string table outlives them); compare with equals";
      case "java/util/Set.of":
      case "java/util/Set.copyOf":
      case "java/util/Map.of":
      case "java/util/Map.ofEntries":
      case "java/util/Map.copyOf":
      case "java/util/stream/Collectors.toUnmodifiableSet":
      case "java/util/stream/Collectors.toUnmodifiableMap":
        return "their iteration order is salted anew at each JVM start; use List.of, LinkedHashSet, LinkedHashMap, TreeSet or TreeMap";
      case "java/util/Collections.shuffle":
        return "randomness";
      case "java/lang/String.matches":
      case "java/lang/String.replaceAll":
      case "java/lang/String.replaceFirst":
        return "regular expressions: their backtracking is work the step budget cannot see; use indexOf, replace or split by one character";
      case "java/lang/String.format":
      case "java/lang/String.formatted":
      case "java/lang/String.indent":
        return "widths and indentation make text of any size from one argument; build the text with StringBuilder";
      case "java/util/Arrays.copyOf":
      case "java/util/Arrays.copyOfRange":
        if (descriptor.contains("Ljava/lang/Class;")) return "reflection";
        return null;
      case "java/util/PriorityQueue.<init>":
        if (descriptor.startsWith("(I") && !descriptor.equals("(I)V")) return "give the capacity-free constructor PriorityQueue(Comparator)";
        return null;
      case "java/util/HashMap.<init>":
      case "java/util/LinkedHashMap.<init>":
      case "java/util/HashSet.<init>":
      case "java/util/LinkedHashSet.<init>":
        if (descriptor.startsWith("(IF")) return "a load factor makes the table grow without bound; use the constructor without one";
        return null;
      default:
        return null;
    }
  }

  /**
   * JDK calls that make text from an operand that may be a container (its toString, String.valueOf,
   * Objects.toString, a builder's insert, Arrays.toString): the Guards method charging that text's
   * longest length before the call, or null.
   */
  static String textOf(String owner, String name, String descriptor) {
    if (name.equals("toString") && descriptor.equals("()Ljava/lang/String;")) return "text";
    switch (owner + "." + name + descriptor) {
      case "java/lang/String.valueOf(Ljava/lang/Object;)Ljava/lang/String;":
      case "java/util/Objects.toString(Ljava/lang/Object;)Ljava/lang/String;":
      case "java/util/Objects.toString(Ljava/lang/Object;Ljava/lang/String;)Ljava/lang/String;":
      case "java/lang/StringBuilder.insert(ILjava/lang/Object;)Ljava/lang/StringBuilder;":
      case "java/lang/StringBuffer.insert(ILjava/lang/Object;)Ljava/lang/StringBuffer;":
        return "text";
      case "java/util/Arrays.deepToString([Ljava/lang/Object;)Ljava/lang/String;":
        return "deepArrayText";
      default:
        return owner.equals("java/util/Arrays") && name.equals("toString") && descriptor.startsWith("([") ? "arrayText" : null;
    }
  }

  /** JDK methods that add to a collection or a builder: a method reference may not name them (a lambda's body is contract code, charged) */
  private static final Set<String> GROWING = Set.of("add", "addAll", "addFirst", "addLast", "offer", "offerFirst", "offerLast", "push", "put",
      "putAll", "putIfAbsent", "merge", "compute", "computeIfAbsent", "computeIfPresent", "append", "insert", "set", "setLength",
      "ensureCapacity", "accept");

  /**
   * JDK members a method reference may not name: those charged, checked or redirected at their call
   * sites. The JDK would call them without passing a call site; a lambda calling them is contract
   * code, charged like any other.
   */
  static String referenceRefusal(String owner, String name, String descriptor, boolean receiver) {
    if (owner.startsWith("java/") && GROWING.contains(name))
      return "the JDK would call it for each element it passes, and what it adds would be charged nowhere; write a lambda that calls it";
    if (charged(owner, name, descriptor, receiver) == null && capacity(owner, name, descriptor) == 0 && range(owner, name, descriptor) == 0
        && !Instrumenter.GUARDED.containsKey(owner + "." + name + descriptor) && made(owner, descriptor) == null
        && textOf(owner, name, descriptor) == null)
      return null;
    return "its cost is charged where it is called; write a lambda that calls it";
  }
}
