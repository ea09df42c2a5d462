package io.shoal.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.joran.spi.JoranException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node given no logging file logs as conf/logback.xml says (the file operators copy to change
 * it), and the process's own logging is that set-up: logback finds DefaultLogging.
 */
class DefaultLoggingTest {
  @Test
  void theBuiltInSetUpIsWhatConfLogbackXmlSays() throws JoranException {
    LoggerContext fromFile = new LoggerContext();
    JoranConfigurator joran = new JoranConfigurator();
    joran.setContext(fromFile);
    joran.doConfigure(Path.of("conf", "logback.xml").toFile());
    assertEquals(describe(fromFile), describe(builtIn()));
  }

  @Test
  void theProcessLogsThroughTheBuiltInSetUp() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    // No logback.xml is on the class path: the shipped jar and the tests use DefaultLogging.
    assertNull(getClass().getClassLoader().getResource("logback.xml"));
    assertEquals(describe(builtIn()), describe(context));
  }

  @Test
  void theRootLevelComesFromShoalLogLevel() {
    String before = System.getProperty(DefaultLogging.LEVEL_VARIABLE);
    try {
      System.setProperty(DefaultLogging.LEVEL_VARIABLE, "DEBUG");
      assertEquals(Level.DEBUG, DefaultLogging.rootLevel());
      System.setProperty(DefaultLogging.LEVEL_VARIABLE, "no such level");
      assertEquals(Level.INFO, DefaultLogging.rootLevel(), "an unknown level name falls back to INFO");
    } finally {
      if (before == null) {
        System.clearProperty(DefaultLogging.LEVEL_VARIABLE);
      } else {
        System.setProperty(DefaultLogging.LEVEL_VARIABLE, before);
      }
    }
  }

  /** A fresh logging context set up by DefaultLogging. */
  private static LoggerContext builtIn() {
    LoggerContext context = new LoggerContext();
    DefaultLogging setUp = new DefaultLogging();
    setUp.setContext(context);
    setUp.configure(context);
    return context;
  }

  /** What a user sees of a logging set-up: levels, filters, where lines go and their pattern. */
  private static List<String> describe(LoggerContext context) {
    List<String> seen = new ArrayList<>();
    for (String name : List.of(Logger.ROOT_LOGGER_NAME, "kamon", "org.xbill.DNS.dnssec.DnsSecVerifier", "io.shoal")) {
      seen.add(name + " level " + context.getLogger(name).getEffectiveLevel());
    }
    context.getTurboFilterList().forEach(f -> seen.add("turbo filter " + f.getClass().getName()));
    Iterator<Appender<ILoggingEvent>> appenders = context.getLogger(Logger.ROOT_LOGGER_NAME).iteratorForAppenders();
    while (appenders.hasNext()) {
      Appender<ILoggingEvent> appender = appenders.next();
      if (!(appender instanceof ConsoleAppender<ILoggingEvent> console)) {
        continue; // a test may add its own recorder; the set-up's are console appenders
      }
      PatternLayoutEncoder encoder = assertInstanceOf(PatternLayoutEncoder.class, console.getEncoder());
      seen.add("appender " + console.getName() + " to " + console.getTarget() + " as " + encoder.getPattern()
          + (console.isStarted() ? " started" : " stopped"));
    }
    return seen;
  }
}
