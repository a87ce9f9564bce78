package keel.jvm;

import cn.hyperchain.annotations.StoreField;
import cn.hyperchain.contract.BaseContract;
import cn.hyperchain.contract.BaseContractInterface;
import cn.hyperchain.contract.BaseInvoke;
import cn.hyperchain.core.HyperList;
import cn.hyperchain.core.HyperMap;
import cn.hyperchain.core.Stores;
import cn.hyperchain.jcee.client.contract.ContractTemplate;
import cn.hyperchain.jcee.common.ExecuteResult;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Hyperchain's own Java contract APIs, as Keel provides them (docs/jvm.md, "Hyperchain's Java
 * APIs"): the classes a contract may name besides the JDK's and Keel's, and what the engine does
 * around a call for each programming model:
 *
 * - KEEL: `keel.contract.Contract` or a plain class; the public methods are the functions.
 * - HVM (Hyperchain 2.x): the main class extends `cn.hyperchain.contract.BaseContract`; the
 *   functions are the methods of its interfaces extending `BaseContractInterface`; `@StoreField`
 *   fields are loaded from the ledger before a call and stored after it; results are the String
 *   itself or JSON.
 * - JCEE (Hyperchain 1.x): the main class extends
 *   `cn.hyperchain.jcee.client.contract.ContractTemplate`; the functions are its methods
 *   `ExecuteResult f(List<String>)` (any access, as 1.x found them by reflection), called with all
 *   the call's arguments as strings; `result(false, …)` fails the call.
 */
final class Hyperchain {
  private Hyperchain() {}

  enum Style {
    KEEL,
    HVM,
    JCEE
  }

  /** The Hyperchain API classes Keel provides (internal names). */
  private static final Set<String> PROVIDED =
      Set.of(
          "cn/hyperchain/annotations/StoreField",
          "cn/hyperchain/contract/BaseContract",
          "cn/hyperchain/contract/BaseContract$CrossCall",
          "cn/hyperchain/annotations/Contract",
          "cn/hyperchain/annotations/Library",
          "cn/hyperchain/contract/BaseContractInterface",
          "cn/hyperchain/contract/BaseInvoke",
          "cn/hyperchain/core/HyperMap",
          "cn/hyperchain/core/HyperList",
          "cn/hyperchain/core/NestedMap",
          "cn/hyperchain/core/HyperTable",
          "cn/hyperchain/core/HyperTable$Row",
          "cn/hyperchain/core/HyperTable$ColumnFamily",
          "cn/hyperchain/core/HyperTable$RowSet",
          "cn/hyperchain/core/HyperTable$ColFamSet",
          "cn/hyperchain/core/HyperTable$ColSet",
          "cn/hyperchain/core/Logger",
          "cn/hyperchain/jcee/client/contract/ContractTemplate",
          "cn/hyperchain/jcee/client/ledger/ILedger",
          "cn/hyperchain/jcee/client/ledger/AbstractLedger",
          "cn/hyperchain/jcee/client/ledger/Result",
          "cn/hyperchain/jcee/client/ledger/Batch",
          "cn/hyperchain/jcee/client/ledger/BatchKey",
          "cn/hyperchain/jcee/client/ledger/BatchValue",
          "cn/hyperchain/jcee/common/ExecuteResult",
          "cn/hyperchain/jcee/common/Event",
          "cn/hyperchain/jcee/common/Bytes",
          // the logger type of 1.x's ContractTemplate.logger
          "org/apache/log4j/Logger");

  /** Package prefixes of Hyperchain's APIs: a contract may not define classes in them. */
  static final String[] RESERVED = {"cn/hyperchain/", "org/apache/log4j/"};

  static boolean isProvided(String internalName) {
    return PROVIDED.contains(internalName);
  }

  static boolean isHyperchainApi(String internalName) {
    for (String p : RESERVED) if (internalName.startsWith(p)) return true;
    return false;
  }

  /** Why a class outside the contract is refused: it is a Hyperchain API class Keel lacks, a JDK class off the list, or neither. */
  static String classReason(String c) {
    if (isHyperchainApi(c))
      return "a Hyperchain API class Keel does not provide; docs/jvm.md lists the Hyperchain classes it provides";
    if (c.startsWith("java/") || c.startsWith("javax/")) return "not on the allowed JDK class list";
    return "neither one of the contract's classes nor a class the engine provides: put it in the contract's jar";
  }

