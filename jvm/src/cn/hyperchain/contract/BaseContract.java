package cn.hyperchain.contract;

import keel.jvm.Beans;
import keel.jvm.CrossCalls;
import keel.jvm.ExtraPath;
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

  /** Who called the contract (lower-case 0x hex): the transaction's signer, or the calling contract in a cross-contract call. */
  public final String getSender() {
    return Host.context("sender");
  }

  /** The account that signed the transaction (lower-case 0x hex), in a cross-contract call too. */
  public final String getOrigin() {
    String origin = Host.context("origin");
    return origin.isEmpty() ? Host.context("sender") : origin;
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
   * The value at `path` in the transaction's `extra` (JSON), in the path syntax of HVM's manual
   * (docs/jvm.md §10): a String as itself, any other value as its JSON; null when the path finds
   * nothing.
   */
  public String getValueFromExtra(String path) {
    return ExtraPath.find(Host.context("extra"), path, false);
  }

  /** The same for transaction `txHash`: on Keel the running one only ("current" or its hash). */
  public String getValueFromExtra(String txHash, String path) {
    return ExtraPath.find(extraOf(txHash), path, false);
  }

  /** The value at `path` in a transaction's extra as a `clazz` (read from its JSON); the running transaction only. */
  public <T> T getValueFromExtraInTx(Class<T> clazz, String txHash, String path) {
    if (clazz == String.class) return clazz.cast(getValueFromExtra(txHash, path));
    String json = ExtraPath.find(extraOf(txHash), path, true);
    return json == null ? null : clazz.cast(Beans.fromJson(json, clazz));
  }

  private static String extraOf(String txHash) {
    if (txHash == null || !(txHash.equals("current") || txHash.equalsIgnoreCase(Host.context("txHash"))))
      throw new UnsupportedOperationException("Keel reads the extra of the running transaction only (\"current\" or its hash), not of " + txHash);
    return Host.context("extra");
  }

  /**
   * Emits an event: a log of the receipt whose topics are keccak256 of `name`, then of each topic
   * (at most three), and whose data is `data` as UTF-8: a String as it is, anything else as JSON.
   */
  public final void event(Object data, String name, String... topics) {
    Host.emit(name, data instanceof String ? (String) data : Beans.toJson(data), topics);
  }

  /**
   * A field of the main class that reaches another contract (Hyperchain's cross-contract call):
   * marked {@code @Contract(address = …)} or {@code @Library(address = …)}, the engine sets its
   * address before each call (its private fields: nothing a contract could call); {@link #getCrossContract} gives the callee behind its interface.
   */
  public static final class CrossCall {
    private String crossAddress;
    private boolean isLibrary;

    public CrossCall() {}

    public String getCrossAddress() {
      return crossAddress;
    }

    public boolean isLibrary() {
      return isLibrary;
    }

    /**
     * The called contract as the caller's copy of its interface (the callee's interface must be in
     * the caller's jar too). Its functions run in this transaction: the callee's steps count against
     * its budget, a callee that throws leaves nothing and the caller gets a RuntimeException naming
     * the failure. Calls go one level deep.
     */
    @SuppressWarnings("unchecked")
    public final <T extends BaseContractInterface> T getCrossContract() {
      return (T) CrossCalls.contract(crossAddress, isLibrary);
    }
  }
}
