package keel.jvm;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal class-file model (JVMS chapter 4): the constant pool parsed into entries, fields and
 * methods with their attributes kept as raw bytes, and a writer. Enough for the deploy-time scan
 * (every class, member and descriptor a class names) and for rewriting Code attributes
 * (Instrumenter). Our own instead of ASM: the JDK's internal copy is not a supported API and is
 * gone from newer JDKs, and a download is not wanted.
 */
final class ClassFile {
  static final int UTF8 = 1, INTEGER = 3, FLOAT = 4, LONG = 5, DOUBLE = 6, CLASS = 7, STRING = 8, FIELDREF = 9, METHODREF = 10,
      INTERFACE_METHODREF = 11, NAME_AND_TYPE = 12, METHOD_HANDLE = 15, METHOD_TYPE = 16, DYNAMIC = 17, INVOKE_DYNAMIC = 18,
      MODULE = 19, PACKAGE = 20;

  static final int ACC_PUBLIC = 0x0001, ACC_STATIC = 0x0008, ACC_FINAL = 0x0010, ACC_SYNCHRONIZED = 0x0020, ACC_NATIVE = 0x0100,
      ACC_INTERFACE = 0x0200, ACC_ABSTRACT = 0x0400, ACC_ENUM = 0x4000, ACC_MODULE = 0x8000;

  /** One constant-pool entry; `a`/`b` are the indexes (or kind/index) it refers to, `value` the payload. */
  static final class Entry {
    final int tag;
    final int a, b;
    final Object value;

    Entry(int tag, int a, int b, Object value) {
      this.tag = tag;
      this.a = a;
      this.b = b;
      this.value = value;
    }
  }

  static final class Attribute {
    final String name;
    byte[] data;

    Attribute(String name, byte[] data) {
      this.name = name;
      this.data = data;
    }
  }

  static final class Member {
    final int access;
    final String name, descriptor;
    final List<Attribute> attributes;

    Member(int access, String name, String descriptor, List<Attribute> attributes) {
      this.access = access;
      this.name = name;
      this.descriptor = descriptor;
      this.attributes = attributes;
    }

    Attribute attribute(String wanted) {
      for (Attribute attribute : attributes) if (attribute.name.equals(wanted)) return attribute;
      return null;
    }
  }

  int minor, major;
  /** index 0 unused; the second slot of a long/double is null */
  final List<Entry> pool = new ArrayList<>();
  int access;
  String name, superName;
  final List<String> interfaces = new ArrayList<>();
  final List<Member> fields = new ArrayList<>();
  final List<Member> methods = new ArrayList<>();
  final List<Attribute> attributes = new ArrayList<>();
  private final Map<String, Integer> added = new HashMap<>();

  static final class FormatException extends Exception {
    FormatException(String message) {
      super(message);
    }
  }

  // ---- reading ----

  private static final class In {
    final byte[] b;
    int p;

    In(byte[] b) {
      this.b = b;
    }

    int u1() throws FormatException {
      need(1);
      return b[p++] & 0xff;
    }

    int u2() throws FormatException {
      need(2);
      int v = ((b[p] & 0xff) << 8) | (b[p + 1] & 0xff);
      p += 2;
      return v;
    }

    int s4() throws FormatException {
      need(4);
      int v = ((b[p] & 0xff) << 24) | ((b[p + 1] & 0xff) << 16) | ((b[p + 2] & 0xff) << 8) | (b[p + 3] & 0xff);
      p += 4;
      return v;
    }

    byte[] bytes(int n) throws FormatException {
      if (n < 0) throw new FormatException("negative length");
      need(n);
      byte[] out = new byte[n];
      System.arraycopy(b, p, out, 0, n);
      p += n;
      return out;
    }

    void need(int n) throws FormatException {
      if (p + n > b.length) throw new FormatException("truncated class file");
    }
  }

  static ClassFile parse(byte[] bytes) throws FormatException {
    In in = new In(bytes);
    if (in.s4() != 0xCAFEBABE) throw new FormatException("not a class file (bad magic)");
    ClassFile cf = new ClassFile();
    cf.minor = in.u2();
    cf.major = in.u2();
    int count = in.u2();
    cf.pool.add(null);
    for (int i = 1; i < count; i++) {
      int tag = in.u1();
      switch (tag) {
        case UTF8:
          cf.pool.add(new Entry(tag, 0, 0, decodeModifiedUtf8(in.bytes(in.u2()))));
          break;
        case INTEGER:
        case FLOAT:
          cf.pool.add(new Entry(tag, 0, 0, in.s4()));
          break;
        case LONG:
        case DOUBLE:
          cf.pool.add(new Entry(tag, 0, 0, ((long) in.s4() << 32) | (in.s4() & 0xffffffffL)));
          cf.pool.add(null);
          i++;
          break;
        case CLASS:
        case STRING:
        case METHOD_TYPE:
        case MODULE:
        case PACKAGE:
          cf.pool.add(new Entry(tag, in.u2(), 0, null));
          break;
        case FIELDREF:
        case METHODREF:
        case INTERFACE_METHODREF:
        case NAME_AND_TYPE:
        case DYNAMIC:
        case INVOKE_DYNAMIC:
          cf.pool.add(new Entry(tag, in.u2(), in.u2(), null));
          break;
        case METHOD_HANDLE:
          cf.pool.add(new Entry(tag, in.u1(), in.u2(), null));
          break;
        default:
          throw new FormatException("unknown constant-pool tag " + tag + " at entry " + i);
      }
    }
    cf.access = in.u2();
    cf.name = cf.className(in.u2());
    int superIndex = in.u2();
    cf.superName = superIndex == 0 ? null : cf.className(superIndex);
    int interfaceCount = in.u2();
    for (int i = 0; i < interfaceCount; i++) cf.interfaces.add(cf.className(in.u2()));
    readMembers(cf, in, cf.fields);
    readMembers(cf, in, cf.methods);
    readAttributes(cf, in, cf.attributes);
    if (in.p != bytes.length) throw new FormatException("trailing bytes after the class file");
    return cf;
  }

