package keel.jvm;

import java.util.Map;

/**
 * One class loader per contract code (by code hash). It defines the contract's own, instrumented
 * classes and resolves nothing else but the contract API, the metering classes and the allowed JDK
 * classes, so even a reference the scanner did not see cannot link to anything else. The
 * java.lang.invoke / java.lang.runtime / jdk.internal.reflect names are resolvable only for the
 * classes the JDK itself generates on a contract's behalf (lambdas, string concatenation,
 * records, reflective calls of the executor); contract bytecode naming them is refused by the
 * scanner.
 */
final class ContractLoader extends ClassLoader {
  static {
    registerAsParallelCapable();
  }

  /**
   * What a proxy class the executor makes for a cross-contract call (CrossCalls) links against, and
   * what the accessor the JDK generates for a contract method after it was invoked 15 times
   * reflectively links against (InvocationTargetException: without it the 16th call of a method on
   * one executor failed, whatever the contract); contract bytecode naming these is refused by the
   * scanner.
   */
  private static final java.util.Set<String> PROXY_NAMES =
      java.util.Set.of(
          "java.lang.reflect.Proxy",
          "java.lang.reflect.InvocationHandler",
          "java.lang.reflect.Method",
          "java.lang.reflect.UndeclaredThrowableException",
          "java.lang.reflect.InvocationTargetException",
          "java.lang.Class",
          "java.lang.NoSuchMethodException",
          "java.lang.NoSuchMethodError",
          "java.lang.ClassNotFoundException",
          "java.lang.IllegalAccessException",
          "java.lang.NoClassDefFoundError",
          "java.lang.invoke.MethodHandles",
          "java.lang.invoke.MethodHandles$Lookup");

  private final Map<String, byte[]> classes;
  /** for an HVM InvokeBean's loader: the contract whose classes the bean may name */
  private final ContractLoader contract;

  /** `classes`: binary (dotted) name → instrumented class bytes */
  ContractLoader(String name, Map<String, byte[]> classes) {
    this(name, classes, null);
  }

  ContractLoader(String name, Map<String, byte[]> classes, ContractLoader contract) {
    super(name, null);
    this.classes = classes;
    this.contract = contract;
  }

  /** Whether `name` (binary) is one of this contract's own classes. */
  boolean defines(String name) {
    return classes.containsKey(name);
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    synchronized (getClassLoadingLock(name)) {
      Class<?> c = findLoadedClass(name);
      if (c == null) {
        byte[] bytes = classes.get(name);
        if (bytes != null) c = defineClass(name, bytes, 0, bytes.length);
        else if (contract != null && contract.classes.containsKey(name)) c = contract.loadClass(name);
        else if (name.startsWith("keel.contract.") || name.equals("keel.jvm.Meter") || name.equals("keel.jvm.Guards")
            || Hyperchain.isProvided(name.replace('.', '/')))
          c = ContractLoader.class.getClassLoader().loadClass(name);
        else if (Allow.isAllowedClass(name.replace('.', '/')) || name.startsWith("java.lang.invoke.") || name.startsWith("java.lang.runtime.")
            || name.startsWith("jdk.internal.reflect.") || PROXY_NAMES.contains(name))
          c = ClassLoader.getPlatformClassLoader().loadClass(name);
        else throw new ClassNotFoundException(name + " is not available to contracts");
      }
      if (resolve) resolveClass(c);
      return c;
    }
  }
}
