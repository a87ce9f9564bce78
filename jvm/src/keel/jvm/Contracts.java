package keel.jvm;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Loaded contracts by code hash (scan, instrument, define, initialise, once per code) and the
 * running of one call: a new instance of the main class, the function found by name and argument
 * types, its result encoded, the ledger writes and events collected.
 */
final class Contracts {
  static final int CACHE_SIZE = 128;

  static final class Loaded {
    final ContractLoader loader;
    final String loaderName;
    final Constructor<?> constructor;
    final Map<String, List<Method>> functions = new TreeMap<>();
    /** static array fields and their contents after initialisation, put back after every call */
    final List<Object[]> statics = new ArrayList<>();
    final long initSteps;
    /** Keel's own model, or one of Hyperchain's (Hyperchain.java) */
    Hyperchain.Style style = Hyperchain.Style.KEEL;
    /** the deployment's onInit, for the Hyperchain models (not callable afterwards) */
    final List<Method> init = new ArrayList<>();
    /** an HVM contract's classes (an InvokeBean is scanned against them); empty for the others */
    Map<String, ClassFile> classFiles = Map.of();
    Class<?> mainType;

    Loaded(ContractLoader loader, String loaderName, Constructor<?> constructor, long initSteps) {
      this.loader = loader;
      this.loaderName = loaderName;
      this.constructor = constructor;
      this.initSteps = initSteps;
    }
  }

