package org.apache.log4j;

/**
 * The type of Hyperchain 1.x's {@code ContractTemplate.logger} (log4j's), as Keel provides it: a
 * contract's log lines go nowhere, so what a call prints cannot depend on, or fill, a node's log.
 */
public final class Logger {
  private static final Logger INSTANCE = new Logger();

  private Logger() {}

  public static Logger getLogger(Class<?> owner) {
    return INSTANCE;
  }

  public static Logger getLogger(String name) {
    return INSTANCE;
  }

  public void trace(Object message) {}

  public void debug(Object message) {}

  public void info(Object message) {}

  public void warn(Object message) {}

  public void error(Object message) {}

  public void fatal(Object message) {}

  public boolean isDebugEnabled() {
    return false;
  }

  public boolean isInfoEnabled() {
    return false;
  }
}
