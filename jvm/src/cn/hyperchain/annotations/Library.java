package cn.hyperchain.annotations;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Hyperchain HVM: marks a {@code BaseContract.CrossCall} field whose {@code getCrossContract()}
 * gives the contract at {@link #address} as a library instance: whatever it writes or emits is dropped, even when it succeeds. Keel's implementation of Hyperchain's API
 * (docs/jvm.md §10, cross-contract calls).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Library {
  /** the called contract's address (0x and 40 hex digits) */
  String address() default "";
}
