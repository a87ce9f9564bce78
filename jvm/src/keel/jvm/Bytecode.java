package keel.jvm;

import java.util.ArrayList;
import java.util.List;

/** Decoding of one method's instructions (JVMS 6.5): offsets, lengths, branch targets. */
final class Bytecode {
  static final int ICONST_0 = 0x03, BIPUSH = 0x10, SIPUSH = 0x11, LDC = 0x12, LDC_W = 0x13, LDC2_W = 0x14, DUP = 0x59, DUP2 = 0x5c, IFEQ = 0x99,
      IF_ACMPNE = 0xa6, GOTO = 0xa7, JSR = 0xa8, RET = 0xa9, TABLESWITCH = 0xaa, LOOKUPSWITCH = 0xab, IRETURN = 0xac,
      RETURN = 0xb1, GETSTATIC = 0xb2, PUTSTATIC = 0xb3, GETFIELD = 0xb4, PUTFIELD = 0xb5, INVOKEVIRTUAL = 0xb6,
      INVOKESPECIAL = 0xb7, INVOKESTATIC = 0xb8, INVOKEINTERFACE = 0xb9, INVOKEDYNAMIC = 0xba, NEW = 0xbb, NEWARRAY = 0xbc,
      ANEWARRAY = 0xbd, ATHROW = 0xbf, CHECKCAST = 0xc0, INSTANCEOF = 0xc1, MONITORENTER = 0xc2, MONITOREXIT = 0xc3, WIDE = 0xc4,
      MULTIANEWARRAY = 0xc5, IFNULL = 0xc6, IFNONNULL = 0xc7, GOTO_W = 0xc8, JSR_W = 0xc9;

  static final class Insn {
    final int offset, opcode, length;
    /** absolute branch targets (default first for switches) */
    final int[] targets;

    Insn(int offset, int opcode, int length, int[] targets) {
      this.offset = offset;
      this.opcode = opcode;
      this.length = length;
      this.targets = targets;
    }

    boolean isBranch() {
      return targets.length > 0;
    }

    /** control never falls through to the next instruction */
    boolean endsFlow() {
      return opcode == GOTO || opcode == GOTO_W || opcode == TABLESWITCH || opcode == LOOKUPSWITCH || opcode == ATHROW
          || (opcode >= IRETURN && opcode <= RETURN);
    }
  }

  static int u2(byte[] c, int p) {
    return ((c[p] & 0xff) << 8) | (c[p + 1] & 0xff);
  }

  static int s2(byte[] c, int p) {
    return (short) u2(c, p);
  }

  static int s4(byte[] c, int p) {
    return ((c[p] & 0xff) << 24) | ((c[p + 1] & 0xff) << 16) | ((c[p + 2] & 0xff) << 8) | (c[p + 3] & 0xff);
  }

  private static final int[] NONE = new int[0];

  static List<Insn> decode(byte[] code) throws ClassFile.FormatException {
    List<Insn> out = new ArrayList<>();
    int p = 0;
    while (p < code.length) {
      int op = code[p] & 0xff;
      int length;
      int[] targets = NONE;
      if (op <= 0x0f || (op >= 0x1a && op <= 0x35) || (op >= 0x3b && op <= 0x83) || (op >= 0x85 && op <= 0x98)
          || (op >= IRETURN && op <= RETURN) || op == 0xbe || op == ATHROW || op == MONITORENTER || op == MONITOREXIT) {
        length = 1;
      } else if (op == BIPUSH || op == LDC || (op >= 0x15 && op <= 0x19) || (op >= 0x36 && op <= 0x3a) || op == RET
          || op == NEWARRAY) {
        length = 2;
      } else if (op == SIPUSH || op == LDC_W || op == LDC2_W || op == 0x84 || (op >= GETSTATIC && op <= INVOKESTATIC) || op == NEW
          || op == ANEWARRAY || op == CHECKCAST || op == INSTANCEOF) {
        length = 3;
      } else if ((op >= IFEQ && op <= JSR) || op == IFNULL || op == IFNONNULL) {
        length = 3;
        need(code, p, 3);
        targets = new int[] {p + s2(code, p + 1)};
      } else if (op == GOTO_W || op == JSR_W) {
        length = 5;
        need(code, p, 5);
        targets = new int[] {p + s4(code, p + 1)};
      } else if (op == INVOKEINTERFACE || op == INVOKEDYNAMIC) {
        length = 5;
      } else if (op == MULTIANEWARRAY) {
        length = 4;
      } else if (op == WIDE) {
        need(code, p, 2);
        length = (code[p + 1] & 0xff) == 0x84 ? 6 : 4;
      } else if (op == TABLESWITCH) {
        int q = (p + 4) & ~3;
        need(code, q, 12);
        int low = s4(code, q + 4), high = s4(code, q + 8);
        if (high < low || (long) high - low > 65535) throw new ClassFile.FormatException("bad tableswitch at " + p);
        int n = high - low + 1;
        need(code, q, 12 + 4 * n);
        targets = new int[n + 1];
        targets[0] = p + s4(code, q);
        for (int i = 0; i < n; i++) targets[i + 1] = p + s4(code, q + 12 + 4 * i);
        length = q - p + 12 + 4 * n;
      } else if (op == LOOKUPSWITCH) {
        int q = (p + 4) & ~3;
        need(code, q, 8);
        int n = s4(code, q + 4);
        if (n < 0 || n > 65535) throw new ClassFile.FormatException("bad lookupswitch at " + p);
        need(code, q, 8 + 8 * n);
        targets = new int[n + 1];
        targets[0] = p + s4(code, q);
        for (int i = 0; i < n; i++) targets[i + 1] = p + s4(code, q + 8 + 8 * i + 4);
        length = q - p + 8 + 8 * n;
      } else {
        throw new ClassFile.FormatException("unknown opcode 0x" + Integer.toHexString(op) + " at " + p);
      }
      need(code, p, length);
      out.add(new Insn(p, op, length, targets));
      p += length;
    }
    return out;
  }

  private static void need(byte[] code, int p, int n) throws ClassFile.FormatException {
    if (p + n > code.length) throw new ClassFile.FormatException("instruction at " + p + " runs past the end of the code");
  }

  static String name(int op) {
    switch (op) {
      case MONITORENTER:
        return "monitorenter";
      case MONITOREXIT:
        return "monitorexit";
      case JSR:
        return "jsr";
      case JSR_W:
        return "jsr_w";
      case RET:
        return "ret";
      case GETSTATIC:
        return "getstatic";
      case PUTSTATIC:
        return "putstatic";
      case GETFIELD:
        return "getfield";
      case PUTFIELD:
        return "putfield";
      case INVOKEVIRTUAL:
        return "invokevirtual";
      case INVOKESPECIAL:
        return "invokespecial";
      case INVOKESTATIC:
        return "invokestatic";
      case INVOKEINTERFACE:
        return "invokeinterface";
      case INVOKEDYNAMIC:
        return "invokedynamic";
      case NEW:
        return "new";
      case ANEWARRAY:
        return "anewarray";
      case CHECKCAST:
        return "checkcast";
      case INSTANCEOF:
        return "instanceof";
      case MULTIANEWARRAY:
        return "multianewarray";
      case LDC:
        return "ldc";
      case LDC_W:
        return "ldc_w";
      case LDC2_W:
        return "ldc2_w";
      default:
        return "opcode 0x" + Integer.toHexString(op);
    }
  }
}
