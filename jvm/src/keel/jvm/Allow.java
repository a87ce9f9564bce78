package keel.jvm;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The JDK a contract may use: an allow-list of classes, members refused on them with the reason,
 * and the reason a class off the list is refused. docs/jvm.md lists the same for contract authors.
 */
final class Allow {
  private Allow() {}

  /** the contract API: keel.contract.* */
  static final String API = "keel/contract/";

  private static final Set<String> CLASSES = new HashSet<>();

  private static void add(String pkg, String... names) {
    for (String n : names) CLASSES.add(pkg + n);
  }

  static {
    add(
        "java/lang/",
        "Object",
        "String",
        "StringBuilder",
        "StringBuffer",
        "CharSequence",
        "Comparable",
        "Iterable",
        "AutoCloseable",
        "Cloneable",
        "Number",
        "Integer",
        "Long",
        "Short",
        "Byte",
        "Character",
        "Boolean",
        "Float",
        "Double",
        "Void",
        "Math",
        "StrictMath",
        "Enum",
        "Record",
        // a class literal may be passed on (Enum.valueOf, EnumMap); its own methods are refused below
        "Class",
        "Throwable",
        "Exception",
        "RuntimeException",
        "ArithmeticException",
        "ArrayIndexOutOfBoundsException",
        "ArrayStoreException",
        "ClassCastException",
        "CloneNotSupportedException",
        "IllegalArgumentException",
        "IllegalStateException",
        "IndexOutOfBoundsException",
        "NegativeArraySizeException",
        "NullPointerException",
        "NumberFormatException",
        "StringIndexOutOfBoundsException",
        "UnsupportedOperationException",
        "Error",
        "AssertionError",
        "NoSuchFieldError",
        "IncompatibleClassChangeError",
        "LinkageError",
        "System");
    add(
        "java/util/",
        "Collection",
        "List",
        "ArrayList",
        "LinkedList",
        "Map",
        "Map$Entry",
        "HashMap",
        "LinkedHashMap",
        "TreeMap",
        "SortedMap",
        "NavigableMap",
        "Set",
        "HashSet",
        "LinkedHashSet",
        "TreeSet",
        "SortedSet",
        "NavigableSet",
        "Queue",
        "Deque",
        "ArrayDeque",
        "PriorityQueue",
        "Iterator",
        "ListIterator",
        "RandomAccess",
        "AbstractCollection",
        "AbstractList",
        "AbstractMap",
        "AbstractMap$SimpleEntry",
        "AbstractMap$SimpleImmutableEntry",
        "AbstractSet",
        "AbstractQueue",
        "Arrays",
        "Collections",
        "Objects",
        "Optional",
        "OptionalInt",
        "OptionalLong",
        "OptionalDouble",
        "Comparator",
        "StringJoiner",
        "EnumMap",
        "EnumSet",
        "BitSet",
        "Base64",
        "Base64$Encoder",
        "Base64$Decoder",
        "HexFormat",
        "NoSuchElementException",
        "ConcurrentModificationException");
    add("java/util/stream/", "Stream", "IntStream", "LongStream", "DoubleStream", "Collectors", "Collector", "BaseStream");
    add("java/math/", "BigInteger", "BigDecimal", "MathContext", "RoundingMode");
    add("java/nio/charset/", "StandardCharsets", "Charset");
  }

  /** Classes of which only the named members may be used. */
  private static final Map<String, Set<String>> ONLY = new HashMap<>();

  static {
    ONLY.put("java/lang/System", Set.of("arraycopy"));
    // javac calls it in the initialiser of a class using `assert`
    ONLY.put("java/lang/Class", Set.of("desiredAssertionStatus"));
  }

  private static final Map<String, String> DENIED_MEMBERS = new HashMap<>();

  private static void deny(String reason, String owner, String... names) {
    for (String n : names) DENIED_MEMBERS.put(owner + "." + n, reason);
  }

  static {
    String nondet = "its result may differ between machines; use StrictMath";
    deny(nondet, "java/lang/Math", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "exp", "expm1", "log", "log10", "log1p", "pow",
        "cbrt", "hypot", "sinh", "cosh", "tanh");
    deny("randomness", "java/lang/Math", "random");
    deny("randomness", "java/lang/StrictMath", "random");
    deny("I/O", "java/lang/Throwable", "printStackTrace");
    deny("stack traces differ between runs", "java/lang/Throwable", "getStackTrace", "setStackTrace");
    deny("system properties", "java/lang/Integer", "getInteger");
    deny("system properties", "java/lang/Long", "getLong");
    deny("system properties", "java/lang/Boolean", "getBoolean");
    deny("default charset lookup", "java/nio/charset/Charset", "defaultCharset", "availableCharsets");
  }

  /** Methods refused on every class: synchronisation, reflection, finalisation, threads. */
  private static final Map<String, String> DENIED_ANYWHERE = new HashMap<>();

