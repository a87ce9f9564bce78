package cn.hyperchain.annotations;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Hyperchain HVM: marks a {@code BaseContract.CrossCall} field whose {@code getCrossContract()}
 * gives the contract at {@link #address} as a contract instance: its writes and events are kept when the call succeeds. Keel's implementation of Hyperchain's API
 * (docs/jvm.md §10, cross-contract calls).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Contract {
  /** the called contract's address (0x and 40 hex digits) */
  String address() default "";
}