  private static void readMembers(ClassFile cf, In in, List<Member> into) throws FormatException {
    int count = in.u2();
    for (int i = 0; i < count; i++) {
      int access = in.u2();
      String name = cf.utf8(in.u2());
      String descriptor = cf.utf8(in.u2());
      List<Attribute> attributes = new ArrayList<>();
      readAttributes(cf, in, attributes);
      into.add(new Member(access, name, descriptor, attributes));
    }
  }

  private static void readAttributes(ClassFile cf, In in, List<Attribute> into) throws FormatException {
    int count = in.u2();
    for (int i = 0; i < count; i++) {
      String name = cf.utf8(in.u2());
      into.add(new Attribute(name, in.bytes(in.s4())));
    }
  }

  /** The JVM's modified UTF-8 (JVMS 4.4.7): like UTF-8 but NUL as two bytes and supplementary characters as surrogate pairs. */
  static String decodeModifiedUtf8(byte[] b) throws FormatException {
    StringBuilder sb = new StringBuilder(b.length);
    for (int i = 0; i < b.length; ) {
      int c = b[i] & 0xff;
      if (c < 0x80 && c != 0) {
        sb.append((char) c);
        i++;
      } else if ((c & 0xe0) == 0xc0 && i + 1 < b.length) {
        sb.append((char) (((c & 0x1f) << 6) | (b[i + 1] & 0x3f)));
        i += 2;
      } else if ((c & 0xf0) == 0xe0 && i + 2 < b.length) {
        sb.append((char) (((c & 0x0f) << 12) | ((b[i + 1] & 0x3f) << 6) | (b[i + 2] & 0x3f)));
        i += 3;
      } else {
        throw new FormatException("malformed modified UTF-8 in the constant pool");
      }
    }
    return sb.toString();
  }

