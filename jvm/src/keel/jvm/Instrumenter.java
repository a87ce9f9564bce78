package keel.jvm;

import static keel.jvm.Bytecode.*;

import java.io.ByteArrayOutputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Rewrites every method of a scanned contract class so that its execution is metered
 * deterministically (the same count on every node):
 *
 * <ul>
 *   <li>each basic block starts with {@code Meter.tick(n)}, n = its instruction count, so a loop, a
 *       recursion or an exception ping-pong all consume the step budget;
 *   <li>{@code Meter.enter()} at method entry and {@code Meter.leave()} before each return and in a
 *       catch-all handler wrapped round the body: the call depth is limited before the JVM's own,
 *       machine-dependent StackOverflowError could be reached;
 *   <li>array sizes are charged to the per-call memory budget before {@code newarray}/{@code
 *       anewarray}, and after {@code multianewarray};
 *   <li>every exception handler begins with {@code Meter.caught(e)}, placed outside every exception
 *       range of the method, so a stopped call (or a VM error) cannot be caught by any handler;
 *   <li>calls into the JDK are charged before they run from their operands' sizes, and what they
 *       return (text, arrays, numbers) is charged after ({@link JdkCosts}); a few are redirected
 *       to {@link Guards}.
 * </ul>
 *
 * The inserted code leaves the operand stack as it found it and uses locals only above the method's
 * own, within one basic block (a charged call's arguments, parked while they are measured), so every
 * StackMapTable frame stays valid as it is; only offsets move. Branch targets, exception ranges and
 * frames map to the start of the code inserted before an instruction.
 */
final class Instrumenter {
  static final String METER = "keel/jvm/Meter";
  static final String GUARDS = "keel/jvm/Guards";

  static final class TooLarge extends Exception {
    TooLarge(String message) {
      super(message);
    }
  }

  /** JDK calls redirected to a static method of Guards with the receiver as first argument: "owner.name+desc" → guard descriptor */
  static final Map<String, String[]> GUARDED = new HashMap<>();

  static {
    GUARDED.put("java/math/BigInteger.pow(I)Ljava/math/BigInteger;", new String[] {"pow", "(Ljava/math/BigInteger;I)Ljava/math/BigInteger;"});
    GUARDED.put(
        "java/math/BigInteger.shiftLeft(I)Ljava/math/BigInteger;",
        new String[] {"shiftLeft", "(Ljava/math/BigInteger;I)Ljava/math/BigInteger;"});
    GUARDED.put("java/math/BigDecimal.pow(I)Ljava/math/BigDecimal;", new String[] {"pow", "(Ljava/math/BigDecimal;I)Ljava/math/BigDecimal;"});
    GUARDED.put("java/lang/String.repeat(I)Ljava/lang/String;", new String[] {"repeat", "(Ljava/lang/String;I)Ljava/lang/String;"});
    GUARDED.put("java/util/Collections.nCopies(ILjava/lang/Object;)Ljava/util/List;", new String[] {"nCopies", "(ILjava/lang/Object;)Ljava/util/List;"});
    // stream sources the JDK drives by itself: each element they produce is charged (Guards)
    String[][] sources = {
      {"java/util/stream/IntStream", "range", "(II)"}, {"java/util/stream/IntStream", "rangeClosed", "(II)"},
      {"java/util/stream/LongStream", "range", "(JJ)"}, {"java/util/stream/LongStream", "rangeClosed", "(JJ)"},
      {"java/util/stream/IntStream", "iterate", "(ILjava/util/function/IntUnaryOperator;)"},
      {"java/util/stream/IntStream", "iterate", "(ILjava/util/function/IntPredicate;Ljava/util/function/IntUnaryOperator;)"},
      {"java/util/stream/IntStream", "generate", "(Ljava/util/function/IntSupplier;)"},
      {"java/util/stream/LongStream", "iterate", "(JLjava/util/function/LongUnaryOperator;)"},
      {"java/util/stream/LongStream", "iterate", "(JLjava/util/function/LongPredicate;Ljava/util/function/LongUnaryOperator;)"},
      {"java/util/stream/LongStream", "generate", "(Ljava/util/function/LongSupplier;)"},
      {"java/util/stream/DoubleStream", "iterate", "(DLjava/util/function/DoubleUnaryOperator;)"},
      {"java/util/stream/DoubleStream", "generate", "(Ljava/util/function/DoubleSupplier;)"},
      {"java/util/stream/Stream", "iterate", "(Ljava/lang/Object;Ljava/util/function/UnaryOperator;)"},
      {"java/util/stream/Stream", "iterate", "(Ljava/lang/Object;Ljava/util/function/Predicate;Ljava/util/function/UnaryOperator;)"},
      {"java/util/stream/Stream", "generate", "(Ljava/util/function/Supplier;)"},
    };
    for (String[] src : sources) {
      String desc = src[2] + "L" + src[0] + ";";
      String kind = src[0].substring("java/util/stream/".length()).replace("Stream", "").toLowerCase();
      String guard = (kind.isEmpty() ? "object" : kind) + Character.toUpperCase(src[1].charAt(0)) + src[1].substring(1);
      String guardDesc = src[2].replace("Ljava/util/function/Predicate;", "Ljava/util/function/Predicate;") + "L" + src[0] + ";";
      GUARDED.put(src[0] + "." + src[1] + desc, new String[] {guard, guardDesc});
    }
    GUARDED.put("java/lang/String.split(Ljava/lang/String;)[Ljava/lang/String;", new String[] {"split", "(Ljava/lang/String;Ljava/lang/String;)[Ljava/lang/String;"});
    GUARDED.put("java/lang/String.split(Ljava/lang/String;I)[Ljava/lang/String;", new String[] {"split", "(Ljava/lang/String;Ljava/lang/String;I)[Ljava/lang/String;"});
    for (String[] m : new String[][] {{"set", "I"}, {"set", "IZ"}, {"set", "II"}, {"set", "IIZ"}, {"flip", "I"}, {"flip", "II"}})
      GUARDED.put("java/util/BitSet." + m[0] + "(" + m[1] + ")V", new String[] {m[0], "(Ljava/util/BitSet;" + m[1] + ")V"});
    for (String b : new String[] {"java/lang/StringBuilder", "java/lang/StringBuffer"}) {
      GUARDED.put(b + ".append(Ljava/lang/Object;)L" + b + ";", new String[] {"append", "(L" + b + ";Ljava/lang/Object;)L" + b + ";"});
      // a primitive appended is text of a bounded length, charged as such (its growth of the builder included)
      for (char t : "CZIJFD".toCharArray())
        GUARDED.put(b + ".append(" + t + ")L" + b + ";", new String[] {"append", "(L" + b + ";" + t + ")L" + b + ";"});
      GUARDED.put(b + ".appendCodePoint(I)L" + b + ";", new String[] {"appendCodePoint", "(L" + b + ";I)L" + b + ";"});
    }
    // text made from elements: each element's text (and a delimiter) charged as it is added (Guards)
    GUARDED.put("java/lang/String.join(Ljava/lang/CharSequence;[Ljava/lang/CharSequence;)Ljava/lang/String;",
        new String[] {"join", "(Ljava/lang/CharSequence;[Ljava/lang/CharSequence;)Ljava/lang/String;"});
    GUARDED.put("java/lang/String.join(Ljava/lang/CharSequence;Ljava/lang/Iterable;)Ljava/lang/String;",
        new String[] {"join", "(Ljava/lang/CharSequence;Ljava/lang/Iterable;)Ljava/lang/String;"});
    GUARDED.put("java/util/StringJoiner.add(Ljava/lang/CharSequence;)Ljava/util/StringJoiner;",
        new String[] {"add", "(Ljava/util/StringJoiner;Ljava/lang/CharSequence;)Ljava/util/StringJoiner;"});
    GUARDED.put("java/util/StringJoiner.merge(Ljava/util/StringJoiner;)Ljava/util/StringJoiner;",
        new String[] {"merge", "(Ljava/util/StringJoiner;Ljava/util/StringJoiner;)Ljava/util/StringJoiner;"});
    for (String args : new String[] {"", "Ljava/lang/CharSequence;", "Ljava/lang/CharSequence;Ljava/lang/CharSequence;Ljava/lang/CharSequence;"})
      GUARDED.put("java/util/stream/Collectors.joining(" + args + ")Ljava/util/stream/Collector;", new String[] {"joining", "(" + args + ")Ljava/util/stream/Collector;"});
    GUARDED.put("java/util/stream/Collectors.toMap(Ljava/util/function/Function;Ljava/util/function/Function;)Ljava/util/stream/Collector;",
        new String[] {"toMap", "(Ljava/util/function/Function;Ljava/util/function/Function;)Ljava/util/stream/Collector;"});
    // operations that hold every element of a stream at once: each element passing is charged (Guards)
    String[][] buffering = {
      {"java/util/stream/Stream", "distinct", "()Ljava/util/stream/Stream;"},
      {"java/util/stream/Stream", "sorted", "()Ljava/util/stream/Stream;"},
      {"java/util/stream/Stream", "sorted", "(Ljava/util/Comparator;)Ljava/util/stream/Stream;"},
      {"java/util/stream/Stream", "collect", "(Ljava/util/stream/Collector;)Ljava/lang/Object;"},
      {"java/util/stream/Stream", "collect", "(Ljava/util/function/Supplier;Ljava/util/function/BiConsumer;Ljava/util/function/BiConsumer;)Ljava/lang/Object;"},
      {"java/util/stream/Stream", "toList", "()Ljava/util/List;"},
      {"java/util/stream/Stream", "toArray", "()[Ljava/lang/Object;"},
      {"java/util/stream/Stream", "toArray", "(Ljava/util/function/IntFunction;)[Ljava/lang/Object;"},
      {"java/util/stream/IntStream", "distinct", "()Ljava/util/stream/IntStream;"},
      {"java/util/stream/IntStream", "sorted", "()Ljava/util/stream/IntStream;"},
      {"java/util/stream/IntStream", "toArray", "()[I"},
      {"java/util/stream/IntStream", "collect", "(Ljava/util/function/Supplier;Ljava/util/function/ObjIntConsumer;Ljava/util/function/BiConsumer;)Ljava/lang/Object;"},
      {"java/util/stream/LongStream", "distinct", "()Ljava/util/stream/LongStream;"},
      {"java/util/stream/LongStream", "sorted", "()Ljava/util/stream/LongStream;"},
      {"java/util/stream/LongStream", "toArray", "()[J"},
      {"java/util/stream/LongStream", "collect", "(Ljava/util/function/Supplier;Ljava/util/function/ObjLongConsumer;Ljava/util/function/BiConsumer;)Ljava/lang/Object;"},
      {"java/util/stream/DoubleStream", "distinct", "()Ljava/util/stream/DoubleStream;"},
      {"java/util/stream/DoubleStream", "sorted", "()Ljava/util/stream/DoubleStream;"},
      {"java/util/stream/DoubleStream", "toArray", "()[D"},
      {"java/util/stream/DoubleStream", "collect", "(Ljava/util/function/Supplier;Ljava/util/function/ObjDoubleConsumer;Ljava/util/function/BiConsumer;)Ljava/lang/Object;"},
    };
    for (String[] op : buffering) {
      String kind = op[0].substring("java/util/stream/".length()).replace("Stream", "").toLowerCase();
      String guard = (kind.isEmpty() ? "object" : kind) + Character.toUpperCase(op[1].charAt(0)) + op[1].substring(1);
      GUARDED.put(op[0] + "." + op[1] + op[2], new String[] {guard, "(L" + op[0] + ";" + op[2].substring(1)});
    }
  }

  private final ClassFile cf;
  /** steps an exception handler's entry costs besides its block: an exception was made and thrown */
  static final int HANDLER_STEPS = 1000;

  private final int tick, enter, leave, array, array2, throwable, caught;
  /** the contract's own classes: calls to them are contract code, not JDK work */
  private final java.util.Set<String> own;
  /** the contract's own classes by name: an object's size is read from their fields */
  private final Map<String, ClassFile> ownClasses;

  private Instrumenter(ClassFile cf, Map<String, ClassFile> own) {
    this.cf = cf;
    this.own = own.keySet();
    this.ownClasses = own;
    caught = cf.addMethodref(METER, "caught", "(Ljava/lang/Throwable;)V");
    tick = cf.addMethodref(METER, "tick", "(I)V");
    enter = cf.addMethodref(METER, "enter", "()V");
    leave = cf.addMethodref(METER, "leave", "()V");
    array = cf.addMethodref(METER, "array", "(II)V");
    array2 = cf.addMethodref(METER, "array2", "(III)V");
    throwable = cf.addClass("java/lang/Throwable");
  }

  static void instrument(ClassFile cf, Map<String, ClassFile> own) throws ClassFile.FormatException, TooLarge {
    Instrumenter in = new Instrumenter(cf, own);
    for (ClassFile.Member m : cf.methods) {
      ClassFile.Attribute code = m.attribute("Code");
      if (code != null) code.data = in.rewrite(m, code.data);
    }
  }

  private static final class Out {
    final ByteArrayOutputStream b = new ByteArrayOutputStream();

    void u1(int v) {
      b.write(v);
    }

    void u2(int v) {
      b.write(v >>> 8);
      b.write(v);
    }

    void u4(int v) {
      u2(v >>> 16);
      u2(v & 0xffff);
    }

    void bytes(byte[] v) {
      b.write(v, 0, v.length);
    }

    byte[] done() {
      return b.toByteArray();
    }

    int size() {
      return b.size();
    }
  }

  private byte[] invoke(int methodref) {
    return new byte[] {(byte) INVOKESTATIC, (byte) (methodref >>> 8), (byte) methodref};
  }

  private byte[] tickOf(int cost) {
    Out o = new Out();
    if (cost <= 5) o.u1(ICONST_0 + cost);
    else if (cost <= 127) {
      o.u1(BIPUSH);
      o.u1(cost);
    } else {
      o.u1(SIPUSH);
      o.u2(Math.min(cost, 32767));
    }
    o.bytes(invoke(tick));
    return o.done();
  }

  /** bytes of one element of the given field descriptor (JdkCosts charges JDK-made arrays with it too) */
  static int elementSizeOf(String descriptor) {
    switch (descriptor.charAt(0)) {
      case 'Z':
      case 'B':
        return 1;
      case 'C':
      case 'S':
        return 2;
      case 'I':
      case 'F':
        return 4;
      default:
        return 8;
    }
  }

  private static int elementSize(int newarrayType) {
    switch (newarrayType) {
      case 4: // boolean
      case 8: // byte
        return 1;
      case 5: // char
      case 9: // short
        return 2;
      case 7: // double
      case 11: // long
        return 8;
      default: // float, int
        return 4;
    }
  }

  private byte[] rewrite(ClassFile.Member method, byte[] attr) throws ClassFile.FormatException, TooLarge {
    int maxStack = u2(attr, 0), maxLocals = u2(attr, 2);
    int codeLength = s4(attr, 4);
    byte[] code = new byte[codeLength];
    System.arraycopy(attr, 8, code, 0, codeLength);
    int p = 8 + codeLength;
    int exceptionCount = u2(attr, p);
    p += 2;
    int[][] handlers = new int[exceptionCount][];
    for (int i = 0; i < exceptionCount; i++, p += 8)
      handlers[i] = new int[] {u2(attr, p), u2(attr, p + 2), u2(attr, p + 4), u2(attr, p + 6)};
    int attrCount = u2(attr, p);
    p += 2;
    String[] attrNames = new String[attrCount];
    byte[][] attrData = new byte[attrCount][];
    for (int i = 0; i < attrCount; i++) {
      attrNames[i] = cf.utf8(u2(attr, p));
      int len = s4(attr, p + 2);
      attrData[i] = new byte[len];
      System.arraycopy(attr, p + 6, attrData[i], 0, len);
      p += 6 + len;
    }

    List<Insn> insns = decode(code);
    int n = insns.size();
    int[] indexAt = new int[codeLength + 1];
    java.util.Arrays.fill(indexAt, -1);
    for (int i = 0; i < n; i++) indexAt[insns.get(i).offset] = i;
    indexAt[codeLength] = n;

    int spill = 0; // locals the charged JDK calls park their arguments in, beyond the method's own

    // basic-block leaders
    boolean[] leader = new boolean[n + 1];
    leader[0] = true;
    for (int i = 0; i < n; i++) {
      Insn insn = insns.get(i);
      for (int t : insn.targets) leader[indexOf(indexAt, t, codeLength, "branch target")] = true;
      if (insn.isBranch() || insn.endsFlow()) leader[i + 1] = true;
    }
    boolean[] handler = new boolean[n + 1];
    for (int[] h : handlers) {
      leader[indexOf(indexAt, h[2], codeLength, "handler")] = true;
      handler[indexOf(indexAt, h[2], codeLength, "handler")] = true;
      indexOf(indexAt, h[0], codeLength, "try start");
      indexOf(indexAt, h[1], codeLength, "try end");
    }

    // what goes before (prefix) and after (suffix) each instruction
    byte[][] prefix = new byte[n][];
    byte[][] suffix = new byte[n][];
    for (int i = 0; i < n; i++) {
      Out pre = new Out();
      Insn insn = insns.get(i);
      if (leader[i]) {
        int j = i + 1;
        while (j < n && !leader[j]) j++;
        pre.bytes(tickOf(j - i + (handler[i] ? HANDLER_STEPS : 0)));
      }
      if (handler[i]) {
        // the caught exception is on the stack: a stopped call, or the VM's own error, goes on up
        pre.u1(DUP);
        pre.bytes(invoke(caught));
      }
      if (insn.opcode == NEW) {
        // an object of the contract's own class: its fields; an exception: its stack trace too (the JDK records every frame)
        String type = cf.className(u2(code, insn.offset + 1));
        int bytes = objectBytes(type);
        boolean throwable = isThrowable(type);
        if (bytes > 0 || throwable) {
          pre.u1(SIPUSH);
          pre.u2(bytes);
          pre.bytes(invoke(cf.addMethodref(METER, throwable ? "throwable" : "object", "(I)V")));
        }
      }
      if (insn.opcode == NEWARRAY || insn.opcode == ANEWARRAY) {
        pre.u1(DUP);
        pre.u1(BIPUSH);
        pre.u1(insn.opcode == NEWARRAY ? elementSize(code[insn.offset + 1]) : 8);
        pre.bytes(invoke(array));
      }
      if (insn.opcode == MULTIANEWARRAY) {
        // dimensions 1 and 2 are charged before the allocation; Scanner refuses more at once
        String type = cf.className(u2(code, insn.offset + 1));
        int dims = code[insn.offset + 3] & 0xff;
        int size = elementSizeOf(type.substring(dims));
        pre.u1(dims == 1 ? DUP : DUP2);
        if (dims == 1) pre.u1(ICONST_0 + 1);
        pre.u1(BIPUSH);
        pre.u1(size);
        pre.bytes(invoke(array2));
      }
      if (insn.opcode >= IRETURN && insn.opcode <= RETURN) pre.bytes(invoke(leave));
      Out post = new Out();
      if (insn.opcode == INVOKEVIRTUAL || insn.opcode == INVOKESPECIAL) {
        // a copy the VM makes (an array's clone, Object.clone of an own object): charged like the original's allocation
        String[] ref = cf.memberRef(u2(code, insn.offset + 1));
        if (ref[1].equals("clone") && ref[2].equals("()Ljava/lang/Object;")) {
          pre.u1(DUP);
          pre.bytes(invoke(cf.addMethodref(METER, "cloned", "(Ljava/lang/Object;)V")));
        }
      }
      if (insn.opcode == INVOKESPECIAL || insn.opcode == INVOKESTATIC) {
        // tables as large as an enum's constants: an EnumMap's, an EnumSet's (an enum may have thousands)
        String[] ref = cf.memberRef(u2(code, insn.offset + 1));
        String member = ref[0] + "." + ref[1] + ref[2];
        if (member.equals("java/util/EnumMap.<init>(Ljava/lang/Class;)V") || member.startsWith("java/util/EnumSet.noneOf(Ljava/lang/Class;)")
            || member.startsWith("java/util/EnumSet.allOf(Ljava/lang/Class;)")) {
          pre.u1(DUP);
          pre.bytes(invoke(cf.addMethodref(METER, "enumTable", "(Ljava/lang/Class;)V")));
        }
      }
      if (insn.opcode == INVOKEVIRTUAL || insn.opcode == INVOKESTATIC || insn.opcode == INVOKESPECIAL || insn.opcode == INVOKEINTERFACE) {
        String[] ref = cf.memberRef(u2(code, insn.offset + 1));
        if (isJdk(ref[0])) spill = Math.max(spill, jdkCall(ref[0], ref[1], ref[2], insn.opcode, maxLocals, pre, post));
      }
      if (insn.opcode == INVOKEDYNAMIC) {
        ClassFile.Entry site = cf.entry(u2(code, insn.offset + 1), ClassFile.INVOKE_DYNAMIC);
        String[] nat = cf.nameAndType(site.b);
        if (nat[1].endsWith(")Ljava/lang/String;") && (nat[0].equals("makeConcatWithConstants") || nat[0].equals("makeConcat"))) {
          String concat = concatOperands(nat[1], maxLocals, pre);
          spill = Math.max(spill, params(nat[1]).size() * 2);
          if (!concat.equals(nat[1])) {
            int idx = cf.addInvokeDynamic(site.a, nat[0], concat);
            code[insn.offset + 1] = (byte) (idx >>> 8);
            code[insn.offset + 2] = (byte) idx;
          }
        } else if (nat[0].equals("toString") && nat[1].endsWith(")Ljava/lang/String;") && params(nat[1]).size() == 1) {
          // a record's toString, made by the JDK from its fields: their text is charged before
          pre.u1(DUP);
          pre.bytes(invoke(cf.addMethodref(GUARDS, "recordText", "(Ljava/lang/Object;)V")));
        }
        // javac's string concatenation, a record's toString: the text it makes is new memory
        if (nat[1].endsWith(")Ljava/lang/String;")) {
          post.u1(DUP);
          post.bytes(invoke(cf.addMethodref(METER, "madeText", "(Ljava/lang/Object;)V")));
        }
      }
      prefix[i] = pre.done();
      suffix[i] = post.done();
      if (insn.opcode == INVOKEVIRTUAL || insn.opcode == INVOKESTATIC || insn.opcode == INVOKEINTERFACE) {
        String[] ref = cf.memberRef(u2(code, insn.offset + 1));
        String[] guard = GUARDED.get(ref[0] + "." + ref[1] + ref[2]);
        if (guard != null) {
          int idx = cf.addMethodref(GUARDS, guard[0], guard[1]);
          code[insn.offset] = (byte) INVOKESTATIC;
          code[insn.offset + 1] = (byte) (idx >>> 8);
          code[insn.offset + 2] = (byte) idx;
          // invokeinterface is two bytes longer (count, 0): they become no-ops, so no offset moves
          if (insn.opcode == INVOKEINTERFACE) code[insn.offset + 3] = code[insn.offset + 4] = 0;
        }
      }
    }

    // layout
    byte[] prologue = invoke(enter);
    int[] target = new int[n + 1]; // new offset of the code inserted before instruction i
    int[] at = new int[n + 1]; // new offset of instruction i itself
    int[] length = new int[n];
    int pos = prologue.length;
    for (int i = 0; i < n; i++) {
      Insn insn = insns.get(i);
      target[i] = pos;
      pos += prefix[i].length;
      at[i] = pos;
      if (insn.opcode == TABLESWITCH || insn.opcode == LOOKUPSWITCH) {
        int oldPad = 3 - (insn.offset % 4);
        int newPad = 3 - (pos % 4);
        length[i] = insn.length - oldPad + newPad;
      } else {
        length[i] = insn.length;
      }
      pos += length[i] + suffix[i].length;
    }
    target[n] = at[n] = pos;
    int bodyEnd = pos;
    int handlerAt = pos;
    int total = pos + 4;
    if (total > 65535) throw new TooLarge("method " + method.name + method.descriptor + " is too large once metered (" + total + " bytes)");

    // the catch-all that keeps the depth count right when an exception leaves the method; in a
    // constructor it starts after the super()/this() call (`this` must be initialised where it applies)
    int wrapStart = prologue.length;
    if (method.name.equals("<init>")) {
      wrapStart = -1;
      for (int i = 0; i < n; i++) {
        Insn insn = insns.get(i);
        if (insn.opcode != INVOKESPECIAL) continue;
        String[] ref = cf.memberRef(u2(code, insn.offset + 1));
        if (ref[1].equals("<init>") && (ref[0].equals(cf.name) || ref[0].equals(cf.superName))) {
          wrapStart = target[i + 1];
          break;
        }
      }
    }
    boolean wrap = wrapStart >= 0 && wrapStart < bodyEnd;

    // emit
    Out o = new Out();
    o.bytes(prologue);
    for (int i = 0; i < n; i++) {
      Insn insn = insns.get(i);
      o.bytes(prefix[i]);
      int self = at[i];
      if (o.size() != self) throw new IllegalStateException("layout drift");
      int op = insn.opcode;
      if (op == TABLESWITCH || op == LOOKUPSWITCH) {
        o.u1(op);
        while (o.size() % 4 != 0) o.u1(0);
        int q = (insn.offset + 4) & ~3;
        o.u4(newTarget(indexAt, target, insn.targets[0]) - self);
        if (op == TABLESWITCH) {
          o.u4(s4(code, q + 4));
          o.u4(s4(code, q + 8));
          for (int k = 1; k < insn.targets.length; k++) o.u4(newTarget(indexAt, target, insn.targets[k]) - self);
        } else {
          o.u4(insn.targets.length - 1);
          for (int k = 1; k < insn.targets.length; k++) {
            o.u4(s4(code, q + 8 + 8 * (k - 1)));
            o.u4(newTarget(indexAt, target, insn.targets[k]) - self);
          }
        }
      } else if (op == GOTO_W || op == JSR_W) {
        o.u1(op);
        o.u4(newTarget(indexAt, target, insn.targets[0]) - self);
      } else if (insn.isBranch()) {
        int delta = newTarget(indexAt, target, insn.targets[0]) - self;
        if (delta < Short.MIN_VALUE || delta > Short.MAX_VALUE)
          throw new TooLarge("method " + method.name + method.descriptor + " is too large once metered (a branch spans more than 32 KiB)");
        o.u1(op);
        o.u2(delta & 0xffff);
      } else {
        o.b.write(code, insn.offset, insn.length);
      }
      o.bytes(suffix[i]);
    }
    if (wrap) {
      o.bytes(invoke(leave));
      o.u1(ATHROW);
    }
    byte[] newCode = o.done();

    // the code inserted at a handler's entry lies outside every exception range: what it throws
    // (the stop of a call, the VM's resource errors) cannot be caught by that handler, nor by any other
    // of this method, javac's own self-covering ranges of `finally` and `synchronized` included
    List<int[]> ranges = new java.util.ArrayList<>();
    for (int[] h : handlers) {
      int start = newTarget(indexAt, target, h[0]), end = newTarget(indexAt, target, h[1]);
      int handlerStart = newTarget(indexAt, target, h[2]);
      for (int k = 0; k < n && start < end; k++) {
        if (!handler[k] || at[k] <= start || target[k] >= end) continue;
        if (target[k] > start) ranges.add(new int[] {start, target[k], handlerStart, h[3]});
        start = at[k];
      }
      if (start < end) ranges.add(new int[] {start, end, handlerStart, h[3]});
    }
    if (ranges.size() > 65535) throw new TooLarge("method " + method.name + method.descriptor + " has too many exception ranges once metered");

    Out a = new Out();
    a.u2(Math.max(maxStack + 8, 1));
    a.u2(maxLocals + spill);
    a.u4(newCode.length);
    a.bytes(newCode);
    a.u2(ranges.size() + (wrap ? 1 : 0));
    for (int[] r : ranges) {
      a.u2(r[0]);
      a.u2(r[1]);
      a.u2(r[2]);
      a.u2(r[3]);
    }
    if (wrap) {
      a.u2(wrapStart);
      a.u2(bodyEnd);
      a.u2(handlerAt);
      a.u2(0);
    }
    Out attrs = new Out();
    int kept = 0;
    boolean hadFrames = false;
    for (int i = 0; i < attrCount; i++) {
      byte[] rewritten;
      switch (attrNames[i]) {
        case "StackMapTable":
          hadFrames = true;
          rewritten = frames(attrData[i], indexAt, target, at, wrap ? handlerAt : -1);
          break;
        case "LineNumberTable":
          rewritten = lines(attrData[i], indexAt, target);
          break;
        case "LocalVariableTable":
        case "LocalVariableTypeTable":
          rewritten = locals(attrData[i], indexAt, target);
          break;
        default:
          rewritten = null; // type annotations and the like: offsets we do not track; not needed to run
      }
      if (rewritten == null) continue;
      attrs.u2(cf.addUtf8(attrNames[i]));
      attrs.u4(rewritten.length);
      attrs.bytes(rewritten);
      kept++;
    }
    if (!hadFrames && wrap) {
      byte[] frames = frames(new byte[] {0, 0}, indexAt, target, at, handlerAt);
      attrs.u2(cf.addUtf8("StackMapTable"));
      attrs.u4(frames.length);
      attrs.bytes(frames);
      kept++;
    }
    a.u2(kept);
    a.bytes(attrs.done());
    return a.done();
  }

  /** the JDK: what a contract names besides its own classes and the contract API is in java.* */
  /**
   * Bytes of an object of `type` charged at its `new`: for the contract's own classes a header and 8
   * bytes a field (the class's and its own super classes'); 0 for a JDK or engine class (what their
   * constructors make without an argument is a few dozen bytes, within the steps' allowance, docs/jvm.md §5).
   */
  private int objectBytes(String type) {
    ClassFile c = ownClasses.get(type);
    if (c == null) return 0;
    long fields = 0;
    for (int guard = 0; c != null && guard < 64; guard++) {
      for (ClassFile.Member f : c.fields) if ((f.access & ClassFile.ACC_STATIC) == 0) fields++;
      c = c.superName == null ? null : ownClasses.get(c.superName);
    }
    return (int) Math.min(16 + 8 * fields, 32767);
  }

  /** Whether `type` is an exception: a JDK Throwable by name, or an own class extending one. */
  private boolean isThrowable(String type) {
    for (int guard = 0; type != null && guard < 64; guard++) {
      ClassFile c = ownClasses.get(type);
      if (c == null) return type.startsWith("java/") && (type.endsWith("Exception") || type.endsWith("Error") || type.equals("java/lang/Throwable"));
      type = c.superName;
    }
    return false;
  }

  private boolean isJdk(String owner) {
    return owner.startsWith("java/") && !own.contains(owner);
  }

  private static final int LCONST_0 = 0x09, LADD = 0x61, ILOAD = 0x15, ISTORE = 0x36, I2L = 0x85, SWAP = 0x5f;

  /** parameter descriptors of a method descriptor, one per parameter */
  static List<String> params(String descriptor) {
    List<String> out = new java.util.ArrayList<>();
    int p = 1;
    while (descriptor.charAt(p) != ')') {
      int start = p;
      while (descriptor.charAt(p) == '[') p++;
      if (descriptor.charAt(p) == 'L') p = descriptor.indexOf(';', p);
      p++;
      out.add(descriptor.substring(start, p));
    }
    return out;
  }

  /** offset from ILOAD/ISTORE of the typed load/store of a parameter: I, L(ong), F, D, A */
  private static int typeOffset(String param) {
    switch (param.charAt(0)) {
      case 'J':
        return 1;
      case 'F':
        return 2;
      case 'D':
        return 3;
      case 'L':
      case '[':
        return 4;
      default:
        return 0;
    }
  }

  private static void local(Out o, int opcode, int index) {
    if (index > 255) {
      o.u1(WIDE);
      o.u1(opcode);
      o.u2(index);
    } else {
      o.u1(opcode);
      o.u1(index);
    }
  }

  /**
   * The charges of a call into the JDK (JdkCosts): memory reserved by an int argument, before;
   * the work, from the sizes of its operands, before (its arguments are parked in locals above the
   * method's own while they are measured, then put back); what its result is, after. Returns the
   * locals used.
   */
  private int jdkCall(String owner, String name, String descriptor, int opcode, int firstFree, Out pre, Out post) {
    String text = JdkCosts.textOf(owner, name, descriptor);
    if (text != null && opcode == INVOKESPECIAL) text = "superText"; // super.toString() of a subclass of a JDK collection
    if (text != null) {
      // the operand the JDK makes text from is on top (Objects.toString(o, fallback): under the fallback)
      boolean under = descriptor.equals("(Ljava/lang/Object;Ljava/lang/String;)Ljava/lang/String;");
      if (under) pre.u1(SWAP);
      pre.u1(DUP);
      pre.bytes(invoke(cf.addMethodref(GUARDS, text, "(Ljava/lang/Object;)V")));
      if (under) pre.u1(SWAP);
    }
    int capacity = JdkCosts.capacity(owner, name, descriptor);
    if (capacity != 0) {
      pre.u1(DUP);
      if (capacity == JdkCosts.BITS) pre.bytes(invoke(cf.addMethodref(METER, "bits", "(I)V")));
      else if (capacity == JdkCosts.COPY) pre.bytes(invoke(cf.addMethodref(METER, "copy", "(I)V")));
      else {
        pre.u1(BIPUSH);
        pre.u1(capacity);
        pre.bytes(invoke(cf.addMethodref(METER, "capacity", "(II)V")));
      }
    }
    int range = JdkCosts.range(owner, name, descriptor);
    if (range != 0) {
      pre.u1(DUP2);
      pre.u1(BIPUSH);
      pre.u1(range);
      pre.bytes(invoke(cf.addMethodref(METER, "range", "(III)V")));
    }
    int used = 0;
    boolean counts = owner.startsWith("java/math/");
    JdkCosts.Plan plan = JdkCosts.charged(owner, name, descriptor, opcode != INVOKESTATIC && !name.equals("<init>"));
    if (plan != null) {
      List<String> params = params(descriptor);
      int[] slot = new int[params.size()];
      int next = firstFree;
      for (int k = 0; k < params.size(); k++) {
        slot[k] = next;
        next += params.get(k).equals("J") || params.get(k).equals("D") ? 2 : 1;
      }
      used = next - firstFree;
      for (int k = params.size() - 1; k >= 0; k--) local(pre, ISTORE + typeOffset(params.get(k)), slot[k]);
      boolean receiver = plan.receiver && opcode != INVOKESTATIC && !name.equals("<init>");
      boolean keyed = plan.kind == JdkCosts.HASHED;
      if (receiver) {
        pre.u1(DUP);
        String measure = plan.kind == JdkCosts.LINKED ? "unitsIfLinked" : keyed ? "unitsIfHashed" : "units";
        pre.bytes(invoke(cf.addMethodref(METER, measure, "(Ljava/lang/Object;)J")));
      } else {
        pre.u1(LCONST_0);
      }
      pre.u1(LCONST_0);
      for (int k = 0; k < params.size(); k++) {
        int type = typeOffset(params.get(k));
        if (keyed && k > 0) continue; // a keyed look-up: only the key matters
        if (type == 4) {
          local(pre, ILOAD + 4, slot[k]);
          pre.bytes(invoke(cf.addMethodref(METER, keyed ? "unitsIfIdentityKey" : "units", "(Ljava/lang/Object;)J")));
          pre.u1(LADD);
        } else if (type == 0 && counts) {
          local(pre, ILOAD, slot[k]);
          pre.bytes(invoke(cf.addMethodref(METER, "unitsOfCount", "(I)J")));
          pre.u1(LADD);
        }
      }
      pre.u1(BIPUSH);
      pre.u1(plan.kind | (plan.copies ? 8 : 0));
      pre.bytes(invoke(cf.addMethodref(METER, "jdk", "(JJI)V")));
      for (int k = 0; k < params.size(); k++) local(pre, ILOAD + typeOffset(params.get(k)), slot[k]);
    }
    String made = JdkCosts.made(owner, descriptor);
    if (name.equals("<init>")) made = owner.equals("java/math/BigInteger") || owner.equals("java/math/BigDecimal") ? "madeNumber" : null;
    if (made != null) {
      // javac leaves the new number on the stack after its constructor (new, dup, …, invokespecial)
      post.u1(DUP);
      post.bytes(invoke(cf.addMethodref(METER, made, "(Ljava/lang/Object;)V")));
    }
    return used;
  }

  /**
   * Before javac's string concatenation: its operands are parked in locals above the method's own;
   * each that is not a String or a primitive is made a String (Guards.concatOperand: a JDK
   * container's text is charged before it is made); the text of all of them (a String's length, a
   * primitive's longest text) is charged; they are put back. Returns the call site's type with those
   * operands as Strings.
   */
  private String concatOperands(String descriptor, int firstFree, Out pre) {
    List<String> params = params(descriptor);
    int[] slot = new int[params.size()];
    int next = firstFree;
    for (int k = 0; k < params.size(); k++) {
      slot[k] = next;
      next += params.get(k).equals("J") || params.get(k).equals("D") ? 2 : 1;
    }
    for (int k = params.size() - 1; k >= 0; k--) local(pre, ISTORE + typeOffset(params.get(k)), slot[k]);
    StringBuilder type = new StringBuilder("(");
    int fixed = 0;
    for (int k = 0; k < params.size(); k++) {
      String p = params.get(k);
      if (typeOffset(p) == 4) {
        if (!p.equals("Ljava/lang/String;")) {
          local(pre, ILOAD + 4, slot[k]);
          pre.bytes(invoke(cf.addMethodref(GUARDS, "concatOperand", "(Ljava/lang/Object;)Ljava/lang/String;")));
          local(pre, ISTORE + 4, slot[k]);
        }
        type.append("Ljava/lang/String;");
      } else {
        type.append(p);
        fixed += p.equals("C") ? 1 : p.equals("Z") ? 5 : p.equals("J") ? 20 : p.equals("F") ? 15 : p.equals("D") ? 24 : 11;
      }
    }
    type.append(")Ljava/lang/String;");
    pre.u1(SIPUSH);
    pre.u2(fixed);
    pre.u1(I2L);
    for (int k = 0; k < params.size(); k++) {
      if (typeOffset(params.get(k)) != 4) continue;
      local(pre, ILOAD + 4, slot[k]);
      pre.bytes(invoke(cf.addMethodref(GUARDS, "length", "(Ljava/lang/String;)J")));
      pre.u1(LADD);
    }
    pre.bytes(invoke(cf.addMethodref(GUARDS, "concat", "(J)V")));
    for (int k = 0; k < params.size(); k++) local(pre, ILOAD + typeOffset(params.get(k)), slot[k]);
    return type.toString();
  }

  private static int indexOf(int[] indexAt, int offset, int codeLength, String what) throws ClassFile.FormatException {
    if (offset < 0 || offset > codeLength || indexAt[offset] < 0)
      throw new ClassFile.FormatException(what + " " + offset + " is not an instruction boundary");
    return indexAt[offset];
  }

  private static int newTarget(int[] indexAt, int[] target, int oldOffset) {
    return target[indexAt[oldOffset]];
  }

  private byte[] frames(byte[] data, int[] indexAt, int[] target, int[] at, int handlerAt) throws ClassFile.FormatException {
    int count = u2(data, 0);
    int p = 2;
    Out o = new Out();
    int written = 0;
    int prevOld = -1, prevNew = -1;
    Out body = new Out();
    for (int f = 0; f < count; f++) {
      int type = data[p++] & 0xff;
      int delta;
      if (type <= 63) delta = type;
      else if (type <= 127) delta = type - 64;
      else if (type >= 247) {
        delta = u2(data, p);
        p += 2;
      } else throw new ClassFile.FormatException("reserved stack-map frame type " + type);
      int oldOffset = prevOld + delta + 1;
      if (oldOffset >= indexAt.length || indexAt[oldOffset] < 0)
        throw new ClassFile.FormatException("stack-map frame at " + oldOffset + " is not at an instruction");
      int newOffset = target[indexAt[oldOffset]];
      int newDelta = newOffset - prevNew - 1;
      prevOld = oldOffset;
      prevNew = newOffset;
      if (type <= 63 || type == 251) {
        if (newDelta <= 63) body.u1(newDelta);
        else {
          body.u1(251);
          body.u2(newDelta);
        }
      } else if (type <= 127 || type == 247) {
        if (newDelta <= 63) body.u1(64 + newDelta);
        else {
          body.u1(247);
          body.u2(newDelta);
        }
        p = vtypes(data, p, 1, body, indexAt, at);
      } else if (type <= 250) {
        body.u1(type);
        body.u2(newDelta);
      } else if (type <= 254) {
        body.u1(type);
        body.u2(newDelta);
        p = vtypes(data, p, type - 251, body, indexAt, at);
      } else {
        body.u1(255);
        body.u2(newDelta);
        int locals = u2(data, p);
        body.u2(locals);
        p = vtypes(data, p + 2, locals, body, indexAt, at);
        int stack = u2(data, p);
        body.u2(stack);
        p = vtypes(data, p + 2, stack, body, indexAt, at);
      }
      written++;
    }
    if (handlerAt >= 0) {
      body.u1(255);
      body.u2(handlerAt - prevNew - 1);
      body.u2(0);
      body.u2(1);
      body.u1(7);
      body.u2(throwable);
      written++;
    }
    o.u2(written);
    o.bytes(body.done());
    return o.done();
  }

  private static int vtypes(byte[] data, int p, int count, Out body, int[] indexAt, int[] at) throws ClassFile.FormatException {
    for (int i = 0; i < count; i++) {
      int tag = data[p++] & 0xff;
      body.u1(tag);
      if (tag == 7) {
        body.u2(u2(data, p));
        p += 2;
      } else if (tag == 8) {
        int offset = u2(data, p);
        if (offset >= indexAt.length || indexAt[offset] < 0) throw new ClassFile.FormatException("uninitialized(" + offset + ") is not at an instruction");
        body.u2(at[indexAt[offset]]);
        p += 2;
      } else if (tag > 8) {
        throw new ClassFile.FormatException("bad verification type tag " + tag);
      }
    }
    return p;
  }

  private static byte[] lines(byte[] data, int[] indexAt, int[] target) throws ClassFile.FormatException {
    int count = u2(data, 0);
    Out o = new Out();
    o.u2(count);
    for (int i = 0, p = 2; i < count; i++, p += 4) {
      int start = u2(data, p);
      if (start >= indexAt.length || indexAt[start] < 0) throw new ClassFile.FormatException("line number at " + start + " is not at an instruction");
      o.u2(target[indexAt[start]]);
      o.u2(u2(data, p + 2));
    }
    return o.done();
  }

  private static byte[] locals(byte[] data, int[] indexAt, int[] target) throws ClassFile.FormatException {
    int count = u2(data, 0);
    Out o = new Out();
    o.u2(count);
    for (int i = 0, p = 2; i < count; i++, p += 10) {
      int start = u2(data, p), end = start + u2(data, p + 2);
      if (start >= indexAt.length || end >= indexAt.length || indexAt[start] < 0 || indexAt[end] < 0)
        throw new ClassFile.FormatException("local variable range " + start + "–" + end + " is not at instructions");
      int ns = target[indexAt[start]], ne = target[indexAt[end]];
      o.u2(ns);
      o.u2(ne - ns);
      o.u2(u2(data, p + 4));
      o.u2(u2(data, p + 6));
      o.u2(u2(data, p + 8));
    }
    return o.done();
  }
}
