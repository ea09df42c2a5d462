package io.shoal.config;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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

  /**
   * Reads and checks group {@code name} ({@code shoal.upstreams.<name>}, section {@code s});
   * {@code resolv.conf} among its servers reads the nameservers of {@code resolvConf}.
   */
  static UpstreamGroupSettings from(Section s, String name, Path resolvConf) {
    s.allowOnly("servers", "timeout", "max_fails", "backoff", "max_backoff", "tls_ca_file", "tls_spki_pins",
        "mode", "root_hints", "query_loopback", "qname_minimisation", "max_queries", "max_ns_names",
        "max_referrals", "max_cname_links", "max_glueless_depth", "zone_cuts", "servers_tracked", "deadline");
    UpstreamGroupSettings.Mode mode = s.has("mode")
        ? s.choice("mode", UpstreamGroupSettings.Mode.class, UpstreamGroupSettings.Mode::configName)
        : UpstreamGroupSettings.Mode.FORWARD;
    if (mode == UpstreamGroupSettings.Mode.FORWARD) {
      for (String key : List.of("root_hints", "query_loopback", "qname_minimisation", "max_queries", "max_ns_names",
          "max_referrals", "max_cname_links", "max_glueless_depth", "zone_cuts", "servers_tracked", "deadline")) {
        if (s.has(key)) {
          throw new InvalidConfigException(s.key(key), "only read with mode = recursive or stub (this group forwards)");
        }
      }
    } else {
      return resolvingGroup(s, name, mode);
    }
    List<InetSocketAddress> servers = new ArrayList<>();
    Map<InetSocketAddress, DotServerSettings> dot = new LinkedHashMap<>();
    DotServers dotServers = new DotServers(s);
    for (String server : s.strings("servers")) {
      if (server.equals("resolv.conf")) {
        servers.addAll(Addresses.fromResolvConf(resolvConf, s.key("servers")));
      } else if (DotServers.isDot(server)) {
        DotServerSettings d = dotServers.entry(server);
        servers.add(d.address());
        dot.put(d.address(), d);
      } else {
        servers.add(Addresses.parse(server, 53, s.key("servers")));
      }
    }
    dotServers.check(servers, dot);
    if (servers.isEmpty()) {
      throw new InvalidConfigException(s.key("servers"), "list at least one server, e.g. [\"192.0.2.1:53\"] or [\"resolv.conf\"]");
    }
    for (InetSocketAddress a : servers) {
      if (a.getPort() == 0) {
        throw new InvalidConfigException(s.key("servers"), "port 0 is not a server port: " + a);
      }
    }
    Duration timeout = s.duration("timeout", Duration.ofMillis(10), Duration.ofSeconds(30));
    // Optional in a group, so a group an operator adds needs only servers and timeout.
    UpstreamGroupSettings health = new UpstreamGroupSettings(name, List.copyOf(servers), timeout);
    int maxFails = s.has("max_fails") ? (int) s.integer("max_fails", 0, 1000) : health.maxFails();
    Duration backoff = s.has("backoff")
        ? s.duration("backoff", Duration.ofMillis(10), Duration.ofHours(1)) : health.backoff();
    Duration maxBackoff = s.has("max_backoff")
        ? s.duration("max_backoff", Duration.ofMillis(10), Duration.ofHours(1)) : health.maxBackoff();
    if (maxBackoff.compareTo(backoff) < 0) {
      throw new InvalidConfigException(s.key("max_backoff"), "must be at least backoff (" + backoff + ")");
    }
    return new UpstreamGroupSettings(name, List.copyOf(servers), timeout, maxFails, backoff, maxBackoff, Map.copyOf(dot));
  }

  /**
   * A group that resolves itself: {@code recursive} reads no {@code servers} (the defaults' may
   * still be there); {@code stub} lists its authorities, port 53 unless given.
   */
  private static UpstreamGroupSettings resolvingGroup(Section s, String name, UpstreamGroupSettings.Mode mode) {
    RecursionSettings recursion = RecursionSettings.read(s);
    List<InetSocketAddress> servers = new ArrayList<>();
    if (mode == UpstreamGroupSettings.Mode.STUB) {
      for (String server : s.strings("servers")) {
        if (server.equals("resolv.conf") || DotServers.isDot(server)) {
          throw new InvalidConfigException(s.key("servers"),
              "a stub group lists the authoritative servers of its zones as ADDRESS[:PORT], got '" + server + "'");
        }
        InetSocketAddress a = Addresses.parse(server, 53, s.key("servers"));
        if (a.getPort() == 0) {
          throw new InvalidConfigException(s.key("servers"), "port 0 is not a server port: " + a);
        }
        servers.add(a);
      }
      if (servers.isEmpty()) {
        throw new InvalidConfigException(s.key("servers"), "a stub group lists at least one authoritative server");
      }
    }
    // Per authority attempt, the longest an address's smoothed round-trip time may stretch it to.
    Duration timeout = s.has("timeout") ? s.duration("timeout", Duration.ofMillis(50), Duration.ofSeconds(30))
        : Duration.ofSeconds(2);
    UpstreamGroupSettings health = new UpstreamGroupSettings(name, List.copyOf(servers), timeout);
    return new UpstreamGroupSettings(name, List.copyOf(servers), timeout, health.maxFails(), health.backoff(),
        health.maxBackoff(), Map.of(), mode, recursion);
  }
}
