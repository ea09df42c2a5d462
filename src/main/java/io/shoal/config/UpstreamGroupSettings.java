package io.shoal.config;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A group of upstream resolvers tried in turn ({@code shoal.upstreams.<name>}).
 *
 * @param maxFails timeouts and errors in a row after which a server is marked down; 0: never
 * @param backoff how long a server is first marked down; doubled each time it fails again
 * @param maxBackoff the longest it is marked down at once
 * @param dot the servers of {@code servers} asked over TLS, by address; the others are asked over
 *     UDP (and TCP on truncation)
 * @param mode forward to {@code servers}, resolve from the root, or ask {@code servers} as the
 *     authorities of the suffixes of the profiles that use the group
 * @param recursion for {@code recursive} and {@code stub}: hints, limits and state sizes; null
 *     when forwarding
 */
public record UpstreamGroupSettings(
    String name, List<InetSocketAddress> servers, Duration timeout, int maxFails, Duration backoff,
    Duration maxBackoff, Map<InetSocketAddress, DotServerSettings> dot, Mode mode, RecursionSettings recursion) {

  /** How a group resolves a miss. */
  public enum Mode {
    /** Ask the group's servers, which recurse (the default). */
    FORWARD,
    /** Resolve iteratively from the root hints. */
    RECURSIVE,
    /** Ask the group's servers as the authorities of the profile's suffixes; other names from the root. */
    STUB;

    /** The word in the config file. */
    public String configName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** A forwarding group. */
  public UpstreamGroupSettings(
      String name, List<InetSocketAddress> servers, Duration timeout, int maxFails, Duration backoff,
      Duration maxBackoff, Map<InetSocketAddress, DotServerSettings> dot) {
    this(name, servers, timeout, maxFails, backoff, maxBackoff, dot, Mode.FORWARD, null);
  }

  /** A group of plain DNS servers only. */
  public UpstreamGroupSettings(
      String name, List<InetSocketAddress> servers, Duration timeout, int maxFails, Duration backoff,
      Duration maxBackoff) {
    this(name, servers, timeout, maxFails, backoff, maxBackoff, Map.of());
  }

  /** A group with the default health rules (3 failures in a row, 1 s back-off up to 2 s). */
  public UpstreamGroupSettings(String name, List<InetSocketAddress> servers, Duration timeout) {
    this(name, servers, timeout, 3, Duration.ofSeconds(1), Duration.ofSeconds(2));
  }

  /** How long a query may take when every server times out, plus a TCP retry's worth. */
  public Duration deadline() {
    if (recursion != null) {
      return recursion.deadline();
    }
    return timeout.multipliedBy(servers.size() + 1).plusMillis(250);
  }
}
