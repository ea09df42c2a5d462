package io.shoal.metrics;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.Map;
import kamon.Kamon;

/**
 * Starts Kamon with its Prometheus reporter serving /metrics on the configured host and port.
 * Kamon is a process-wide singleton, so this starts it once per JVM; a second server in the same
 * JVM (tests) shares the first one's endpoint.
 */
public final class PrometheusEndpoint {
  private static final Object LOCK = new Object();
  private static String started;
  private static Config serving;

  private PrometheusEndpoint() {}

  /**
   * Starts Kamon if it is not running yet, without its HTTP endpoint (see {@link #serve}); returns
   * "host:port" of the endpoint in use.
   */
  public static String init(Config base, boolean enabled, String host, int port) {
    synchronized (LOCK) {
      if (started == null) {
        serving = ConfigFactory.parseMap(Map.of(
                "kamon.prometheus.start-embedded-http-server", enabled,
                "kamon.prometheus.embedded-server.hostname", host,
                "kamon.prometheus.embedded-server.port", port))
            .withFallback(base);
        Kamon.initWithoutAttaching(ConfigFactory.parseMap(Map.of(
                "kamon.prometheus.start-embedded-http-server", false))
            .withFallback(serving));
        started = host + ":" + port;
      }
      return started;
    }
  }

  /**
   * Opens the /metrics endpoint (when enabled), once the node can answer DNS: a scrape that
   * answers means the node is up.
   */
  public static void serve() {
    synchronized (LOCK) {
      if (serving != null) {
        Kamon.reconfigure(serving);
        serving = null;
      }
    }
  }
}
