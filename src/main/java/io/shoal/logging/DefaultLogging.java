package io.shoal.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

/**
 * shoal's logging when no logback configuration file is given: what {@code conf/logback.xml}
 * says, set up in code. Reading that file would load logback's configuration language and the
 * JDK's XML parser (about 370 classes, 2 MiB of every node's memory) for a dozen lines; a file
 * given with {@code -Dlogback.configurationFile} is still read as logback reads any.
 *
 * <p>Lines go to standard error as {@code HH:mm:ss.SSS LEVEL logger - message}; the root level is
 * {@code SHOAL_LOG_LEVEL} (a system property or the environment, default INFO); Kamon logs
 * warnings only; dnsjava's per-signature stack traces are off (failures are counted in metrics);
 * Akka's failed accepts are summarised by {@link AcceptFailureFilter}. logback finds this class
 * through {@code META-INF/services}, and only when no logback.xml is on the class path.
 */
public final class DefaultLogging extends ContextAwareBase implements Configurator {
  static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level %logger{20} - %msg%n";
  static final String LEVEL_VARIABLE = "SHOAL_LOG_LEVEL";

  @Override
  public void configure(LoggerContext context) {
    AcceptFailureFilter accepts = new AcceptFailureFilter();
    accepts.setContext(context);
    accepts.start();
    context.addTurboFilter(accepts);

    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(PATTERN);
    encoder.start();
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(context);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder);
    stderr.start();

    context.getLogger("kamon").setLevel(Level.WARN);
    context.getLogger("org.xbill.DNS.dnssec.DnsSecVerifier").setLevel(Level.OFF);
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(rootLevel());
    root.addAppender(stderr);
  }

  /** As logback.xml's {@code ${SHOAL_LOG_LEVEL:-INFO}}: a system property, else the environment. */
  static Level rootLevel() {
    String named = System.getProperty(LEVEL_VARIABLE, System.getenv(LEVEL_VARIABLE));
    return Level.toLevel(named, Level.INFO);
  }
}
