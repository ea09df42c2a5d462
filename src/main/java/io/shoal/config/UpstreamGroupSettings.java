package io.shoal.config;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/** A group of upstream resolvers tried in turn ({@code shoal.upstreams.<name>}). */
public record UpstreamGroupSettings(String name, List<InetSocketAddress> servers, Duration timeout) {

  /** How long a query may take when every server times out, plus a TCP retry's worth. */
  public Duration deadline() {
    return timeout.multipliedBy(servers.size() + 1).plusMillis(250);
  }
}
