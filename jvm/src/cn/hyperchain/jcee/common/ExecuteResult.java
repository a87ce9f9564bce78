package cn.hyperchain.jcee.common;

/**
 * Hyperchain 1.x: what a contract function returns ({@code ContractTemplate.result(ok, value)}).
 * A result that is not a success fails the transaction with the value's text as its reason, and
 * nothing the call wrote stays; a success's value becomes the receipt's {@code ret} (docs/jvm.md).
 */
public class ExecuteResult {
  private final boolean success;
  private final Object result;

  public ExecuteResult(boolean success, Object result) {
    this.success = success;
    this.result = result;
  }

  public boolean isSuccess() {
    return success;
  }

  public Object getResult() {
    return result;
  }

  @Override
  public String toString() {
    return "ExecuteResult{success=" + success + ", result=" + result + "}";
  }
}