  static {
    DENIED_ANYWHERE.put("wait", "synchronisation");
    DENIED_ANYWHERE.put("notify", "synchronisation");
    DENIED_ANYWHERE.put("notifyAll", "synchronisation");
    DENIED_ANYWHERE.put("getClass", "reflection");
    DENIED_ANYWHERE.put("parallel", "threads");
    DENIED_ANYWHERE.put("parallelStream", "threads");
    DENIED_ANYWHERE.put("parallelSort", "threads");
    DENIED_ANYWHERE.put("parallelSetAll", "threads");
    DENIED_ANYWHERE.put("parallelPrefix", "threads");
  }

  static boolean isAllowedClass(String internalName) {
    return CLASSES.contains(internalName) || internalName.startsWith("java/util/function/") || internalName.startsWith(API)
        || Hyperchain.isProvided(internalName);
  }

  /** Why a JDK class is refused (the kind of access it would give). */
  static String classReason(String c) {
    if (c.startsWith("java/lang/Thread") || c.equals("java/lang/Runnable") || c.startsWith("java/util/concurrent/"))
      return "threads and synchronisation";
    if (c.startsWith("java/io/") || c.startsWith("java/nio/")) return "I/O";
    if (c.startsWith("java/net/") || c.startsWith("javax/net/")) return "network";
    if (c.startsWith("java/time/") || c.equals("java/util/Date") || c.equals("java/util/Calendar") || c.equals("java/util/TimeZone")
        || c.equals("java/util/GregorianCalendar") || c.startsWith("java/text/"))
      return "time and locale";
    if (c.equals("java/util/Random") || c.equals("java/util/SplittableRandom") || c.startsWith("java/security/")
        || c.equals("java/util/UUID"))
      return "randomness and security";
    if (c.startsWith("java/lang/reflect/") || c.startsWith("java/lang/invoke/") || c.equals("java/lang/ClassLoader")
        || c.startsWith("java/lang/module/") || c.equals("java/lang/Module") || c.equals("java/lang/ModuleLayer")
        || c.equals("java/lang/StackWalker"))
      return "reflection and class loading";
    if (c.equals("java/lang/Runtime") || c.startsWith("java/lang/Process") || c.equals("java/lang/System"))
      return "the process and its environment";
    if (c.startsWith("java/lang/ref/")) return "garbage-collector state";
    if (c.startsWith("sun/") || c.startsWith("jdk/") || c.startsWith("com/sun/")) return "JDK internals";
    if (c.startsWith("keel/")) return "executor internals";
    return Hyperchain.classReason(c);
  }

  /** Why a member of an allowed class is refused, or null when it may be used. */
  static String memberReason(String owner, String name) {
    String anywhere = DENIED_ANYWHERE.get(name);
    if (anywhere != null) return anywhere;
    String hyperchain = Hyperchain.memberReason(owner, name);
    if (hyperchain != null) return hyperchain;
    Set<String> only = ONLY.get(owner);
    if (only != null && !only.contains(name)) {
      if (owner.equals("java/lang/Class")) return "reflection";
      if (name.equals("currentTimeMillis") || name.equals("nanoTime")) return "time";
      if (name.equals("in") || name.equals("out") || name.equals("err") || name.startsWith("set") || name.equals("console"))
        return "I/O";
      if (name.equals("identityHashCode")) return "identity hash codes";
      return classReason(owner);
    }
    return DENIED_MEMBERS.get(owner + "." + name);
  }

  /** Catch types that could swallow a metering stop or a VM resource error. */
  static boolean isUncatchable(String c) {
    return c.equals("java/lang/Throwable") || c.equals("java/lang/Error") || c.equals("java/lang/VirtualMachineError")
        || c.equals("java/lang/StackOverflowError") || c.equals("java/lang/OutOfMemoryError") || c.equals("java/lang/InternalError")
        || c.equals("java/lang/UnknownError");
  }

  /** Types a static field may hold: immutable values (arrays of them are restored after every call). */
  static boolean isImmutableValueType(String internalName) {
    switch (internalName) {
      case "java/lang/String":
      case "java/lang/Integer":
      case "java/lang/Long":
      case "java/lang/Short":
      case "java/lang/Byte":
      case "java/lang/Character":
      case "java/lang/Boolean":
      case "java/lang/Float":
      case "java/lang/Double":
      case "java/math/BigInteger":
      case "java/math/BigDecimal":
        return true;
      default:
        return false;
    }
  }

  /** Bootstrap methods javac emits for string concatenation, lambdas and records. */
  static boolean isAllowedBootstrap(String owner, String name) {
    return (owner.equals("java/lang/invoke/StringConcatFactory") && (name.equals("makeConcatWithConstants") || name.equals("makeConcat")))
        || (owner.equals("java/lang/invoke/LambdaMetafactory") && (name.equals("metafactory") || name.equals("altMetafactory")))
        || (owner.equals("java/lang/runtime/ObjectMethods") && name.equals("bootstrap"));
  }
}
