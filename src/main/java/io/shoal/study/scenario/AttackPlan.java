package io.shoal.study.scenario;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The attacks of a robustness scenario, each run as one phase while dnsperf measures what honest
 * clients still get; read from the scenario's {@code attacks} block. Every attack is bounded by a
 * rate (or a connection count) and by the phase's duration.
 *
 * @param malformedPerSecond malformed UDP packets sent per second (random bytes and mutated queries)
 * @param dripConnections TCP connections that each send one byte of a query per second
 * @param idleConnections TCP connections opened and left silent
 * @param holderEmptyConnections TCP connections that send zero-length messages, reopened whenever
 *     the server closes them, in the tcp_holders phase
 * @param holderIdleConnections silent TCP connections, reopened whenever the server closes them,
 *     in the tcp_holders phase: with the empty ones, more than the member's tcp_max_connections
 * @param missTimesBaseline the miss flood's rate, as a multiple of the honest clients' rate: honestQps
 *     when paced, the baseline phase's honest QPS otherwise
 * @param missMaxPerSecond a ceiling on the miss flood's rate whatever the baseline was
 * @param zoneClientQps queries a second of the zone client, a second honest client asking new names
 *     of the flooded zone in every paced UDP phase ({@code miss_flood.zone_client_qps}); 0: none
 * @param hostileZone the zone of the profile whose upstream is the hostile server
 * @param hostilePerSecond queries per second for names of the hostile zone
 * @param hostileTimeout the hostile profile's upstream timeout (its silences cost this long)
 * @param honestQps the rate the honest clients ask at in every UDP phase (dnsperf -Q), from
 *     {@code recipe.dnsperf.honest_qps}; null: as fast as answers come (closed loop), as before
 * @param honestOutstanding dnsperf's -q in the paced phases ({@code recipe.dnsperf.honest_outstanding}):
 *     a lost query holds its slot for dnsperf's timeout (5 s), so the window must hold what is lost
 *     meanwhile or the offered rate is not sent; null: the recipe's outstanding
 * @param encryptedHolders silent plain TCP connections to the member's DoT (resp. DoH) port in the
 *     dot_holders (doh_holders) phase, reopened whenever the server closes them
 *     ({@code attacks.encrypted_holders.connections}); 0 when the block is left out: the four DoT
 *     and DoH phases are not run
 * @param encryptedDuration how long dnsperf measures in each DoT and DoH phase, at most the
 *     recipe's duration ({@code attacks.encrypted_holders.duration}); null when not run
 */
