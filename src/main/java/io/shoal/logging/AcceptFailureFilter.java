package io.shoal.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * Akka's TCP listener logs a stack trace for every failed accept, and when the process is out
 * of descriptors it retries at once: gigabytes of log a minute. This logback filter takes those
 * events out and reports them through a {@link FailureLog} instead: once per interval, with a
 * count, without the stack trace. Installed by {@link DefaultLogging} (and conf/logback.xml).
 */
public final class AcceptFailureFilter extends TurboFilter {
  /** The logger Akka's TcpListener actor logs to (through akka-slf4j: its class name). */
  static final String AKKA_TCP_LISTENER = "akka.io.TcpListener";

  private final FailureLog failures = new FailureLog(LoggerFactory.getLogger("io.shoal.transport.TcpTransport"), 10);

  @Override
  public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (t == null || level != Level.ERROR || !AKKA_TCP_LISTENER.equals(logger.getName())) {
      return FilterReply.NEUTRAL;
    }
    failures.warn("TCP accept failed", t);
    return FilterReply.DENY;
  }
}
