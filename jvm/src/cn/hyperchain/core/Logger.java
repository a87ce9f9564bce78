package cn.hyperchain.core;

/**
 * Hyperchain HVM's contract logger. On Keel a contract's log lines go nowhere: what a call prints
 * must not depend on, or fill, a node's log. Each line is still built (its arguments evaluated
 * and metered by the contract's own code), so a contract behaves the same with or without it.
 */
public final class Logger {
  private Logger() {}

  private static final Logger INSTANCE = new Logger();

  public static Logger getLogger(Class<?> owner) {
    return INSTANCE;
  }

  public static Logger getLogger(String name) {
    return INSTANCE;
  }

  public void debug(Object message) {}

  public void info(Object message) {}

  public void notice(Object message) {}

  public void warn(Object message) {}

  public void warning(Object message) {}

  public void error(Object message) {}

  public void critical(Object message) {}

  public void debug(String format, Object... args) {}

  public void info(String format, Object... args) {}

  public void warn(String format, Object... args) {}

  public void error(String format, Object... args) {}
}
