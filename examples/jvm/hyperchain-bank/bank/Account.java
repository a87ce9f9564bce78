package bank;

import java.util.Objects;

/** A bean kept in a HyperMap: a constructor without parameters, hashCode and equals (as HVM asks). */
public class Account {
  private String holder;
  private long balance;
  private int transfers;

  public Account() {}

  public Account(String holder, long balance) {
    this.holder = holder;
    this.balance = balance;
  }

  public String getHolder() {
    return holder;
  }

  public long getBalance() {
    return balance;
  }

  public void add(long amount) {
    balance += amount;
    transfers++;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Account)) return false;
    Account a = (Account) o;
    return Objects.equals(holder, a.holder) && balance == a.balance && transfers == a.transfers;
  }

  @Override
  public int hashCode() {
    return Objects.hash(holder, balance, transfers);
  }
}
