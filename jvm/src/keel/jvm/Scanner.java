package keel.jvm;

import static keel.jvm.Bytecode.*;

import java.util.List;
import java.util.Map;

/**
 * The deploy-time check of a contract's classes. Everything a class names (super types, field and
 * method descriptors, instruction operands, bootstrap methods) must be one of its own classes, the
 * contract API or an allowed JDK class, and no member that gives threads, I/O, network, time,
 * randomness, reflection, synchronisation or class loading may be used. A refusal names the class,
 * the method and the instruction. The class loader (ContractLoader) enforces the class list a
 * second time when linking.
 */
final class Scanner {
  static final class Refusal extends Exception {
    Refusal(String message) {
      super(message);
    }
  }

  /** lowest and highest class-file major version accepted: Java 8 to 17 */
  static final int MIN_MAJOR = 52, MAX_MAJOR = 61;

  private final Map<String, ClassFile> own;
  private ClassFile cf;
  private String where;

  private Scanner(Map<String, ClassFile> own) {
    this.own = own;
  }

  static void scan(Map<String, ClassFile> classes) throws Refusal, ClassFile.FormatException {
    Scanner s = new Scanner(classes);
    for (ClassFile cf : classes.values()) s.scanClass(cf);
  }

  /** Scans `cf` alone; `own` are the classes it may name besides the allowed ones (an InvokeBean and its contract's classes). */
  static void scanOne(Map<String, ClassFile> own, ClassFile cf) throws Refusal, ClassFile.FormatException {
    new Scanner(own).scanClass(cf);
  }

  private Refusal refuse(String what) {
    return new Refusal(where + ": " + what);
  }

  private boolean isOwn(String c) {
    return own.containsKey(c);
  }

  private void checkClass(String c, String context) throws Refusal {
    if (c == null || isOwn(c) || Allow.isAllowedClass(c)) return;
    throw refuse(context + " " + ClassFile.dotted(c) + " is not allowed (" + Allow.classReason(c) + ")");
  }

  private void checkDescriptor(String descriptor, String context) throws Refusal {
    for (String c : ClassFile.classesInDescriptor(descriptor)) checkClass(c, context);
  }

  private void checkMember(String owner, String name, String descriptor, String context) throws Refusal {
    String ownerClass = ClassFile.elementClass(owner);
    checkClass(ownerClass, context);
    String reason = Allow.memberReason(owner, name);
    if (reason == null && owner.startsWith("java/")) reason = JdkCosts.refusal(owner, name, descriptor);
    if (reason == null && isOwn(owner)) reason = Hyperchain.inheritedMemberReason(own, owner, name);
    if (reason != null)
      throw refuse(context + " " + ClassFile.dotted(owner) + "." + name + " is not allowed (" + reason + ")");
    checkDescriptor(descriptor, context);
  }

  private void scanClass(ClassFile c) throws Refusal, ClassFile.FormatException {
    cf = c;
    where = "class " + ClassFile.dotted(c.name);
    if (c.major < MIN_MAJOR || c.major > MAX_MAJOR)
      throw refuse("class-file version " + c.major + " is not supported: compile for Java 8 to 17 (javac --release 17)");
    if ((c.access & ClassFile.ACC_MODULE) != 0) throw refuse("module descriptors are not contract classes");
    for (String prefix : new String[] {"java/", "javax/", "jdk/", "sun/", "com/sun/", "keel/"})
      if (c.name.startsWith(prefix)) throw refuse("the package " + prefix.replace('/', '.') + " is reserved");
    if (Hyperchain.isHyperchainApi(c.name))
      throw refuse("the package of " + ClassFile.dotted(c.name) + " is Hyperchain's API, which the engine provides: do not bundle Hyperchain's SDK classes in a contract");
    if (c.superName == null) throw refuse("a contract class must have a super class");
    checkClass(c.superName, "super class");
    if (Allow.isUncatchable(c.superName) || c.superName.equals("java/lang/Error") || c.superName.endsWith("Error") && !isOwn(c.superName))
      throw refuse("extending " + ClassFile.dotted(c.superName) + " is not allowed (contracts may define exceptions, not errors)");
    checkExtendable(c.superName);
    for (String i : c.interfaces) checkClass(i, "interface");
    boolean isEnum = isEnumClass(c);

    for (ClassFile.Member f : c.fields) {
      where = "class " + ClassFile.dotted(c.name) + ", field " + f.name;
      checkDescriptor(f.descriptor, "type");
      boolean isStatic = (f.access & ClassFile.ACC_STATIC) != 0;
      boolean isFinal = (f.access & ClassFile.ACC_FINAL) != 0;
      if (isStatic && (!isFinal || !isConstantType(f.descriptor)) && !Hyperchain.isStatelessType(f.descriptor))
        throw refuse(
            "static fields must be final and hold primitives, Strings, boxed numbers, BigInteger/BigDecimal, enum constants"
                + " or arrays of those (state lives in the ledger, not in the class)");
      if (isEnum && !isStatic && (!isFinal || !isConstantType(f.descriptor) || f.descriptor.startsWith("[")))
        throw refuse("enum constants are shared by every call: their fields must be final primitives or Strings");
    }

    for (ClassFile.Member m : c.methods) {
      where = "class " + ClassFile.dotted(c.name) + ", method " + m.name + m.descriptor;
      if ((m.access & ClassFile.ACC_NATIVE) != 0) throw refuse("native methods are not allowed");
      if ((m.access & ClassFile.ACC_SYNCHRONIZED) != 0) throw refuse("synchronized methods are not allowed (synchronisation)");
      if (m.name.equals("finalize") && m.descriptor.equals("()V")) throw refuse("finalize() is not allowed (garbage-collector timing)");
      checkDescriptor(m.descriptor, "type");
      ClassFile.Attribute code = m.attribute("Code");
      if (code != null) scanCode(m, code.data);
    }
  }

