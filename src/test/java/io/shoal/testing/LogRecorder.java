package io.shoal.testing;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/** The log lines of this JVM while it is open, for tests that a failure is logged or, as often, that it is not. */
public final class LogRecorder implements AutoCloseable {
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

  private LogRecorder() {
    appender.setContext(context);
    appender.start();
    context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(appender);
  }

  /** Starts recording what the root logger passes on. */
  public static LogRecorder start() {
    return new LogRecorder();
  }

  /** The lines so far (logger, message and exception) that mention {@code word}, case aside. */
  public List<String> mentioning(String word) {
    String w = word.toLowerCase(Locale.ROOT);
    List<String> lines = new ArrayList<>();
    for (ILoggingEvent e : List.copyOf(appender.list)) {
      StringBuilder line = new StringBuilder(e.getLoggerName()).append(": ").append(e.getFormattedMessage());
      for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
        line.append(" / ").append(t.getClassName()).append(": ").append(t.getMessage());
      }
      if (line.toString().toLowerCase(Locale.ROOT).contains(w)) {
        lines.add(line.toString());
      }
    }
    return lines;
  }

  @Override
  public void close() {
    context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(appender);
    appender.stop();
  }
}
