package bank;

import cn.hyperchain.contract.BaseContractInterface;
import java.util.List;

/** The bank's functions: an HVM contract's callable methods are those of its BaseContractInterface interfaces. */
public interface IBank extends BaseContractInterface {
  boolean open(String holder, long deposit);

  long balance(String holder);

  boolean transfer(String from, String to, long amount);

  Account account(String holder);

  List<String> holders();

  String name();

  /** What `holder` sent to each other holder, in all. */
  java.util.Map<String, Long> sentBy(String holder);

  /** Drops what `holder` sent (the owner only). */
  void forget(String holder);

  /** The last `last` transfers, oldest first. */
  List<String> history(int last);
}
