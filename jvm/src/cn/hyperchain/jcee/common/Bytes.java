package cn.hyperchain.jcee.common;

import java.nio.charset.StandardCharsets;

/**
 * Hyperchain 1.x's value encoding: numbers, booleans and characters as the UTF-8 of their decimal
 * (Java) text, so 42 is the bytes of "42"; the readers parse that text back.
 */
public final class Bytes {
  private Bytes() {}

  public static byte[] toByteArray(String value) {
    return value.getBytes(StandardCharsets.UTF_8);
  }

  public static byte[] toByteArray(int value) {
    return toByteArray(Integer.toString(value));
  }

  public static byte[] toByteArray(long value) {
    return toByteArray(Long.toString(value));
  }

  public static byte[] toByteArray(short value) {
    return toByteArray(Short.toString(value));
  }

  public static byte[] toByteArray(double value) {
    return toByteArray(Double.toString(value));
  }

  public static byte[] toByteArray(float value) {
    return toByteArray(Float.toString(value));
  }

  public static byte[] toByteArray(boolean value) {
    return toByteArray(Boolean.toString(value));
  }

  public static byte[] toByteArray(char value) {
    return toByteArray(Character.toString(value));
  }

  public static String toString(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  public static int toInt(byte[] bytes) {
    return Integer.parseInt(toString(bytes).trim());
  }

  public static long toLong(byte[] bytes) {
    return Long.parseLong(toString(bytes).trim());
  }

  public static short toShort(byte[] bytes) {
    return Short.parseShort(toString(bytes).trim());
  }

  public static double toDouble(byte[] bytes) {
    return Double.parseDouble(toString(bytes).trim());
  }

  public static float toFloat(byte[] bytes) {
    return Float.parseFloat(toString(bytes).trim());
  }

  public static boolean toBoolean(byte[] bytes) {
    String text = toString(bytes).trim();
    if (text.equals("true")) return true;
    if (text.equals("false")) return false;
    throw new IllegalArgumentException("not a boolean: " + text);
  }

  public static char toChar(byte[] bytes) {
    String text = toString(bytes);
    if (text.length() != 1) throw new IllegalArgumentException("not one character: " + text);
    return text.charAt(0);
  }
}
