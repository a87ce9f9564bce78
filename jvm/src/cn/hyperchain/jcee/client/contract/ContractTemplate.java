package cn.hyperchain.jcee.client.contract;

import cn.hyperchain.jcee.client.ledger.AbstractLedger;
import cn.hyperchain.jcee.common.ExecuteResult;
import java.util.List;
import keel.jvm.CrossCalls;
import keel.jvm.Host;
import org.apache.log4j.Logger;

/**
 * Hyperchain 1.x: the base class of a contract's main class, Keel's implementation (docs/jvm.md,
 * "Hyperchain's Java APIs"). Its functions are methods {@code ExecuteResult f(List<String> args)}
 * of any access, called by name with the call's arguments as strings. A new instance serves every
 * call: the {@link #ledger} is the state that lasts.
 */
public abstract class ContractTemplate {
  protected final AbstractLedger ledger = AbstractLedger.instance();
  protected final Logger logger = Logger.getLogger(ContractTemplate.class);

  protected ContractTemplate() {}

  protected final ExecuteResult result(boolean success) {
    return new ExecuteResult(success, null);
  }

  protected final ExecuteResult result(boolean success, Object value) {
    return new ExecuteResult(success, value);
  }

  public AbstractLedger getLedger() {
    return ledger;
  }

  /** The contract's address (1.x's contract id). */
  public String getCid() {
    return Host.context("self");
  }

  /** Keel runs one namespace: "global". */
  public String getNamespace() {
    return "global";
  }

  /** Who called the contract (lower-case 0x hex): the signer, or the calling contract in a cross-contract call. */
  public String getInvoker() {
    return Host.context("sender");
  }

  public String getTxHash() {
    return Host.context("txHash");
  }

  public long getBlockNumber() {
    return Long.parseLong(Host.context("blockNumber"));
  }

  /**
   * What another contract's {@link #invokeContract} runs: 1.x's entry for cross-contract calls. A
   * contract overrides it to offer functions to others; this one does nothing and succeeds (1.x's).
   */
  protected ExecuteResult openInvoke(String funcName, List<String> args) {
    return result(true);
  }

  /**
   * Calls {@code openInvoke(function, args)} of the 1.x contract at {@code address} in this
   * transaction (namespace {@code global}); its result comes back as it is. A callee that fails
   * (returns result(false), or throws) leaves nothing, and anything wrong comes back as
   * {@code result(false, reason)}. Calls go one level deep (docs/jvm.md §10).
   */
  protected ExecuteResult invokeContract(String namespace, String address, String function, List<String> args) {
    return CrossCalls.invokeContract(namespace, address, function, args);
  }
}