  /**
   * An enum, or the class of an enum constant with a body (javac makes it a subclass of the enum):
   * its instances are shared by every call, so its fields follow the enum rules.
   */
  private boolean isEnumClass(ClassFile c) {
    for (int hops = 0; c != null && hops <= own.size(); hops++) {
      if ("java/lang/Enum".equals(c.superName)) return true;
      c = own.get(c.superName);
    }
    return false;
  }

  /**
   * The JDK classes a contract class may extend: Object, the throwables, and abstract bases.
   * Subclassing a value type (BigInteger, BigDecimal) would let a "constant" static field hold
   * mutable state; subclassing a concrete collection would hide JDK storage behind contract code
   * (JdkCosts measures a JDK collection by its size, an own one by the contract code it runs).
   */
  private void checkExtendable(String superName) throws Refusal {
    if (isOwn(superName) || superName.equals("java/lang/Object") || superName.startsWith(Allow.API)) return;
    if (Allow.isImmutableValueType(superName))
      throw refuse("extending " + ClassFile.dotted(superName) + " is not allowed (static fields rely on its values never changing)");
    Class<?> jdk;
    try {
      jdk = Class.forName(ClassFile.dotted(superName), false, ClassLoader.getPlatformClassLoader());
    } catch (ClassNotFoundException e) {
      return; // not a JDK class: checkClass has judged it
    }
    if (Throwable.class.isAssignableFrom(jdk) || java.lang.reflect.Modifier.isAbstract(jdk.getModifiers())) return;
    throw refuse("extending " + ClassFile.dotted(superName) + " is not allowed (extend Object, an exception or an abstract base such as AbstractList)");
  }

  /** A field type whose value cannot change: primitive, String-like, own enum; or an array of those. */
  private boolean isConstantType(String descriptor) {
    String d = descriptor;
    while (d.startsWith("[")) d = d.substring(1);
    if (d.length() == 1) return true;
    String c = d.substring(1, d.length() - 1);
    if (Allow.isImmutableValueType(c)) return true;
    ClassFile target = own.get(c);
    return target != null && (target.access & ClassFile.ACC_ENUM) != 0;
  }