  private static final Map<String, Set<String>> MEMBERS = new java.util.HashMap<>();

  /**
   * Why a member of a provided Hyperchain class is refused: Keel's class lacks it (a contract
   * compiled against Hyperchain's own jar may use more of it than Keel provides), so the deploy
   * says so instead of the call failing to link. Null when it is there or the class is not
   * Hyperchain's.
   */
  static String memberReason(String owner, String name) {
    if (!isProvided(owner) || name.equals("<init>")) return null;
    Set<String> members = MEMBERS.computeIfAbsent(owner, Hyperchain::membersOf);
    return members.contains(name) ? null : "a part of Hyperchain's API Keel does not provide; docs/jvm.md §10 lists what it provides";
  }

  /**
   * The same for a member named through one of the contract's own classes (`this.getValueFromExtra()`
   * names the contract's class): the first provided Hyperchain class up its super classes must have
   * it, unless an own class on the way declares it.
   */
  static String inheritedMemberReason(Map<String, ClassFile> own, String owner, String name) {
    String c = owner;
    while (own.containsKey(c)) {
      ClassFile cf = own.get(c);
      for (ClassFile.Member m : cf.methods) if (m.name.equals(name)) return null;
      for (ClassFile.Member f : cf.fields) if (f.name.equals(name)) return null;
      if ((cf.access & ClassFile.ACC_INTERFACE) != 0 || cf.superName == null) return null;
      c = cf.superName;
    }
    return isProvided(c) ? memberReason(c, name) : null;
  }

  private static Set<String> membersOf(String owner) {
    Set<String> out = new java.util.HashSet<>();
    try {
      for (Class<?> k = Class.forName(owner.replace('/', '.'), false, Hyperchain.class.getClassLoader()); k != null; k = k.getSuperclass()) {
        for (Method m : k.getDeclaredMethods())
          if ((m.getModifiers() & (Modifier.PUBLIC | Modifier.PROTECTED)) != 0 && !m.isSynthetic()) out.add(m.getName());
        for (Field f : k.getDeclaredFields())
          if ((f.getModifiers() & (Modifier.PUBLIC | Modifier.PROTECTED)) != 0 && !f.isSynthetic()) out.add(f.getName());
        for (Class<?> i : k.getInterfaces()) for (Method m : i.getMethods()) out.add(m.getName());
      }
      if (Class.forName(owner.replace('/', '.'), false, Hyperchain.class.getClassLoader()).isInterface())
        for (Method m : Object.class.getMethods()) out.add(m.getName());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("a provided Hyperchain class is missing: " + owner, e);
    }
    return out;
  }

  /** Static fields of these types hold nothing a call could change (loggers): allowed like constants. */
  static boolean isStatelessType(String descriptor) {
    return descriptor.equals("Lcn/hyperchain/core/Logger;") || descriptor.equals("Lorg/apache/log4j/Logger;");
  }

  static Style styleOf(Class<?> main) {
    if (BaseContract.class.isAssignableFrom(main)) return Style.HVM;
    if (ContractTemplate.class.isAssignableFrom(main)) return Style.JCEE;
    return Style.KEEL;
  }

  private static void add(Map<String, List<Method>> out, Method m) {
    m.setAccessible(true);
    List<Method> same = out.computeIfAbsent(m.getName(), x -> new ArrayList<>());
    for (Method known : same) if (java.util.Arrays.equals(known.getParameterTypes(), m.getParameterTypes())) return;
    same.add(m);
  }

