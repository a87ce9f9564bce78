package cn.hyperchain.jcee.common;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Hyperchain 1.x: an event a contract posts with {@code ledger.post(event)}: a name, topics and
 * attributes. On Keel it becomes a log of the receipt: topics keccak256(name), then keccak256 of
 * each topic (at most three); data the JSON object of the attributes.
 */
public class Event {
  private final String name;
  private final List<String> topics = new ArrayList<>();
  private final Map<String, String> attributes = new LinkedHashMap<>();

  public Event(String name) {
    this.name = name;
  }

  public String getName() {
    return name;
  }

  public void addTopic(String topic) {
    topics.add(topic);
  }

  public List<String> getTopics() {
    return new ArrayList<>(topics);
  }

  public void put(String key, String value) {
    attributes.put(key, value);
  }

  public String get(String key) {
    return attributes.get(key);
  }

  public Map<String, String> getAttributes() {
    return new LinkedHashMap<>(attributes);
  }
}
