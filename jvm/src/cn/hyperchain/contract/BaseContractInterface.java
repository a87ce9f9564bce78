package cn.hyperchain.contract;

/**
 * Hyperchain HVM: the marker of a contract's interfaces. The methods of the interfaces extending
 * it that the main class implements are the contract's callable functions.
 */
public interface BaseContractInterface {}
