package kv;

import cn.hyperchain.jcee.client.contract.ContractTemplate;
import cn.hyperchain.jcee.client.ledger.Batch;
import cn.hyperchain.jcee.client.ledger.BatchKey;
import cn.hyperchain.jcee.client.ledger.BatchValue;
import cn.hyperchain.jcee.client.ledger.Result;
import cn.hyperchain.jcee.common.Event;
import cn.hyperchain.jcee.common.ExecuteResult;
import java.util.ArrayList;
import java.util.List;

/**
 * A key-value store written the way Hyperchain 1.x's examples show: functions
 * `ExecuteResult f(List<String> args)`, the ledger's typed puts, batches, range queries, events.
 */
public class KeyValue extends ContractTemplate {
  public KeyValue() {}

  public ExecuteResult put(List<String> args) {
    if (args.size() != 2) return result(false, "put needs a key and a value");
    ledger.put(args.get(0), args.get(1));
    Event event = new Event("Put");
    event.addTopic(args.get(0));
    event.put("value", args.get(1));
    ledger.post(event);
    return result(true);
  }

  public ExecuteResult get(List<String> args) {
    Result value = ledger.get(args.get(0).getBytes());
    if (value.isEmpty()) return result(false, "no value for " + args.get(0));
    return result(true, value.toString());
  }

  /** Adds to the number under a key (an int, kept as its decimal text); returns the new number. */
  public ExecuteResult add(List<String> args) {
    Result value = ledger.get(args.get(0));
    int sum = (value.isEmpty() ? 0 : value.toInt()) + Integer.parseInt(args.get(1));
    ledger.put(args.get(0), sum);
    return result(true, sum);
  }

  public ExecuteResult half(List<String> args) {
    return result(true, ledger.get(args.get(0)).toInt() / 2.0);
  }

  /** key value key value …, written together; private, as 1.x examples often are (1.x called them anyway). */
  private ExecuteResult putAll(List<String> args) {
    Batch batch = ledger.newBatch();
    for (int i = 0; i + 1 < args.size(); i += 2) batch.put(args.get(i).getBytes(), args.get(i + 1).getBytes());
    return result(batch.commit());
  }

  public ExecuteResult getAll(List<String> args) {
    BatchKey keys = ledger.newBatchKey();
    for (String key : args) keys.put(key);
    Batch batch = ledger.batchRead(keys);
    List<String> values = new ArrayList<>();
    for (String key : args) values.add(batch.get(key).isEmpty() ? "-" : batch.get(key).toString());
    return result(true, String.join(",", values));
  }

  /** The values of the keys from args[0] (included) to args[1] (excluded). */
  public ExecuteResult range(List<String> args) {
    BatchValue found = ledger.rangeQuery(args.get(0).getBytes(), args.get(1).getBytes());
    List<String> values = new ArrayList<>();
    while (found.hasNext()) values.add(found.next().toString());
    return result(true, String.join(",", values));
  }

  public ExecuteResult delete(List<String> args) {
    for (String key : args) ledger.delete(key);
    return result(true);
  }

  /** Writes, then refuses: nothing it wrote stays. */
  public ExecuteResult refuse(List<String> args) {
    ledger.put("refused", "written");
    return result(false, "refused: " + args.get(0));
  }
}