  private void scanCode(ClassFile.Member m, byte[] attr) throws Refusal, ClassFile.FormatException {
    int codeLength = s4(attr, 4);
    byte[] code = new byte[codeLength];
    System.arraycopy(attr, 8, code, 0, codeLength);
    int p = 8 + codeLength;
    int exceptions = u2(attr, p);
    for (int i = 0; i < exceptions; i++) {
      int type = u2(attr, p + 2 + 8 * i + 6);
      // any type may be caught, Throwable and Error included (try-with-resources catches Throwable):
      // the Instrumenter makes a stopped call and the VM's own errors pass every handler (Meter.caught)
      if (type == 0) continue;
      checkClass(cf.className(type), "catch of");
    }
    List<Insn> insns = decode(code);
    String method = where;
    for (Insn insn : insns) {
      int op = insn.opcode;
      where = method + ", " + Bytecode.name(op) + " at " + insn.offset;
      switch (op) {
        case MONITORENTER:
        case MONITOREXIT:
          throw refuse("synchronized blocks are not allowed (synchronisation)");
        case JSR:
        case JSR_W:
        case RET:
          throw refuse("subroutines (jsr/ret) are not allowed");
        case PUTSTATIC: {
          String[] ref = cf.memberRef(u2(code, insn.offset + 1));
          if (!m.name.equals("<clinit>") || !ref[0].equals(cf.name))
            throw refuse("writing static field " + ClassFile.dotted(ref[0]) + "." + ref[1] + " outside the class initialiser is not allowed");
          checkMember(ref[0], ref[1], ref[2], "field");
          break;
        }
        case GETSTATIC:
        case GETFIELD:
        case PUTFIELD: {
          String[] ref = cf.memberRef(u2(code, insn.offset + 1));
          checkMember(ref[0], ref[1], ref[2], "field");
          break;
        }
        case INVOKEVIRTUAL:
        case INVOKESPECIAL:
        case INVOKESTATIC:
        case INVOKEINTERFACE: {
          String[] ref = cf.memberRef(u2(code, insn.offset + 1));
          checkMember(ref[0], ref[1], ref[2], "call of");
          break;
        }
        case INVOKEDYNAMIC:
          scanIndy(u2(code, insn.offset + 1));
          break;
        case MULTIANEWARRAY:
          if ((code[insn.offset + 3] & 0xff) > 2)
            throw refuse("creating an array of more than two dimensions at once is not supported (create the inner arrays one by one)");
          checkClass(ClassFile.elementClass(cf.className(u2(code, insn.offset + 1))), "class");
          break;
        case NEW:
        case ANEWARRAY:
        case CHECKCAST:
        case INSTANCEOF:
          checkClass(ClassFile.elementClass(cf.className(u2(code, insn.offset + 1))), "class");
          break;
        case LDC:
        case LDC_W:
        case LDC2_W: {
          int index = op == LDC ? code[insn.offset + 1] & 0xff : u2(code, insn.offset + 1);
          ClassFile.Entry e = cf.entry(index);
          if (e.tag == ClassFile.CLASS) checkClass(ClassFile.elementClass(cf.utf8(e.a)), "class literal");
          else if (e.tag == ClassFile.METHOD_HANDLE || e.tag == ClassFile.METHOD_TYPE || e.tag == ClassFile.DYNAMIC)
            throw refuse("method-handle and dynamic constants are not allowed (reflection)");
          break;
        }
        default:
          if (op == 0xca || op >= 0xfe) throw refuse("reserved opcode");
      }
    }
    where = method;
  }

  private void scanIndy(int index) throws Refusal, ClassFile.FormatException {
    ClassFile.Entry indy = cf.entry(index, ClassFile.INVOKE_DYNAMIC);
    String[] nat = cf.nameAndType(indy.b);
    checkDescriptor(nat[1], "dynamic call type");
    byte[] table = null;
    for (ClassFile.Attribute a : cf.attributes) if (a.name.equals("BootstrapMethods")) table = a.data;
    if (table == null || indy.a >= u2(table, 0)) throw new ClassFile.FormatException("invokedynamic without its bootstrap method");
    int p = 2;
    for (int i = 0; i < indy.a; i++) p += 4 + 2 * u2(table, p + 2);
    ClassFile.Entry handle = cf.entry(u2(table, p), ClassFile.METHOD_HANDLE);
    String[] bootstrap = cf.memberRef(handle.b);
    if (!Allow.isAllowedBootstrap(bootstrap[0], bootstrap[1]))
      throw refuse("dynamic call with bootstrap " + ClassFile.dotted(bootstrap[0]) + "." + bootstrap[1] + " is not allowed (only string concatenation, lambdas and records)");
    int args = u2(table, p + 2);
    for (int k = 0; k < args; k++) {
      ClassFile.Entry arg = cf.entry(u2(table, p + 4 + 2 * k));
      if (arg.tag == ClassFile.METHOD_HANDLE) {
        String[] target = cf.memberRef(arg.b);
        checkMember(target[0], target[1], target[2], "method reference to");
        if (target[0].startsWith("java/") && !isOwn(target[0])) {
          // handle kinds 5, 7, 9: invokeVirtual, invokeSpecial, invokeInterface (a receiver); 6 static, 8 constructor
          boolean receiver = arg.a == 5 || arg.a == 7 || arg.a == 9;
          String costly = JdkCosts.referenceRefusal(target[0], target[1], target[2], receiver);
          if (costly != null)
            throw refuse("method reference to " + ClassFile.dotted(target[0]) + "." + target[1] + " is not allowed (" + costly + ")");
        }
        if (arg.a == 4 /* REF_putStatic */) throw refuse("a method handle writing a static field is not allowed");
      } else if (arg.tag == ClassFile.METHOD_TYPE) {
        checkDescriptor(cf.utf8(arg.a), "type");
      } else if (arg.tag == ClassFile.CLASS) {
        checkClass(ClassFile.elementClass(cf.utf8(arg.a)), "class literal");
      } else if (arg.tag == ClassFile.DYNAMIC) {
        throw refuse("dynamic constants are not allowed");
      }
    }
  }
}