  static byte[] encodeModifiedUtf8(String s) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c != 0 && c < 0x80) out.write(c);
      else if (c < 0x800) {
        out.write(0xc0 | (c >> 6));
        out.write(0x80 | (c & 0x3f));
      } else {
        out.write(0xe0 | (c >> 12));
        out.write(0x80 | ((c >> 6) & 0x3f));
        out.write(0x80 | (c & 0x3f));
      }
    }
    return out.toByteArray();
  }

  // ---- constant-pool access ----

  /** Whether any name or descriptor of the constant pool names the class `internalName`. */
  boolean names(String internalName) {
    String inDescriptor = "L" + internalName + ";";
    for (Entry e : pool)
      if (e != null && e.tag == UTF8 && (e.value.equals(internalName) || ((String) e.value).contains(inDescriptor))) return true;
    return false;
  }

  Entry entry(int index) throws FormatException {
    if (index <= 0 || index >= pool.size() || pool.get(index) == null) throw new FormatException("bad constant-pool index " + index);
    return pool.get(index);
  }

  Entry entry(int index, int tag) throws FormatException {
    Entry e = entry(index);
    if (e.tag != tag) throw new FormatException("constant-pool entry " + index + " has tag " + e.tag + ", expected " + tag);
    return e;
  }

  String utf8(int index) throws FormatException {
    return (String) entry(index, UTF8).value;
  }

  String className(int index) throws FormatException {
    return utf8(entry(index, CLASS).a);
  }

  /** {owner, name, descriptor} of a Fieldref / Methodref / InterfaceMethodref. */
  String[] memberRef(int index) throws FormatException {
    Entry e = entry(index);
    if (e.tag != FIELDREF && e.tag != METHODREF && e.tag != INTERFACE_METHODREF)
      throw new FormatException("constant-pool entry " + index + " is not a member reference");
    Entry nat = entry(e.b, NAME_AND_TYPE);
    return new String[] {className(e.a), utf8(nat.a), utf8(nat.b)};
  }

  /** {name, descriptor} of a NameAndType. */
  String[] nameAndType(int index) throws FormatException {
    Entry nat = entry(index, NAME_AND_TYPE);
    return new String[] {utf8(nat.a), utf8(nat.b)};
  }

  private int add(Entry e, String key) {
    Integer known = added.get(key);
    if (known != null) return known;
    pool.add(e);
    int index = pool.size() - 1;
    added.put(key, index);
    return index;
  }

  int addUtf8(String s) {
    return add(new Entry(UTF8, 0, 0, s), "U" + s);
  }

  int addClass(String internalName) {
    int n = addUtf8(internalName);
    return add(new Entry(CLASS, n, 0, null), "C" + internalName);
  }

  int addMethodref(String owner, String name, String descriptor) {
    int c = addClass(owner);
    int nat = add(new Entry(NAME_AND_TYPE, addUtf8(name), addUtf8(descriptor), null), "N" + name + ":" + descriptor);
    return add(new Entry(METHODREF, c, nat, null), "M" + owner + "." + name + descriptor);
  }

  /** a dynamic call site of the same bootstrap method with another name and type */
  int addInvokeDynamic(int bootstrap, String name, String descriptor) {
    int nat = add(new Entry(NAME_AND_TYPE, addUtf8(name), addUtf8(descriptor), null), "N" + name + ":" + descriptor);
    return add(new Entry(INVOKE_DYNAMIC, bootstrap, nat, null), "I" + bootstrap + ":" + name + descriptor);
  }

  // ---- writing ----

  byte[] write() {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeInt(0xCAFEBABE);
      out.writeShort(minor);
      out.writeShort(major);
      out.writeShort(pool.size());
      for (int i = 1; i < pool.size(); i++) {
        Entry e = pool.get(i);
        if (e == null) continue;
        out.writeByte(e.tag);
        switch (e.tag) {
          case UTF8:
            byte[] utf = encodeModifiedUtf8((String) e.value);
            out.writeShort(utf.length);
            out.write(utf);
            break;
          case INTEGER:
          case FLOAT:
            out.writeInt((Integer) e.value);
            break;
          case LONG:
          case DOUBLE:
            out.writeLong((Long) e.value);
            break;
          case CLASS:
          case STRING:
          case METHOD_TYPE:
          case MODULE:
          case PACKAGE:
            out.writeShort(e.a);
            break;
          case METHOD_HANDLE:
            out.writeByte(e.a);
            out.writeShort(e.b);
            break;
          default:
            out.writeShort(e.a);
            out.writeShort(e.b);
        }
      }
      out.writeShort(access);
      out.writeShort(addClassIndex(name));
      out.writeShort(superName == null ? 0 : addClassIndex(superName));
      out.writeShort(interfaces.size());
      for (String i : interfaces) out.writeShort(addClassIndex(i));
      writeMembers(out, fields);
      writeMembers(out, methods);
      writeAttributes(out, attributes);
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Index of an existing CONSTANT_Class for `internalName` (this/super/interfaces always have one). */
  private int addClassIndex(String internalName) {
    for (int i = 1; i < pool.size(); i++) {
      Entry e = pool.get(i);
      if (e != null && e.tag == CLASS && internalName.equals(pool.get(e.a).value)) return i;
    }
    throw new IllegalStateException("no class entry for " + internalName);
  }

  private void writeMembers(DataOutputStream out, List<Member> members) throws IOException {
    out.writeShort(members.size());
    for (Member m : members) {
      out.writeShort(m.access);
      out.writeShort(utf8Index(m.name));
      out.writeShort(utf8Index(m.descriptor));
      writeAttributes(out, m.attributes);
    }
  }

  private void writeAttributes(DataOutputStream out, List<Attribute> attributes) throws IOException {
    out.writeShort(attributes.size());
    for (Attribute a : attributes) {
      out.writeShort(utf8Index(a.name));
      out.writeInt(a.data.length);
      out.write(a.data);
    }
  }

  private int utf8Index(String s) {
    for (int i = 1; i < pool.size(); i++) {
      Entry e = pool.get(i);
      if (e != null && e.tag == UTF8 && s.equals(e.value)) return i;
    }
    return addUtf8(s);
  }

  // ---- descriptors ----

  /** Every class named in a field or method descriptor (internal names; arrays reduced to their element class). */
  static List<String> classesInDescriptor(String descriptor) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < descriptor.length(); i++) {
      if (descriptor.charAt(i) == 'L') {
        int end = descriptor.indexOf(';', i);
        if (end < 0) break;
        out.add(descriptor.substring(i + 1, end));
        i = end;
      }
    }
    return out;
  }

  /** The element class of a CONSTANT_Class name that may be an array (`[[Ljava/lang/String;` → java/lang/String), or null for primitive arrays. */
  static String elementClass(String name) {
    if (!name.startsWith("[")) return name;
    int i = 0;
    while (i < name.length() && name.charAt(i) == '[') i++;
    if (i < name.length() && name.charAt(i) == 'L' && name.endsWith(";")) return name.substring(i + 1, name.length() - 1);
    return null;
  }

  static String dotted(String internalName) {
    return internalName.replace('/', '.');
  }

  static String utf8String(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
