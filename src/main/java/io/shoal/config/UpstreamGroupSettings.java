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
 */
public record UpstreamGroupSettings(
    String name, List<InetSocketAddress> servers, Duration timeout, int maxFails, Duration backoff,
    Duration maxBackoff, Map<InetSocketAddress, DotServerSettings> dot) {

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
    return timeout.multipliedBy(servers.size() + 1).plusMillis(250);
  }
}
