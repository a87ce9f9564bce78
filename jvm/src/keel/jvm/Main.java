package keel.jvm;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * The Java contract executor: a child process of the node, talking over its stdin/stdout in
 * frames (a big-endian u32 length, then that many bytes of UTF-8 JSON). One request at a time:
 * `load` (scan, instrument, define a contract's classes), `call` (run a function; during it the
 * executor asks the node for ledger values with `get` frames), `ping`. End of stdin ends it.
 * docs/jvm.md describes the protocol.
 */
public final class Main {
  private Main() {}

  static final int MAX_FRAME = 64 * 1024 * 1024;

  private static DataInputStream in;
  private static DataOutputStream out;

  public static void main(String[] args) throws IOException {
    in = new DataInputStream(new BufferedInputStream(new java.io.FileInputStream(FileDescriptor.in), 1 << 16));
    out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16));
    // nothing else may write to the protocol stream
    System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
    Watchdog watchdog = new Watchdog();
    watchdog.start();
    Contracts contracts = new Contracts();
    CrossCalls.contracts = contracts;
    Map<String, Object> ready = Contracts.reply("ready");
    ready.put("java", System.getProperty("java.version"));
    send(ready);
    for (;;) {
      Map<String, Object> msg = read();
      if (msg == null) return;
      Object op = msg.get("op");
      if ("call".equals(op)) send(contracts.call(msg, watchdog));
      else if ("load".equals(op)) send(contracts.load(msg));
      else if ("ping".equals(op)) send(Contracts.reply("pong"));
      else if ("exit".equals(op)) return;
      else fail("unexpected frame " + op);
    }
  }

  /** The node's answer to a ledger read during call `id`: the value of `key` in contract `address`'s ledger, or null when absent. */
  static byte[] fetch(long id, String address, String key) {
    Map<String, Object> get = Contracts.reply("get");
    get.put("id", id);
    get.put("address", address);
    get.put("key", key);
    Object v = ask(get, "value").get("value");
    return v == null ? null : Base64.getDecoder().decode((String) v);
  }

  /** Sends `request` (which names the call in `id`) and returns the node's answer, a frame of kind `op` for the same call. */
  static Map<String, Object> ask(Map<String, Object> request, String op) {
    long id = ((Number) request.get("id")).longValue();
    try {
      send(request);
      Map<String, Object> answer = read();
      if (answer == null) System.exit(0);
      if (!op.equals(answer.get("op")) || ((Number) answer.get("id")).longValue() != id)
        fail("expected " + op + " for call " + id + ", got " + answer.get("op"));
      return answer;
    } catch (IOException e) {
      fail("protocol stream broken: " + e);
      return null;
    }
  }

  private static void fail(String message) {
    System.err.println("keel executor: " + message);
    System.exit(3);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> read() throws IOException {
    int length;
    try {
      length = in.readInt();
    } catch (EOFException e) {
      return null;
    }
    if (length < 0 || length > MAX_FRAME) fail("frame of " + length + " bytes");
    byte[] body = new byte[length];
    in.readFully(body);
    try {
      Object v = Json.parse(new String(body, StandardCharsets.UTF_8));
      if (!(v instanceof Map)) fail("a frame is not a JSON object");
      return (Map<String, Object>) v;
    } catch (Json.ParseException e) {
      fail("bad frame: " + e.getMessage());
      return null;
    }
  }

  private static void send(Map<String, Object> msg) throws IOException {
    byte[] body = Json.write(msg).getBytes(StandardCharsets.UTF_8);
    out.writeInt(body.length);
    out.write(body);
    out.flush();
  }
}
