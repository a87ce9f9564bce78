package cn.hyperchain.jcee.client.contract;

import cn.hyperchain.jcee.client.ledger.AbstractLedger;
import cn.hyperchain.jcee.common.ExecuteResult;
import java.util.List;
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

  /** The account that signed the transaction (lower-case 0x hex). */
  public String getInvoker() {
    return Host.context("sender");
  }

  public String getTxHash() {
    return Host.context("txHash");
  }

  public long getBlockNumber() {
    return Long.parseLong(Host.context("blockNumber"));
  }

  /** Cross-contract calls are not built on Keel: the call fails with this reason. */
  protected final ExecuteResult invokeContract(String namespace, String address, String function, List<String> args) {
    throw new UnsupportedOperationException("cross-contract calls (invokeContract) are not supported on Keel");
  }
}
