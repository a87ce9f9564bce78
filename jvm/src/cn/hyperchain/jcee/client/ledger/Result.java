package cn.hyperchain.jcee.client.ledger;

import cn.hyperchain.jcee.common.Bytes;
import keel.jvm.Beans;

/** Hyperchain 1.x: a value read from the ledger; empty when the key holds nothing. */
public class Result {
  private final byte[] value;

  public Result(byte[] value) {
    this.value = value == null ? new byte[0] : value;
  }

  public boolean isEmpty() {
    return value.length == 0;
  }

  public byte[] toBytes() {
    return value.clone();
  }

  @Override
  public String toString() {
    return Bytes.toString(value);
  }

  private byte[] present() {
    if (isEmpty()) throw new IllegalStateException("the ledger holds no value here");
    return value;
  }

  public int toInt() {
    return Bytes.toInt(present());
  }

  public long toLong() {
    return Bytes.toLong(present());
  }

  public short toShort() {
    return Bytes.toShort(present());
  }

  public double toDouble() {
    return Bytes.toDouble(present());
  }

  public float toFloat() {
    return Bytes.toFloat(present());
  }

  public boolean toBoolean() {
    return Bytes.toBoolean(present());
  }

  public char toChar() {
    return Bytes.toChar(present());
  }

  /** A value put as an object (JSON) read back as `type`. */
  public <T> T toObject(Class<T> type) {
    return type.cast(Beans.fromJson(toString(), type));
  }
}
