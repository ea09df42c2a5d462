package io.shoal.metrics;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Map;
import kamon.Kamon;

/**
 * Starts Kamon with its Prometheus reporter serving /metrics on the configured host and port.
 * Kamon is a process-wide singleton, so this starts it once per JVM; a second server in the same
 * JVM (tests) shares the first one's endpoint.
 *
 * <p>Port 0 means a port the OS picks: it is chosen (and held) when Kamon starts, so the
 * "host:port" returned and logged is the one /metrics answers on, even though the endpoint only
 * opens later in {@link #serve}.
 */
public final class PrometheusEndpoint {
  private static final Object LOCK = new Object();
  private static String started;
  private static Config serving;
  /** Holds the port the OS chose for port 0 (bound, not listening) until the endpoint takes it. */
  private static Socket reserved;

  private PrometheusEndpoint() {}

  /**
   * Starts Kamon if it is not running yet, without its HTTP endpoint (see {@link #serve}); returns
   * "host:port" of the endpoint in use.
   */
  public static String init(Config base, boolean enabled, String host, int port) {
    synchronized (LOCK) {
      if (started == null) {
        int actual = enabled && port == 0 ? reserve(host) : port;
        serving = ConfigFactory.parseMap(Map.of(
                "kamon.prometheus.start-embedded-http-server", enabled,
                "kamon.prometheus.embedded-server.hostname", host,
                "kamon.prometheus.embedded-server.port", actual))
            .withFallback(base);
        Kamon.initWithoutAttaching(ConfigFactory.parseMap(Map.of(
                "kamon.prometheus.start-embedded-http-server", false))
            .withFallback(serving));
        started = host + ":" + actual;
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
      release();
    }
  }

  /**
   * Binds a socket (SO_REUSEADDR, never listening) to {@code host}:0 and keeps it: no other bind
   * gets the port, nothing connects to it, and the endpoint's own server socket (SO_REUSEADDR too)
   * can bind it while it is held, so there is no moment the port is free for someone else.
   */
  private static int reserve(String host) {
    try {
      Socket s = new Socket();
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(host, 0));
      reserved = s;
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot pick a port for /metrics on " + host, e);
    }
  }

  private static void release() {
    if (reserved != null) {
      try {
        reserved.close();
      } catch (IOException ignored) {
        // a socket that never listened: nothing to flush
      }
      reserved = null;
    }
  }
}