  /**
   * Fills `functions` (and `init`, the deployment's onInit) for the HVM and 1.x models; false
   * for the Keel model, whose functions Contracts finds itself. An HVM class without
   * BaseContractInterface interfaces also falls back to its public methods.
   */
  static boolean functions(Style style, Class<?> main, Map<String, List<Method>> functions, List<Method> init) {
    if (style == Style.KEEL) return false;
    for (Class<?> k = main; k != null && Beans.isOwn(k); k = k.getSuperclass())
      for (Method m : k.getDeclaredMethods())
        if (m.getName().equals("onInit") && Modifier.isPublic(m.getModifiers()) && !m.isBridge() && !m.isSynthetic()) {
          m.setAccessible(true);
          init.add(m);
        }
    if (style == Style.JCEE) {
      for (Class<?> k = main; k != null && Beans.isOwn(k); k = k.getSuperclass())
        for (Method m : k.getDeclaredMethods())
          if (m.getParameterCount() == 1 && m.getParameterTypes()[0] == List.class && ExecuteResult.class.isAssignableFrom(m.getReturnType())
              && !Modifier.isStatic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge())
            add(functions, m);
      return true;
    }
    Map<String, Class<?>> interfaces = new TreeMap<>();
    for (Class<?> k = main; k != null && Beans.isOwn(k); k = k.getSuperclass()) collectInterfaces(k, interfaces);
    if (interfaces.isEmpty()) return false;
    for (Class<?> i : interfaces.values()) {
      for (Method m : i.getMethods()) {
        if (Modifier.isStatic(m.getModifiers()) || !Beans.isOwn(m.getDeclaringClass())) continue;
        try {
          add(functions, main.getMethod(m.getName(), m.getParameterTypes()));
        } catch (NoSuchMethodException e) {
          throw new IllegalStateException("the main class does not implement " + m, e);
        }
      }
    }
    return true;
  }

  /** The interfaces extending BaseContractInterface that an HVM main class implements, by name. */
  static Map<String, Class<?>> contractInterfaces(Class<?> main) {
    Map<String, Class<?>> out = new TreeMap<>();
    for (Class<?> k = main; k != null && Beans.isOwn(k); k = k.getSuperclass()) collectInterfaces(k, out);
    return out;
  }

  private static void collectInterfaces(Class<?> k, Map<String, Class<?>> out) {
    for (Class<?> i : k.getInterfaces()) {
      if (Beans.isOwn(i) && BaseContractInterface.class.isAssignableFrom(i)) out.put(i.getName(), i);
      collectInterfaces(i, out);
    }
  }

  /** A 1.x call: the function by name, every argument a string in one list. Null for the other models. */
  @SuppressWarnings("unchecked")
  static Invocation.Bound bind(Style style, String name, List<Method> candidates, List<Object> args, boolean typed) {
    if (style != Style.JCEE) return null;
    List<String> strings = new ArrayList<>();
    for (Object a : args) strings.add(typed ? (String) ((Map<String, Object>) a).get("value") : (String) a);
    return new Invocation.Bound(candidates.get(0), new Object[] {strings});
  }

  /** The `@StoreField` fields of an HVM contract instance, loaded for one call. */
  static final class Session {
    final Object instance;
    final Map<Field, String> stored = new LinkedHashMap<>();
    final Map<Field, HyperMap<?, ?>> maps = new LinkedHashMap<>();
    final Map<Field, HyperList<?>> lists = new LinkedHashMap<>();
    final Map<Field, cn.hyperchain.core.HyperTable> tables = new LinkedHashMap<>();

    Session(Object instance) {
      this.instance = instance;
    }
  }

  private static Type argument(Type t, int i) {
    if (t instanceof ParameterizedType) {
      Type[] a = ((ParameterizedType) t).getActualTypeArguments();
      if (i < a.length && !(a[i] instanceof java.lang.reflect.TypeVariable)) return a[i];
    }
    return Object.class;
  }

  private static List<Field> storeFields(Class<?> main) {
    List<Field> out = new ArrayList<>();
    for (Class<?> k = main; k != null && Beans.isOwn(k); k = k.getSuperclass())
      for (Field f : k.getDeclaredFields())
        if (f.isAnnotationPresent(StoreField.class) && !Modifier.isStatic(f.getModifiers())) {
          f.setAccessible(true);
          out.add(f);
        }
    return out;
  }

