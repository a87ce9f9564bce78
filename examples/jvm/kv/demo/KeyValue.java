package demo;

import java.util.ArrayList;
import java.util.List;
import keel.contract.Contract;

/**
 * A key-value store with an owner: the deployer (recorded by onInit) may set and delete; anyone
 * may read. Every change emits an event with the key as its topic: "Set" (data: the new value) or
 * "Deleted" (data: the key).
 */
public class KeyValue extends Contract {
  /** Runs once, in the deployment. */
  public void onInit() {
    ledger.put("owner", sender());
  }

  public void set(String key, String value) {
    require(sender().equals(ledger.get("owner")), "only the owner may set");
    require(!key.isEmpty(), "the key is empty");
    boolean isNew = !ledger.has("k:" + key);
    ledger.put("k:" + key, value);
    if (isNew) ledger.put("count", ledger.getLong("count") + 1);
    emit("Set", value, key);
  }

  public String get(String key) {
    return ledger.get("k:" + key, "");
  }

  public boolean delete(String key) {
    require(sender().equals(ledger.get("owner")), "only the owner may delete");
    if (!ledger.has("k:" + key)) return false;
    ledger.remove("k:" + key);
    ledger.put("count", ledger.getLong("count") - 1);
    emit("Deleted", key, key);
    return true;
  }

  public long count() {
    return ledger.getLong("count");
  }

  /** Sets several keys at once: all or none (a failure on any undoes the others). */
  public List<String> setAll(List<String> pairs) {
    require(pairs.size() % 2 == 0, "setAll: pairs of key and value");
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < pairs.size(); i += 2) {
      set(pairs.get(i), pairs.get(i + 1));
      keys.add(pairs.get(i));
    }
    return keys;
  }
}
