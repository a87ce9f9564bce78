package bank;

import cn.hyperchain.annotations.StoreField;
import cn.hyperchain.contract.BaseContract;
import cn.hyperchain.core.HyperList;
import cn.hyperchain.core.HyperMap;
import cn.hyperchain.core.Logger;
import cn.hyperchain.core.NestedMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A bank written the way Hyperchain's HVM manual shows: @StoreField fields, a HyperMap of beans, events. */
public class Bank extends BaseContract implements IBank {
  private static final Logger logger = Logger.getLogger(Bank.class);

  @StoreField
  public String name = "unnamed";

  @StoreField
  public String owner;

  @StoreField
  public HyperMap<String, Account> accounts = new HyperMap<>();

  @StoreField
  public HyperList<String> history = new HyperList<>();

  /** what each holder sent to each other holder: a NestedMap of NestedMaps */
  @StoreField
  public NestedMap<String, NestedMap<String, Long>> sent = new NestedMap<>();

  @Override
  public void onInit() {
    name = "Bank of " + getSender().substring(0, 8);
    owner = getSender();
  }

  @Override
  public boolean open(String holder, long deposit) {
    if (accounts.containsKey(holder)) throw new IllegalStateException("the account " + holder + " exists");
    if (!getSender().equals(owner)) throw new IllegalStateException("only the owner opens accounts");
    accounts.put(holder, new Account(holder, deposit));
    event(accounts.get(holder), "Opened", holder);
    logger.info("opened " + holder);
    return true;
  }

  @Override
  public long balance(String holder) {
    Account a = accounts.get(holder);
    return a == null ? 0 : a.getBalance();
  }

  @Override
  public boolean transfer(String from, String to, long amount) {
    Account source = accounts.get(from);
    Account target = accounts.get(to);
    if (source == null || target == null) throw new IllegalArgumentException("no such account");
    if (amount <= 0 || source.getBalance() < amount) throw new IllegalStateException("insufficient balance");
    source.add(-amount);
    target.add(amount);
    history.add(from + "->" + to + ":" + amount);
    NestedMap<String, Long> row = sent.get(from);
    if (row == null) {
      row = new NestedMap<>();
      sent.put(from, row);
    }
    Long before = row.get(to);
    row.put(to, (before == null ? 0 : before) + amount);
    event(from + "->" + to + ":" + amount, "Transferred", from, to);
    return true;
  }

  @Override
  public Account account(String holder) {
    return accounts.get(holder);
  }

  @Override
  public List<String> holders() {
    return new ArrayList<>(accounts.keySet());
  }

  @Override
  public List<String> history(int last) {
    int n = history.size();
    return new ArrayList<>(history.subList(Math.max(0, n - last), n));
  }

  @Override
  public Map<String, Long> sentBy(String holder) {
    Map<String, Long> out = new TreeMap<>();
    NestedMap<String, Long> row = sent.get(holder);
    if (row != null) for (Map.Entry<String, Long> e : row.entrySet()) out.put(e.getKey(), e.getValue());
    return out;
  }

  @Override
  public void forget(String holder) {
    if (!getSender().equals(owner)) throw new IllegalStateException("only the owner forgets");
    sent.remove(holder);
  }

  @Override
  public String name() {
    return name;
  }

  /** Public but on no interface: not callable. */
  public void drain(String holder) {
    accounts.remove(holder);
  }
}