  /** Before an HVM call: every `@StoreField` field set from the ledger, every HyperMap field bound to its keys. */
  static Session before(Style style, Object instance) throws IllegalAccessException {
    if (style != Style.HVM) return null;
    Session s = new Session(instance);
    bindCrossCalls(instance);
    for (Field f : storeFields(instance.getClass())) {
      Object value = f.get(instance);
      String declared = f.getAnnotation(StoreField.class).type();
      boolean declaredNested = f.getType() == cn.hyperchain.core.NestedMap.class || "NestedMap".equals(declared) && f.getType().isAssignableFrom(cn.hyperchain.core.NestedMap.class);
      boolean declaredMap = declaredNested || f.getType() == HyperMap.class || "HyperMap".equals(declared) && f.getType().isAssignableFrom(HyperMap.class);
      if (value instanceof HyperMap || value == null && declaredMap) {
        HyperMap<?, ?> map = value != null ? (HyperMap<?, ?>) value : declaredNested ? new cn.hyperchain.core.NestedMap<>() : new HyperMap<>();
        if (value == null) f.set(instance, map);
        Stores.bind(map, f.getName(), argument(f.getGenericType(), 0), argument(f.getGenericType(), 1));
        s.maps.put(f, map);
        continue;
      }
      if (value instanceof cn.hyperchain.core.HyperTable || value == null && f.getType() == cn.hyperchain.core.HyperTable.class) {
        cn.hyperchain.core.HyperTable table = value == null ? new cn.hyperchain.core.HyperTable() : (cn.hyperchain.core.HyperTable) value;
        if (value == null) f.set(instance, table);
        Stores.bind(table, f.getName());
        s.tables.put(f, table);
        continue;
      }
      boolean declaredList = f.getType() == HyperList.class || "HyperList".equals(f.getAnnotation(StoreField.class).type()) && f.getType().isAssignableFrom(HyperList.class);
      if (value instanceof HyperList || value == null && declaredList) {
        HyperList<?> list = value == null ? new HyperList<>() : (HyperList<?>) value;
        if (value == null) f.set(instance, list);
        Stores.bind(list, f.getName(), argument(f.getGenericType(), 0));
        s.lists.put(f, list);
        continue;
      }
      byte[] bytes = Host.get(f.getName());
      String text = bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
      s.stored.put(f, text);
      if (text != null) {
        try {
          f.set(instance, Beans.fromJson(text, f.getGenericType()));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("the stored value of @StoreField " + f.getName() + " does not fit its type " + f.getGenericType().getTypeName() + ": " + e.getMessage());
        }
      }
    }
    return s;
  }

  private static final Field CROSS_ADDRESS, CROSS_LIBRARY;

