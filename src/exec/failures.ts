/**
 * The failure texts a receipt or a refusal carries, shared by the executor and the Java engine
 * (which names a frozen callee of a cross-contract call the way the executor names a frozen target).
 */
export const JVM_UNAVAILABLE = 'JVM contracts are not enabled in this executor'
export const FROZEN_DETAIL = 'Try to invoke a frozen contract'
export const NOT_A_CONTRACT = 'not a contract'
export const BUDGET_EXHAUSTED = 'execution budget exhausted (time-out)'
