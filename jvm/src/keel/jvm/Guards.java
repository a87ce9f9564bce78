package keel.jvm;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collections;
import java.util.List;

/**
 * JDK calls whose work grows with an argument, redirected here by the Instrumenter so that their
 * cost is charged (steps and memory) before they run. Everything else a contract calls in the JDK
 * does work bounded by data the contract built step by step.
 */
public final class Guards {
  private Guards() {}

  /** largest number a guarded BigInteger/BigDecimal operation may produce, in bits */
  static final long MAX_BITS = 1 << 20;

  private static void bits(long bits, String what) {
    if (bits > MAX_BITS) throw new ArithmeticException(what + ": the result would exceed " + MAX_BITS + " bits");
    Meter.allocate(bits / 8 + 16);
    // multiplication work grows faster than the size
    Meter.charge((bits / 64) * (bits / 64) / 64);
  }

  public static BigInteger pow(BigInteger base, int exponent) {
    if (exponent > 0) bits((long) base.bitLength() * exponent, "BigInteger.pow");
    return base.pow(exponent);
  }

  public static BigInteger shiftLeft(BigInteger value, int n) {
    if (n > 0) bits((long) value.bitLength() + n, "BigInteger.shiftLeft");
    return value.shiftLeft(n);
  }

  public static BigDecimal pow(BigDecimal base, int exponent) {
    if (exponent > 0) bits((long) base.unscaledValue().bitLength() * exponent, "BigDecimal.pow");
    return base.pow(exponent);
  }

  public static String repeat(String s, int count) {
    if (count > 0) Meter.allocate((long) s.length() * count * 2 + 16);
    return s.repeat(count);
  }

  public static <T> List<T> nCopies(int count, T value) {
    // the list itself is small, but whatever copies it from here is as long as `count`
    if (count > 0) Meter.allocate(8L * count);
    return Collections.nCopies(count, value);
  }
}