public record AttackPlan(int malformedPerSecond, int dripConnections, int idleConnections,
    int holderEmptyConnections, int holderIdleConnections, double missTimesBaseline,
    int missMaxPerSecond, int zoneClientQps, String hostileZone, int hostilePerSecond, Duration hostileTimeout,
    Integer honestQps, Integer honestOutstanding, int encryptedHolders, Duration encryptedDuration) {

  /** The plan without DoT and DoH phases, as scenarios written before them read. */
  public AttackPlan(int malformedPerSecond, int dripConnections, int idleConnections,
      int holderEmptyConnections, int holderIdleConnections, double missTimesBaseline,
      int missMaxPerSecond, int zoneClientQps, String hostileZone, int hostilePerSecond, Duration hostileTimeout,
      Integer honestQps, Integer honestOutstanding) {
    this(malformedPerSecond, dripConnections, idleConnections, holderEmptyConnections, holderIdleConnections,
        missTimesBaseline, missMaxPerSecond, zoneClientQps, hostileZone, hostilePerSecond, hostileTimeout, honestQps,
        honestOutstanding, 0, null);
  }

  /** The phases this plan runs, in order: every one, less the DoT and DoH ones when it has no encrypted holders. */
  public List<Phase> phases() {
    return Arrays.stream(Phase.values()).filter(p -> encryptedHolders > 0 || p.transport() == null
        || !p.transport().encrypted()).toList();
  }

  /** True if the honest clients of the UDP phases ask at a fixed rate rather than as fast as answers come. */
  public boolean paced() {
    return honestQps != null;
  }

  /** The phases, in the order they run: the baseline first, every other one compared with it. */
  public enum Phase {
    BASELINE("baseline", "no attack"),
    /** Honest clients over TCP, no attack: what tcp_holders is compared with. */
    TCP_BASELINE("tcp_baseline", "no attack, honest clients over TCP"),
    TCP_HOLDERS("tcp_holders", "zero-length and idle TCP connections beyond tcp_max_connections, honest clients "
        + "over TCP"),
    /** Honest clients over DoT, no attack: what dot_holders is compared with. */
    DOT_BASELINE("dot_baseline", "no attack, honest clients over DoT"),
    DOT_HOLDERS("dot_holders", "silent TCP connections to the DoT port beyond its connection cap, honest clients "
        + "over DoT"),
    /** Honest clients over DoH, no attack: what doh_holders is compared with. */
    DOH_BASELINE("doh_baseline", "no attack, honest clients over DoH"),
    DOH_HOLDERS("doh_holders", "silent TCP connections to the DoH port beyond its connection cap, honest clients "
        + "over DoH"),
    MALFORMED_UDP("malformed_udp", "random and mutated UDP packets"),
    TCP_DRIP_IDLE("tcp_drip_idle", "drip TCP (one byte a second) and idle TCP connections"),
    MISS_FLOOD("miss_flood", "unique names under the zone, every one a cache miss"),
    /** The miss flood again, from many source networks at once: what a client budget alone cannot stop. */
    MISS_FLOOD_SPREAD("miss_flood_spread", "unique names under the zone from 256 source networks, every one a "
        + "cache miss"),
    HOSTILE_UPSTREAM("hostile_upstream", "queries for a profile whose upstream answers garbage or nothing");

    private final String configName;
    private final String what;

    Phase(String configName, String what) {
      this.configName = configName;
      this.what = what;
    }

    /**
     * Whether the honest clients of the phase ask over a stream (dnsperf -m tcp, dot or doh) rather
     * than UDP: those phases run as fast as answers come, with no zone client.
     */
    public boolean overTcp() {
      return transport() != null;
    }

    /** The stream the honest clients of the phase ask over; null for the UDP phases. */
    public Transport transport() {
      return switch (this) {
        case TCP_BASELINE, TCP_HOLDERS -> Transport.TCP;
        case DOT_BASELINE, DOT_HOLDERS -> Transport.DOT;
        case DOH_BASELINE, DOH_HOLDERS -> Transport.DOH;
        default -> null;
      };
    }

    /** The phase this one is compared with: its own baseline for TCP, DoT and DoH, the UDP baseline otherwise. */
    public Phase baseline() {
      return switch (this) {
        case TCP_BASELINE, TCP_HOLDERS -> TCP_BASELINE;
        case DOT_BASELINE, DOT_HOLDERS -> DOT_BASELINE;
        case DOH_BASELINE, DOH_HOLDERS -> DOH_BASELINE;
        default -> BASELINE;
      };
    }

    /** The phase's name in robustness.csv and in the run directory. */
    public String configName() {
      return configName;
    }

    /** True if the honest clients of the phase are held to the plan's honest_qps when it has one (every UDP phase). */
    public boolean pacedIn(AttackPlan plan) {
      return plan.paced() && !overTcp();
    }

    /** What the attack of the phase is, in a few words. */
    public String what() {
      return what;
    }

    /** The phase of a CSV name. */
    public static Phase named(String name) {
      for (Phase p : values()) {
        if (p.configName.equals(name)) {
          return p;
        }
      }
      throw new IllegalArgumentException("no robustness phase named '" + name + "'");
    }
  }

  /** More than this per second from one Java thread measures the generator, not shoal. */
  static final int MAX_RATE = 200_000;
  /** TCP connections the study opens at most (drip and idle together): a few thousand. */
  static final int MAX_CONNECTIONS = 8_000;
  /** The zone client's rate when the scenario does not set one. */
  static final int DEFAULT_ZONE_CLIENT_QPS = 20;
  /**
   * The zone client's highest rate: it is a client, not a flood, and its 65,536 query IDs must not
   * come round while a query still waits for its reply (2 s).
   */
  public static final int MAX_ZONE_CLIENT_QPS = 10_000;

  private static final Set<String> KEYS = Set.of("malformed_udp", "tcp", "tcp_holders", "encrypted_holders",
      "miss_flood", "hostile_upstream");

  /**
   * Reads and checks the {@code attacks} block; errors name the key (prefix {@code attacks.}).
   *
   * @param honestQps the recipe's honest_qps, already checked; null when not set
   * @param honestOutstanding the recipe's honest_outstanding, already checked; null when not set
   */
  static AttackPlan from(Config a, Integer honestQps, Integer honestOutstanding) {
    ScenarioReader.allowOnly(a, "attacks.", KEYS);
    Config malformed = a.getConfig("malformed_udp");
    ScenarioReader.allowOnly(malformed, "attacks.malformed_udp.", Set.of("packets_per_second"));
    Config tcp = a.getConfig("tcp");
    ScenarioReader.allowOnly(tcp, "attacks.tcp.", Set.of("drip_connections", "idle_connections"));
    Config holders = a.getConfig("tcp_holders");
    ScenarioReader.allowOnly(holders, "attacks.tcp_holders.", Set.of("zero_length_connections", "idle_connections"));
    Config miss = a.getConfig("miss_flood");
    ScenarioReader.allowOnly(miss, "attacks.miss_flood.", Set.of("times_baseline", "max_packets_per_second",
        "zone_client_qps"));
    Config hostile = a.getConfig("hostile_upstream");
    ScenarioReader.allowOnly(hostile, "attacks.hostile_upstream.", Set.of("zone", "queries_per_second", "timeout"));

    int drip = between(tcp, "attacks.tcp.", "drip_connections", 0, MAX_CONNECTIONS);
    int idle = between(tcp, "attacks.tcp.", "idle_connections", 0, MAX_CONNECTIONS);
    if (drip + idle > MAX_CONNECTIONS) {
      throw new IllegalArgumentException("attacks.tcp: drip_connections + idle_connections at most "
          + MAX_CONNECTIONS + ", is " + (drip + idle));
    }
    int empty = between(holders, "attacks.tcp_holders.", "zero_length_connections", 0, MAX_CONNECTIONS);
    int holderIdle = between(holders, "attacks.tcp_holders.", "idle_connections", 0, MAX_CONNECTIONS);
    if (empty + holderIdle > MAX_CONNECTIONS) {
      throw new IllegalArgumentException("attacks.tcp_holders: zero_length_connections + idle_connections at most "
          + MAX_CONNECTIONS + ", is " + (empty + holderIdle));
    }
    double times = miss.getDouble("times_baseline");
    if (!(times > 0 && times <= 100)) {
      throw new IllegalArgumentException("attacks.miss_flood.times_baseline: above 0, at most 100, is " + times);
    }
    int zoneClient = miss.hasPath("zone_client_qps") ? miss.getInt("zone_client_qps") : DEFAULT_ZONE_CLIENT_QPS;
    if (zoneClient < 0 || zoneClient > MAX_ZONE_CLIENT_QPS) {
      throw new IllegalArgumentException("attacks.miss_flood.zone_client_qps: queries a second of the client asking "
          + "new names of the flooded zone, from 1 to " + MAX_ZONE_CLIENT_QPS + ", or 0 for none; is " + zoneClient);
    }
    String zone = hostile.getString("zone");
    if (!zone.matches("([a-z0-9-]+\\.)+")) {
      throw new IllegalArgumentException("attacks.hostile_upstream.zone: an absolute name of lower-case labels "
          + "ending in '.', e.g. \"hostile.test.\"; is \"" + zone + "\"");
    }
    Duration timeout = hostile.getDuration("timeout");
    if (timeout.compareTo(Duration.ofMillis(50)) < 0 || timeout.compareTo(Duration.ofSeconds(5)) > 0) {
      throw new IllegalArgumentException("attacks.hostile_upstream.timeout: from 50ms to 5s, is " + timeout);
    }
    int encrypted = 0;
    Duration encryptedDuration = null;
    if (a.hasPath("encrypted_holders")) {
      Config e = a.getConfig("encrypted_holders");
      ScenarioReader.allowOnly(e, "attacks.encrypted_holders.", Set.of("connections", "duration"));
      encrypted = between(e, "attacks.encrypted_holders.", "connections", 1, MAX_CONNECTIONS);
      encryptedDuration = e.getDuration("duration");
      if (encryptedDuration.compareTo(Duration.ofSeconds(1)) < 0
          || encryptedDuration.compareTo(Duration.ofSeconds(120)) > 0) {
        throw new IllegalArgumentException("attacks.encrypted_holders.duration: from 1s to 120s, is "
            + encryptedDuration);
      }
    }
    return new AttackPlan(
        between(malformed, "attacks.malformed_udp.", "packets_per_second", 1, MAX_RATE), drip, idle, empty,
        holderIdle, times,
        between(miss, "attacks.miss_flood.", "max_packets_per_second", 1, MAX_RATE), zoneClient, zone,
        between(hostile, "attacks.hostile_upstream.", "queries_per_second", 1, MAX_RATE), timeout, honestQps,
        honestOutstanding, encrypted, encryptedDuration);
  }

  private static int between(Config c, String prefix, String key, int min, int max) {
    int v = c.getInt(key);
    if (v < min || v > max) {
      throw new IllegalArgumentException(prefix + key + ": from " + min + " to " + max + ", is " + v);
    }
    return v;
  }
}
