package cn.hyperchain.contract;

import keel.jvm.Beans;
import keel.jvm.Host;

/**
 * Hyperchain HVM: the base class of a contract's main class. Keel's own implementation of
 * Hyperchain's API (docs/jvm.md, "Hyperchain's Java APIs"): the call's context, events, and
 * {@link #onInit}, run once in the deployment. A new instance serves every call; fields marked
 * {@code @StoreField} are loaded from the ledger before it and stored after it.
 */
public abstract class BaseContract implements BaseContractInterface {
  protected BaseContract() {}

  /** Runs once, in the deployment (after the {@code @StoreField} fields got their initial values). */
  public void onInit() {}

  /** The account that called the contract (lower-case 0x hex). Without cross-contract calls, the transaction's signer. */
  public final String getSender() {
    return Host.context("sender");
  }

  /** The account that signed the transaction (lower-case 0x hex). */
  public final String getOrigin() {
    return Host.context("sender");
  }

  public final String getTxHash() {
    return Host.context("txHash");
  }

  /** The block's time in nanoseconds (the same on every node). */
  public final long getBlockTimestamp() {
    return Long.parseLong(Host.context("timestamp"));
  }

  public final long getBlockNumber() {
    return Long.parseLong(Host.context("blockNumber"));
  }

  /** This contract's address (lower-case 0x hex). */
  public final String getContractAddress() {
    return Host.context("self");
  }

  /**
   * Emits an event: a log of the receipt whose topics are keccak256 of `name`, then of each topic
   * (at most three), and whose data is `data` as UTF-8: a String as it is, anything else as JSON.
   */
  public final void event(Object data, String name, String... topics) {
    Host.emit(name, data instanceof String ? (String) data : Beans.toJson(data), topics);
  }
}