  private final LinkedHashMap<String, Loaded> cache =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Loaded> eldest) {
          return size() > CACHE_SIZE;
        }
      };

  static Map<String, Object> reply(String op) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("op", op);
    return m;
  }

  // ---- load ----

  @SuppressWarnings("unchecked")
  Map<String, Object> load(Map<String, Object> msg) {
    String hash = (String) msg.get("hash");
    Map<String, Object> out = reply("loaded");
    out.put("hash", hash);
    Loaded known = cache.get(hash);
    if (known != null) {
      out.put("ok", true);
      out.put("initSteps", known.initSteps);
      return out;
    }
    try {
      Loaded loaded = define(hash, (String) msg.get("main"), (Map<String, Object>) msg.get("classes"), ((Number) msg.get("initSteps")).longValue(),
          ((Number) msg.get("memory")).longValue());
      cache.put(hash, loaded);
      out.put("ok", true);
      out.put("initSteps", loaded.initSteps);
    } catch (Scanner.Refusal | Refused e) {
      out.put("ok", false);
      out.put("error", e.getMessage());
    } catch (ClassFile.FormatException e) {
      out.put("ok", false);
      out.put("error", "malformed class file: " + e.getMessage());
    } catch (Instrumenter.TooLarge e) {
      out.put("ok", false);
      out.put("error", e.getMessage());
    }
    return out;
  }

  static final class Refused extends Exception {
    Refused(String message) {
      super(message);
    }
  }

  /**
   * A callee's code by hash (CrossCalls): from the cache, or asked of the node and loaded now. The
   * loading is not the call's work (whether a code is cached differs between nodes), so the
   * call's counters are kept aside while the classes initialise, and the ledger is closed to them.
   */
  @SuppressWarnings("unchecked")
  Loaded callee(String hash) throws Refused {
    Loaded known = cache.get(hash);
    if (known != null) return known;
    Map<String, Object> ask = reply("code");
    ask.put("id", Host.callId());
    ask.put("hash", hash);
    Map<String, Object> code = Main.ask(ask, "code");
    Meter.Saved saved = Meter.save();
    boolean ledger = Host.suspend();
    try {
      Loaded loaded = define(hash, (String) code.get("main"), (Map<String, Object>) code.get("classes"), ((Number) code.get("initSteps")).longValue(),
          ((Number) code.get("memory")).longValue());
      cache.put(hash, loaded);
      return loaded;
    } catch (Scanner.Refusal | ClassFile.FormatException | Instrumenter.TooLarge e) {
      throw new Refused(e.getMessage());
    } finally {
      Host.resume(ledger);
      Meter.restore(saved);
    }
  }

  private Loaded define(String hash, String main, Map<String, Object> encoded, long initBudget, long memory)
      throws Scanner.Refusal, ClassFile.FormatException, Instrumenter.TooLarge, Refused {
    Map<String, ClassFile> parsed = new TreeMap<>();
    for (Map.Entry<String, Object> e : encoded.entrySet()) {
      ClassFile cf = ClassFile.parse(Base64.getDecoder().decode((String) e.getValue()));
      if (!cf.name.equals(e.getKey()))
        throw new Refused("the class stored as " + e.getKey() + " declares itself " + ClassFile.dotted(cf.name));
      parsed.put(cf.name, cf);
    }
    String mainInternal = main.replace('.', '/');
    ClassFile mainClass = parsed.get(mainInternal);
    if (mainClass == null) throw new Refused("the main class " + main + " is not among the contract's classes");
    if ((mainClass.access & (ClassFile.ACC_INTERFACE | ClassFile.ACC_ABSTRACT | ClassFile.ACC_ENUM)) != 0)
      throw new Refused("the main class " + main + " must be a concrete class");
    Scanner.scan(parsed);
    Map<String, byte[]> instrumented = new TreeMap<>();
    for (ClassFile cf : parsed.values()) {
      Instrumenter.instrument(cf, parsed);
      instrumented.put(ClassFile.dotted(cf.name), cf.write());
    }
    String loaderName = "contract-" + hash.substring(2, Math.min(hash.length(), 14));
    ContractLoader loader = new ContractLoader(loaderName, instrumented);
    Meter.begin(initBudget, memory);
    Class<?> mainType;
    try {
      // every class linked (verified) and initialised now: a class that cannot fails the deploy,
      // not a later call, and no call pays for (or depends on) another's class initialisation
      for (String name : instrumented.keySet()) Class.forName(name, true, loader);
      mainType = Class.forName(main, false, loader);
    } catch (ClassNotFoundException | LinkageError | Stop e) {
      throw new Refused(loadFailure(e));
    } catch (RuntimeException e) {
      throw new Refused("class initialisation failed: " + e);
    }
    Constructor<?> constructor;
    try {
      constructor = mainType.getConstructor();
      // the executor calls into classes that need not be public (a package-private base class)
      constructor.setAccessible(true);
    } catch (NoSuchMethodException e) {
      throw new Refused("the main class " + main + " needs a public constructor without parameters");
    }
    Loaded loaded = new Loaded(loader, loaderName, constructor, Meter.steps());
    // the JDK caches an enum's constants in its Class the first time it needs them (EnumMap, EnumSet,
    // Enum.valueOf) by calling the enum's values(), which is contract code: done here, after the
    // initialisers' steps are counted, so no call's steps depend on whether it came first
    for (String name : instrumented.keySet()) {
      try {
        Class<?> type = Class.forName(name, false, loader);
        if (type.isEnum()) type.getEnumConstants();
      } catch (ClassNotFoundException | LinkageError | Stop e) {
        throw new Refused(loadFailure(e));
      }
    }
    loaded.style = Hyperchain.styleOf(mainType);
    loaded.mainType = mainType;
    if (loaded.style == Hyperchain.Style.HVM) loaded.classFiles = parsed;
    boolean found = Hyperchain.functions(loaded.style, mainType, loaded.functions, loaded.init);
    for (Class<?> k = mainType; !found && k != null && k.getClassLoader() == loader; k = k.getSuperclass()) {
      for (Method m : k.getDeclaredMethods()) {
        if (!Modifier.isPublic(m.getModifiers()) || m.isSynthetic() || m.isBridge()) continue;
        m.setAccessible(true);
        List<Method> same = loaded.functions.computeIfAbsent(m.getName(), x -> new ArrayList<>());
        boolean overridden = false;
        for (Method known : same) overridden |= java.util.Arrays.equals(known.getParameterTypes(), m.getParameterTypes());
        if (!overridden) same.add(m);
      }
    }
    for (String name : instrumented.keySet()) {
      try {
        for (Field f : Class.forName(name, false, loader).getDeclaredFields()) {
          if (!Modifier.isStatic(f.getModifiers()) || !f.getType().isArray()) continue;
          f.setAccessible(true);
          Object array = f.get(null);
          if (array != null) loaded.statics.add(new Object[] {array, snapshot(array)});
        }
      } catch (ReflectiveOperationException e) {
        throw new Refused("cannot read the static fields of " + name + ": " + e);
      }
    }
    return loaded;
  }

  private static String loadFailure(Throwable e) {
    if (e instanceof Stop) return "class initialisation: " + e.getMessage();
    if (e instanceof ExceptionInInitializerError && e.getCause() != null) {
      Throwable cause = e.getCause();
      return "class initialisation failed: " + (cause instanceof Stop ? cause.getMessage() : cause.toString());
    }
    if (e instanceof VerifyError) return "a class fails bytecode verification: " + e.getMessage();
    if (e instanceof NoClassDefFoundError || e instanceof ClassNotFoundException)
      return "a class cannot be linked: " + e.getMessage() + " (not among the contract's classes, the contract API or the allowed JDK classes)";
    return "a class cannot be loaded: " + e;
  }

  /**
   * What a static array holds after initialisation: a copy of its contents and, for an array of
   * arrays, the inner arrays themselves (their identity: which array sits in which slot) with their
   * own snapshots. Restoring puts every slot's original array back and then its contents, so a call
   * that swapped or aliased slots leaves nothing behind.
   */
  private static Object[] snapshot(Object array) {
    int n = java.lang.reflect.Array.getLength(array);
    Object contents = java.lang.reflect.Array.newInstance(array.getClass().getComponentType(), n);
    System.arraycopy(array, 0, contents, 0, n);
    Object[] inner = null;
    if (array instanceof Object[]) {
      Object[] slots = (Object[]) array;
      inner = new Object[n];
      for (int i = 0; i < n; i++) if (slots[i] != null && slots[i].getClass().isArray()) inner[i] = snapshot(slots[i]);
    }
    return new Object[] {contents, inner};
  }

  private static void restore(Object array, Object[] snapshot) {
    Object contents = snapshot[0];
    System.arraycopy(contents, 0, array, 0, java.lang.reflect.Array.getLength(contents));
    Object[] inner = (Object[]) snapshot[1];
    if (inner == null) return;
    Object[] slots = (Object[]) array;
    for (int i = 0; i < inner.length; i++) if (inner[i] != null) restore(slots[i], (Object[]) inner[i]);
  }

  // ---- call ----

  static final class Failure extends Exception {
    final String kind;

    Failure(String kind, String message) {
      super(message);
      this.kind = kind;
    }
  }

  @SuppressWarnings("unchecked")
  Map<String, Object> call(Map<String, Object> msg, Watchdog watchdog) {
    long id = ((Number) msg.get("id")).longValue();
    Loaded c = cache.get((String) msg.get("hash"));
    if (c == null) {
      Map<String, Object> out = reply("unknown");
      out.put("id", id);
      return out;
    }
    Map<String, Object> out = reply("result");
    out.put("id", id);
    String name = (String) msg.get("method");
    List<Object> args = (List<Object>) msg.get("args");
    boolean typed = "typed".equals(msg.get("form"));
    Host.begin(id, (Map<String, Object>) msg.get("ctx"));
    CrossCalls.begin(c);
    Meter.begin(((Number) msg.get("steps")).longValue(), ((Number) msg.get("memory")).longValue());
    watchdog.arm(((Number) msg.get("timeoutMs")).longValue());
    try {
      if (Boolean.TRUE.equals(msg.get("upgrade"))) {
        Hyperchain.upgrade(c);
        succeed(out, new byte[0]);
        return out;
      }
      boolean init = Boolean.TRUE.equals(msg.get("init"));
      if ("bean".equals(msg.get("form"))) {
        byte[] ret;
        try {
          ret = Hyperchain.invokeBean(c, args);
        } catch (InvocationTargetException e) {
          throw failureOf(e.getCause(), c);
        }
        succeed(out, ret);
        return out;
      }
      List<Method> candidates = init && !c.init.isEmpty() ? c.init : c.functions.get(name);
      if (candidates == null) {
        if (Boolean.TRUE.equals(msg.get("optional"))) {
          if (init) Hyperchain.deployed(c, null);
          succeed(out, new byte[0]);
          return out;
        }
        throw new Failure("no-method", "the contract has no public function " + name);
      }
      Invocation.Bound bound = Hyperchain.bind(c.style, name, candidates, args, typed);
      if (bound == null) bound = Invocation.bind(name, candidates, args, typed);
      Object instance;
      Object result;
      try {
        instance = c.constructor.newInstance();
        Hyperchain.Session stored = Hyperchain.before(c.style, instance);
        result = bound.method.invoke(instance, bound.values);
        Hyperchain.after(stored);
        if (init) Hyperchain.deployed(c, instance);
      } catch (InvocationTargetException e) {
        throw failureOf(e.getCause(), c);
      }
      byte[] ret;
      try {
        byte[] encoded = Hyperchain.encode(c.style, result, bound.method.getReturnType());
        ret = encoded != null ? encoded : Invocation.encode(result, bound.method.getReturnType());
        // the receipt holds it: its size is bounded, and writing it is charged like any other work
        Meter.charge(ret.length / 16);
      } catch (Throwable e) {
        throw failureOf(e, c);
      }
      succeed(out, ret);
    } catch (Failure f) {
      out.put("ok", false);
      out.put("kind", f.kind);
      out.put("error", f.getMessage());
      out.put("steps", Meter.steps());
    } catch (ReflectiveOperationException | RuntimeException | Error e) {
      out.put("ok", false);
      Failure f = failureOf(e, c);
      out.put("kind", f.kind);
      out.put("error", f.getMessage());
      out.put("steps", Meter.steps());
    } finally {
      watchdog.disarm();
      Host.end();
      for (Loaded ran : CrossCalls.end()) for (Object[] s : ran.statics) restore(s[0], (Object[]) s[1]);
    }
    return out;
  }

  private static void succeed(Map<String, Object> out, byte[] ret) {
    out.put("ok", true);
    out.put("ret", Base64.getEncoder().encodeToString(ret));
    out.put("writes", Host.writes());
    out.put("events", Host.events());
    out.put("steps", Meter.steps());
  }

  private static Failure failureOf(Throwable e, Loaded c) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof Stop) return new Failure(((Stop) t).kind.name().toLowerCase(), t.getMessage());
      if (t instanceof StackOverflowError) return new Failure("stack", "the thread stack overflowed");
      if (t instanceof OutOfMemoryError) return new Failure("heap", "the executor ran out of memory");
      if (t.getCause() == t) break;
    }
    if (e instanceof Failure) return (Failure) e;
    String message;
    try {
      message = e instanceof keel.contract.ContractException ? e.getMessage() : describe(e);
    } catch (Throwable inner) {
      message = e.getClass().getName() + " (its message could not be computed)";
    }
    String at = "";
    for (StackTraceElement frame : e.getStackTrace()) {
      // a cross-contract call's proxy class is the contract loader's too, but its name is numbered by the JVM's history: not a place to name
      if (c.loaderName.equals(frame.getClassLoaderName()) && !isProxyFrame(frame)) {
        at = " (at " + frame.getClassName() + "." + frame.getMethodName() + (frame.getLineNumber() > 0 ? " line " + frame.getLineNumber() : "") + ")";
        break;
      }
    }
    return new Failure("exception", message + at);
  }

  private static boolean isProxyFrame(StackTraceElement frame) {
    String name = frame.getClassName();
    return name.substring(name.lastIndexOf('.') + 1).matches("\\$Proxy[0-9]+");
  }

  private static String describe(Throwable e) {
    String name = e.getClass().getName();
    if (name.startsWith("java.lang.")) name = name.substring("java.lang.".length());
    String m = e.getMessage();
    return m == null ? name : name + ": " + m;
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
