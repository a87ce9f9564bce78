package cn.hyperchain.annotations;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Hyperchain HVM: a field of the main contract class kept in the ledger. Before each call the
 * engine sets it from the ledger (a field never stored keeps its initial value); after a call that
 * succeeded it stores the field again when its JSON changed. A {@code HyperMap} field is not
 * stored whole: its entries are, one ledger key each. Keel's implementation of Hyperchain's API
 * (docs/jvm.md, "Hyperchain's Java APIs").
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface StoreField {
  /** HVM's hint for a field declared with an interface type (`Map` holding a `HyperMap`); Keel reads the value's class instead. */
  String type() default "";
}
