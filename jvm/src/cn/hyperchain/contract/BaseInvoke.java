package cn.hyperchain.contract;

/**
 * Hyperchain HVM: an InvokeBean, a class a caller sends with its transaction to run against a
 * contract: {@link #invoke} gets the contract as its interface `I` and may call several of its
 * methods in one transaction. Its fields come from the payload's JSON. Keel's implementation
 * (docs/jvm.md §10).
 */
public interface BaseInvoke<T, I extends BaseContractInterface> {
  T invoke(I contract);
}
