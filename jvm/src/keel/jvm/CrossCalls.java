package keel.jvm;

import cn.hyperchain.contract.BaseContractInterface;
import cn.hyperchain.jcee.client.contract.ContractTemplate;
import cn.hyperchain.jcee.common.ExecuteResult;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Proxy;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Cross-contract calls (docs/jvm.md §10): a Java contract calling another deployed Java contract
 * inside the same transaction, the way Hyperchain's APIs do it — 2.x's {@code CrossCall} field
 * with {@code @Contract}/{@code @Library}, whose {@code getCrossContract()} gives the callee
 * behind the callee's interface; 1.x's {@code invokeContract(ns, address, function, args)}, which
 * runs the callee's {@code openInvoke}.
 *
 * The callee runs on the same thread, under the same Meter (its steps, memory and frames count
 * against the transaction's budget) and the same Host, in a frame of its own: its ledger is its
 * own, {@code getSender()} is the caller, {@code getOrigin()} the signer. A callee that fails
 * leaves nothing (its writes and events are dropped) and the caller sees the failure: an exception
 * in 2.x, {@code result(false, reason)} in 1.x. A library call drops the callee's writes and events
 * even when it succeeds. Calls go one level deep (Hyperchain's rule), so a callee cannot call on,
 * and a contract cannot call itself: there is no reentrancy.
 */
public final class CrossCalls {
  private CrossCalls() {}

  /** steps a cross-contract call costs besides the callee's work (an EVM CALL's base cost, EIP-150) */
  static final int CALL_STEPS = 700;

  static Contracts contracts;
  /** the code of each contract on the call's stack */
  private static final ArrayList<Contracts.Loaded> running = new ArrayList<>();
  /** every code that ran in the call (their static arrays are put back after it) */
  private static final LinkedHashSet<Contracts.Loaded> ran = new LinkedHashSet<>();

  static void begin(Contracts.Loaded c) {
    running.clear();
    ran.clear();
    running.add(c);
    ran.add(c);
  }

  static List<Contracts.Loaded> end() {
    List<Contracts.Loaded> out = new ArrayList<>(ran);
    running.clear();
    ran.clear();
    return out;
  }

  /** A callee's address as the node writes addresses, or an exception naming what is wrong with it. */
  private static String addressOf(String address) {
    if (address == null || !address.matches("0[xX][0-9a-fA-F]{40}"))
      throw new IllegalArgumentException("a cross-contract call needs a contract address (0x and 40 hex digits), not " + address);
    return address.toLowerCase(java.util.Locale.ROOT);
  }

  private static String oneLevel(String callee) {
    return "cross-contract calls go one level deep (Hyperchain's rule): the contract " + Host.address() + ", itself called across, cannot call " + callee;
  }

  /** The callee's code, after the node confirmed it is a Java contract that may be called; else the reason it cannot be. */
  private static Contracts.Loaded resolve(String address) throws Contracts.Refused {
    Map<String, Object> ask = Contracts.reply("contract");
    ask.put("id", Host.callId());
    ask.put("address", address);
    Map<String, Object> answer = Main.ask(ask, "contract");
    if (Boolean.TRUE.equals(answer.get("frozen"))) throw Meter.stop(Stop.Kind.FROZEN, (String) answer.get("error"));
    if (!Boolean.TRUE.equals(answer.get("ok"))) throw new Contracts.Refused((String) answer.get("error"));
    try {
      return contracts.callee((String) answer.get("hash"));
    } catch (Contracts.Refused e) {
      throw new Contracts.Refused("the code of the contract at " + address + " does not load: " + e.getMessage());
    }
  }

  private static Map<String, Object> calleeContext(String callee) {
    Map<String, Object> ctx = new LinkedHashMap<>(Host.context());
    ctx.putIfAbsent("origin", ctx.get("sender"));
    ctx.put("sender", Host.address());
    ctx.put("self", callee);
    return ctx;
  }

  // ---- 2.x: CrossCall.getCrossContract() ----

  /**
   * The callee of an HVM {@code CrossCall} field: a proxy implementing the caller's copies of the
   * callee's contract interfaces (a caller compiles the callee's interface into its own jar, as
   * Hyperchain asks), whose methods run the callee's functions.
   */
  public static BaseContractInterface contract(String address, boolean library) {
    if (address == null || address.isEmpty())
      throw new IllegalStateException("this CrossCall field has no address: mark it @Contract(address = \"0x…\") or @Library(address = \"0x…\")");
    String callee = addressOf(address);
    if (Host.depth() > 1) throw new IllegalStateException(oneLevel(callee));
    if (callee.equals(Host.address())) throw new IllegalStateException("a contract cannot call itself across (" + callee + "): reentrancy is refused");
    // finding the callee asks the node: a call's cost, so a loop of look-ups ends on the budget long before the wall-clock net
    Meter.charge(CALL_STEPS);
    Contracts.Loaded target;
    try {
      target = resolve(callee);
    } catch (Contracts.Refused e) {
      throw new IllegalStateException(e.getMessage());
    }
    if (target.style != Hyperchain.Style.HVM)
      throw new IllegalStateException("the contract at " + callee + " is not an HVM contract (extending cn.hyperchain.contract.BaseContract): a CrossCall calls HVM contracts");
    Contracts.Loaded caller = running.get(running.size() - 1);
    List<Class<?>> interfaces = new ArrayList<>();
    for (String name : Hyperchain.contractInterfaces(target.mainType).keySet()) {
      if (!caller.loader.defines(name)) continue;
      try {
        interfaces.add(Class.forName(name, false, caller.loader));
      } catch (ClassNotFoundException | LinkageError e) {
        // not among the caller's classes after all
      }
    }
    if (interfaces.isEmpty())
      throw new IllegalStateException("the calling contract has none of the contract interfaces of the contract at " + callee + " (" + String.join(", ", Hyperchain.contractInterfaces(target.mainType).keySet())
          + "): put the callee's interface in the caller's jar");
    InvocationHandler handler = (proxy, method, args) -> {
      if (method.getDeclaringClass() == Object.class) {
        switch (method.getName()) {
          case "hashCode":
            return callee.hashCode();
          case "equals":
            return proxy == args[0];
          default:
            return "contract " + callee;
        }
      }
      return invoke(target, callee, library, method, args == null ? new Object[0] : args);
    };
    return (BaseContractInterface) Proxy.newProxyInstance(caller.loader, interfaces.toArray(new Class<?>[0]), handler);
  }

  private static Object invoke(Contracts.Loaded target, String callee, boolean library, Method method, Object[] args) throws Throwable {
    if (Host.depth() > 1) throw new IllegalStateException(oneLevel(callee));
    Meter.charge(CALL_STEPS);
    Method function = null;
    List<Method> named = target.functions.get(method.getName());
    if (named != null)
      for (Method m : named) if (sameParameters(m.getParameterTypes(), method.getParameterTypes())) function = m;
    if (function == null)
      throw new IllegalStateException("the contract at " + callee + " has no function " + method.getName() + " with the parameters of " + method.getDeclaringClass().getName() + "." + method.getName());
    Object[] values = new Object[args.length];
    Type[] to = function.getGenericParameterTypes();
    for (int i = 0; i < args.length; i++) values[i] = carry(args[i], to[i]);
    Host.Checkpoint checkpoint = Host.push(callee, calleeContext(callee));
    running.add(target);
    ran.add(target);
    boolean ok = false;
    Object result;
    try {
      Object instance = target.constructor.newInstance();
      Hyperchain.Session stored = Hyperchain.before(Hyperchain.Style.HVM, instance);
      result = function.invoke(instance, values);
      Hyperchain.after(stored);
      ok = true;
    } catch (InvocationTargetException e) {
      throw failed(callee, method.getName(), e.getCause());
    } catch (Stop e) {
      throw e;
    } catch (RuntimeException | IllegalAccessException | InstantiationException e) {
      throw failed(callee, method.getName(), e);
    } finally {
      running.remove(running.size() - 1);
      Host.pop(checkpoint, !ok || library);
    }
    if (method.getReturnType() == void.class) return null;
    return carry(result, method.getGenericReturnType());
  }

  /** How a callee's failure reaches the caller: a stop as itself (nothing may catch it), anything else as a RuntimeException naming it. */
  private static Throwable failed(String callee, String function, Throwable cause) {
    if (cause instanceof Stop || cause instanceof VirtualMachineError) return cause;
    String m = cause.getMessage();
    String name = cause.getClass().getName();
    if (name.startsWith("java.lang.")) name = name.substring("java.lang.".length());
    return new RuntimeException("the cross-contract call " + function + " of " + callee + " failed: " + (m == null ? name : name + ": " + m));
  }

  private static boolean sameParameters(Class<?>[] a, Class<?>[] b) {
    if (a.length != b.length) return false;
    for (int i = 0; i < a.length; i++) if (!a[i].getName().equals(b[i].getName())) return false;
    return true;
  }

  /**
   * A value crossing from one contract to another: primitives, Strings and numbers as they are
   * (nothing can change them), anything else copied through its JSON into the receiving side's
   * type, so no object of one contract's classes, and no mutable object, is shared between them.
   */
  private static Object carry(Object value, Type to) {
    if (value == null) return null;
    Class<?> raw = to instanceof Class ? (Class<?>) to : to instanceof ParameterizedType ? (Class<?>) ((ParameterizedType) to).getRawType() : Object.class;
    boolean immutable = value instanceof String || value instanceof Boolean || value instanceof Character || value instanceof BigInteger || value instanceof BigDecimal
        || value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte || value instanceof Double || value instanceof Float;
    if (immutable && (raw.isPrimitive() || raw.isInstance(value))) return value;
    return Beans.fromJson(Beans.toJson(value), to);
  }

  // ---- 1.x: ContractTemplate.invokeContract ----

  private static final Method OPEN_INVOKE;

  static {
    try {
      OPEN_INVOKE = ContractTemplate.class.getDeclaredMethod("openInvoke", String.class, List.class);
      OPEN_INVOKE.setAccessible(true);
    } catch (NoSuchMethodException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * 1.x's cross-contract call: the callee's {@code openInvoke(function, args)}, its result handed
   * back as it is; whatever goes wrong comes back as {@code result(false, reason)} (as 1.x did),
   * a stop excepted.
   */
  public static ExecuteResult invokeContract(String namespace, String address, String function, List<String> args) {
    if (namespace == null || namespace.isEmpty() || address == null || address.isEmpty())
      return new ExecuteResult(false, "invalid namespace or contract address");
    if (!"global".equals(namespace)) return new ExecuteResult(false, "no namespace named " + namespace + " (Keel runs one namespace: global)");
    String callee;
    try {
      callee = addressOf(address);
    } catch (IllegalArgumentException e) {
      return new ExecuteResult(false, e.getMessage());
    }
    if (Host.depth() > 1) return new ExecuteResult(false, oneLevel(callee));
    if (callee.equals(Host.address())) return new ExecuteResult(false, "a contract cannot call itself across (" + callee + "): reentrancy is refused");
    Meter.charge(CALL_STEPS);
    Contracts.Loaded target;
    try {
      target = resolve(callee);
    } catch (Contracts.Refused e) {
      return new ExecuteResult(false, e.getMessage());
    }
    if (target.style != Hyperchain.Style.JCEE)
      return new ExecuteResult(false, "the contract at " + callee + " is not a 1.x contract (extending cn.hyperchain.jcee.client.contract.ContractTemplate): invokeContract calls 1.x contracts");
    List<String> copy = new ArrayList<>();
    if (args != null) for (Object a : args) copy.add(a == null ? null : String.valueOf(a));
    Host.Checkpoint checkpoint = Host.push(callee, calleeContext(callee));
    running.add(target);
    ran.add(target);
    boolean ok = false;
    try {
      Object instance = target.constructor.newInstance();
      Object r = OPEN_INVOKE.invoke(instance, function, copy);
      if (!(r instanceof ExecuteResult)) return new ExecuteResult(false, "openInvoke of " + callee + " returned no ExecuteResult");
      ExecuteResult result = (ExecuteResult) r;
      ok = result.isSuccess();
      Object value = result.getResult();
      boolean plain = value == null || value instanceof String || value instanceof Number || value instanceof Boolean || value instanceof Character;
      return plain ? result : new ExecuteResult(result.isSuccess(), value instanceof byte[] ? ((byte[]) value).clone() : Beans.toJson(value));
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Stop || cause instanceof VirtualMachineError) throw (Error) cause;
      return new ExecuteResult(false, failed(callee, function, cause).getMessage());
    } catch (Stop e) {
      throw e;
    } catch (RuntimeException | IllegalAccessException | InstantiationException e) {
      return new ExecuteResult(false, failed(callee, function, e).getMessage());
    } finally {
      running.remove(running.size() - 1);
      Host.pop(checkpoint, !ok);
    }
  }
}