  static {
    try {
      CROSS_ADDRESS = BaseContract.CrossCall.class.getDeclaredField("crossAddress");
      CROSS_LIBRARY = BaseContract.CrossCall.class.getDeclaredField("isLibrary");
      CROSS_ADDRESS.setAccessible(true);
      CROSS_LIBRARY.setAccessible(true);
    } catch (NoSuchFieldException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Every CrossCall field marked @Contract or @Library gets its address (a field left null gets a CrossCall). */
  private static void bindCrossCalls(Object instance) throws IllegalAccessException {
    for (Class<?> k = instance.getClass(); k != null && Beans.isOwn(k); k = k.getSuperclass())
      for (Field f : k.getDeclaredFields()) {
        if (f.getType() != BaseContract.CrossCall.class || Modifier.isStatic(f.getModifiers())) continue;
        cn.hyperchain.annotations.Contract contract = f.getAnnotation(cn.hyperchain.annotations.Contract.class);
        cn.hyperchain.annotations.Library library = f.getAnnotation(cn.hyperchain.annotations.Library.class);
        if (contract == null && library == null) continue;
        f.setAccessible(true);
        BaseContract.CrossCall call = (BaseContract.CrossCall) f.get(instance);
        if (call == null) f.set(instance, call = new BaseContract.CrossCall());
        CROSS_ADDRESS.set(call, contract != null ? contract.address() : library.address());
        CROSS_LIBRARY.setBoolean(call, contract == null);
      }
  }

  /** After an HVM call that succeeded: changed fields stored, HyperMap entries written. */
  static void after(Session s) throws IllegalAccessException {
    if (s == null) return;
    for (Map.Entry<Field, String> e : s.stored.entrySet()) {
      Object value = e.getKey().get(s.instance);
      String json = value == null ? null : Beans.toJson(value);
      if (json == null ? e.getValue() != null : !json.equals(e.getValue()))
        Host.put(e.getKey().getName(), json == null ? null : json.getBytes(StandardCharsets.UTF_8));
    }
    for (Map.Entry<Field, HyperMap<?, ?>> e : s.maps.entrySet()) {
      if (e.getKey().get(s.instance) != e.getValue())
        throw new IllegalStateException("the @StoreField HyperMap " + e.getKey().getName() + " was replaced by another object: change its entries instead");
      Stores.flush(e.getValue());
    }
    for (Map.Entry<Field, cn.hyperchain.core.HyperTable> e : s.tables.entrySet())
      if (e.getKey().get(s.instance) != e.getValue())
        throw new IllegalStateException("the @StoreField HyperTable " + e.getKey().getName() + " was replaced by another object: change its values instead");
    for (Map.Entry<Field, HyperList<?>> e : s.lists.entrySet()) {
      if (e.getKey().get(s.instance) != e.getValue())
        throw new IllegalStateException("the @StoreField HyperList " + e.getKey().getName() + " was replaced by another object: change its elements instead");
      Stores.flush(e.getValue());
    }
  }

  // ---- Hyperchain's upgrade rules ----

  /** ledger key of an HVM contract's @StoreField names and types (a name no Java field can have) */
  static final String FIELDS_KEY = "#fields";

  private static Map<String, Object> schemaOf(Class<?> main) {
    Map<String, Object> out = new TreeMap<>();
    for (Field f : storeFields(main)) out.put(f.getName(), f.getGenericType().getTypeName());
    return out;
  }

  /**
   * The deployment of an HVM contract: its `@StoreField` names and types recorded, and (when it
   * has no onInit) the fields' initial values stored. For the other models nothing.
   */
  static void deployed(Contracts.Loaded c, Object instance) throws ReflectiveOperationException {
    if (c.style != Style.HVM) return;
    if (instance == null) {
      instance = c.constructor.newInstance();
      after(before(Style.HVM, instance));
    }
    Host.put(FIELDS_KEY, Beans.toJson(schemaOf(c.mainType)).getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Hyperchain's upgrade rule for HVM contracts, checked with the new code before it replaces the
   * old: every `@StoreField` the old code recorded is still there with the same type (fields may be
   * added, not removed or retyped); the new list is recorded.
   */
  static void upgrade(Contracts.Loaded c) throws Contracts.Failure {
    if (c.style != Style.HVM) return;
    Map<String, Object> now = schemaOf(c.mainType);
    byte[] stored = Host.get(FIELDS_KEY);
    if (stored != null) {
      @SuppressWarnings("unchecked")
      Map<String, Object> before = (Map<String, Object>) Beans.fromJson(new String(stored, StandardCharsets.UTF_8), Map.class);
      for (Map.Entry<String, Object> e : before.entrySet()) {
        Object type = now.get(e.getKey());
        if (type == null)
          throw new Contracts.Failure("upgrade", "the new code removes @StoreField " + e.getKey() + " (" + e.getValue() + "): Hyperchain's rule is that fields may be added, not removed or retyped");
        if (!type.equals(e.getValue()))
          throw new Contracts.Failure("upgrade", "the new code changes @StoreField " + e.getKey() + " from " + e.getValue() + " to " + type + ": Hyperchain's rule is that fields may be added, not removed or retyped");
      }
    }
    String json = Beans.toJson(now);
    if (stored == null || !json.equals(new String(stored, StandardCharsets.UTF_8))) Host.put(FIELDS_KEY, json.getBytes(StandardCharsets.UTF_8));
  }

  /** `ret` for the HVM and 1.x models; null for Keel's (Invocation.encode). */
  static byte[] encode(Style style, Object result, Class<?> returnType) throws Contracts.Failure {
    if (style == Style.HVM) {
      if (returnType == void.class || result == null) return new byte[0];
      return (result instanceof String ? (String) result : Beans.toJson(result)).getBytes(StandardCharsets.UTF_8);
    }
    if (style == Style.JCEE) {
      if (!(result instanceof ExecuteResult))
        throw new Contracts.Failure("exception", "a 1.x function must return an ExecuteResult (result(ok, value))");
      ExecuteResult r = (ExecuteResult) result;
      Object value = r.getResult();
      if (!r.isSuccess()) throw new Contracts.Failure("exception", value == null ? "the function returned result(false)" : text(value));
      if (value == null) return new byte[0];
      if (value instanceof byte[]) return ((byte[]) value).clone();
      return text(value).getBytes(StandardCharsets.UTF_8);
    }
    return null;
  }

  /** 1.x's text of a value: Strings as they are, numbers, booleans and characters as Java prints them, anything else JSON. */
  private static String text(Object value) {
    if (value instanceof String) return (String) value;
    if (value instanceof Number || value instanceof Boolean || value instanceof Character) return String.valueOf(value);
    if (value instanceof Throwable) return String.valueOf(((Throwable) value).getMessage());
    return Beans.toJson(value);
  }

  // ---- InvokeBean ----

  /**
   * Runs an HVM InvokeBean: a class the caller sends, implementing {@code BaseInvoke<T, I>}, whose
   * {@code invoke(I contract)} calls the contract's interface methods, all in this one call (so
   * they succeed or fail together). The bean is checked like contract code (the same scan, and
   * instrumented so its steps count), may name the contract's interfaces and beans but not its main
   * class or BaseContract (so it reaches the contract only through its interfaces), and is defined
   * in a loader of its own that lasts for this call.
   */
  static byte[] invokeBean(Contracts.Loaded c, List<Object> args) throws Contracts.Failure, ReflectiveOperationException {
    if (c.style != Style.HVM)
      throw new Contracts.Failure("bean", "an InvokeBean calls an HVM contract (one extending cn.hyperchain.contract.BaseContract); this contract is not one");
    String name = (String) args.get(0);
    byte[] bytes = Base64.getDecoder().decode((String) args.get(1));
    String fields = (String) args.get(2);
    Meter.charge(bytes.length);
    ClassFile bean;
    try {
      bean = ClassFile.parse(bytes);
    } catch (ClassFile.FormatException e) {
      throw new Contracts.Failure("bean", "the InvokeBean is not a valid class file: " + e.getMessage());
    }
    String internal = name.replace('.', '/');
    if (!bean.name.equals(internal)) throw new Contracts.Failure("bean", "the InvokeBean class " + name + " declares itself " + ClassFile.dotted(bean.name));
    if (c.classFiles.containsKey(internal)) throw new Contracts.Failure("bean", "the InvokeBean " + name + " has the name of one of the contract's classes");
    String main = c.mainType.getName().replace('.', '/');
    for (String forbidden : new String[] {main, "cn/hyperchain/contract/BaseContract"}) {
      if (bean.names(forbidden))
        throw new Contracts.Failure("bean", "the InvokeBean " + name + " names " + ClassFile.dotted(forbidden) + ": a bean reaches the contract only through its interfaces");
    }
    Map<String, ClassFile> own = new java.util.HashMap<>(c.classFiles);
    own.put(internal, bean);
    byte[] instrumented;
    try {
      Scanner.scanOne(own, bean);
      Instrumenter.instrument(bean, own);
      instrumented = bean.write();
    } catch (Scanner.Refusal e) {
      throw new Contracts.Failure("bean", "InvokeBean refused: " + e.getMessage());
    } catch (ClassFile.FormatException | Instrumenter.TooLarge e) {
      throw new Contracts.Failure("bean", "InvokeBean refused: " + e.getMessage());
    }
    ContractLoader loader = new ContractLoader(c.loaderName, Map.of(name, instrumented), c.loader);
    Class<?> type;
    try {
      type = Class.forName(name, true, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      throw new Contracts.Failure("bean", "the InvokeBean does not load: " + e);
    }
    if (!BaseInvoke.class.isAssignableFrom(type))
      throw new Contracts.Failure("bean", "the InvokeBean " + name + " does not implement cn.hyperchain.contract.BaseInvoke");
    Object instance;
    try {
      instance = Beans.fromJson(fields, type);
    } catch (IllegalArgumentException e) {
      throw new Contracts.Failure("bean", "the InvokeBean's fields do not fit " + name + ": " + e.getMessage());
    }
    Object contract = c.constructor.newInstance();
    Session stored = before(Style.HVM, contract);
    Object result;
    try {
      result = BaseInvoke.class.getMethod("invoke", BaseContractInterface.class).invoke(instance, contract);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof ClassCastException && e.getCause().getStackTrace().length > 0
          && e.getCause().getStackTrace()[0].getClassName().equals(name))
        throw new Contracts.Failure("bean", "the InvokeBean " + name + " expects an interface this contract does not implement");
      throw e;
    }
    after(stored);
    return encode(Style.HVM, result, Object.class);
  }
}
