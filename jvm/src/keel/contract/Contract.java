package keel.contract;

import keel.jvm.Host;

/**
 * The base class of a Java contract. A new instance serves each call, so instance fields start
 * afresh every time: the {@link #ledger} is the only state that lasts. The public methods a
 * subclass declares are its functions, called by name with their arguments converted from the
 * transaction's payload; what a function returns becomes the receipt's `ret`.
 *
 * Writes and events of a call take effect only when the call returns normally: a call that
 * throws (or runs out of its step budget) leaves no trace.
 */
public abstract class Contract {
  /** the contract's key-value store on the chain */
  protected final Ledger ledger = Ledger.INSTANCE;

  protected Contract() {}

  /**
   * Emits an event: a log in the transaction's receipt whose first topic is keccak256 of `name`,
   * followed by keccak256 of each of `topics` (at most 3), with `data` as UTF-8. Logs are found by
   * sub_getLogs and pushed to subscriptions like those of EVM contracts.
   */
  protected final void emit(String name, String data, String... topics) {
    Host.emit(name, data == null ? "" : data, topics);
  }

  /** Fails the call with `message` (INVOKE_CONTRACT_FAILED) unless `condition` holds. */
  protected final void require(boolean condition, String message) {
    if (!condition) throw new ContractException(message);
  }

  /** The account that signed the transaction (lower-case 0x hex). */
  protected final String sender() {
    return Host.context("sender");
  }

  /** This contract's address (lower-case 0x hex). */
  protected final String self() {
    return Host.context("self");
  }

  protected final String txHash() {
    return Host.context("txHash");
  }

  /** The number of the block the transaction runs in. */
  protected final long blockNumber() {
    return Long.parseLong(Host.context("blockNumber"));
  }

  /** The block's time in nanoseconds (the same on every node). */
  protected final long timestamp() {
    return Long.parseLong(Host.context("timestamp"));
  }
}
