package io.shoal.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A flood of failed accepts, as Akka's TCP listener logs them, leaves one line in the log. */
class AcceptFailureFilterTest {
  @Test
  void aThousandFailedAcceptsAreOneLineWithoutAStackTrace() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.setContext(context);
    captured.start();
    root.addAppender(captured);
    try {
      // The shipped logback.xml installs the filter; this is what Akka's TcpListener logs.
      org.slf4j.Logger akka = LoggerFactory.getLogger(AcceptFailureFilter.AKKA_TCP_LISTENER);
      for (int i = 0; i < 1000; i++) {
        akka.error("Accept error: could not accept new connection", new IOException("Too many open files"));
      }
      akka.error("Bind failed for TCP channel on endpoint [127.0.0.1:53]");
    } finally {
      root.detachAppender(captured);
    }
    List<ILoggingEvent> events = captured.list;
    List<ILoggingEvent> accepts = events.stream()
        .filter(e -> e.getFormattedMessage().contains("accept")).toList();
    assertEquals(1, accepts.size(), events.toString());
    assertTrue(accepts.get(0).getFormattedMessage().contains("Too many open files"));
    assertNull(accepts.get(0).getThrowableProxy(), "no stack trace");
    assertTrue(events.stream().anyMatch(e -> e.getFormattedMessage().startsWith("Bind failed")),
        "other listener errors pass unchanged");
  }
}
