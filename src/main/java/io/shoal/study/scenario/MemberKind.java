package io.shoal.study.scenario;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/** The servers a study can put under load, with what each needs installed. */
public enum MemberKind {
  SHOAL("shoal", List.of(), List.of(), false, Set.of()),
  UNBOUND("unbound", List.of("unbound", "unbound-control"), List.of("unbound"), false,
      Set.of("threads", "msg_cache_size", "rrset_cache_size", "validator", "stub_zone", "extra")),
  // kresd primes the root and refreshes trust anchors on its own.
  KRESD("kresd", List.of("kresd", "kres-cache-gc"), List.of("knot-resolver"), true,
      Set.of("cache_size", "cache_gc", "extra")),
  // dnsmasq-base is the binary alone; the dnsmasq package would also install a system service.
  DNSMASQ("dnsmasq", List.of("dnsmasq"), List.of("dnsmasq-base"), false,
      Set.of("cache_size", "dns_forward_max", "extra")),
  // pdns-recursor primes the root and polls for security updates on its own.
  PDNS_RECURSOR("pdns-recursor", List.of("pdns_recursor", "rec_control"), List.of("pdns-recursor"), true,
      Set.of("threads", "max_packetcache_entries", "max_cache_entries", "extra")),
  // knotd answering the load itself from the study's zone: the ceiling, no cache in front.
  KNOTD("knotd", List.of("knotd", "knotc"), List.of("knot"), false, Set.of("udp_workers"));

  private final String configName;
  private final List<String> binaries;
  private final List<String> debianPackages;
  private final boolean sendsOwnQueries;
  private final Set<String> peerSettings;

  MemberKind(String configName, List<String> binaries, List<String> debianPackages, boolean sendsOwnQueries,
      Set<String> peerSettings) {
    this.configName = configName;
    this.binaries = binaries;
    this.debianPackages = debianPackages;
    this.sendsOwnQueries = sendsOwnQueries;
    this.peerSettings = peerSettings;
  }

  /** The kind as a scenario file writes it. */
  public String configName() {
    return configName;
  }

  /** Executables this kind needs on the PATH (shoal itself runs from the jar). */
  public List<String> binaries() {
    return binaries;
  }

  /** The Debian packages that provide {@link #binaries()}. */
  public List<String> debianPackages() {
    return debianPackages;
  }

  /** True if the server sends queries of its own, so it may only run where nothing leaves loopback. */
  public boolean sendsOwnQueries() {
    return sendsOwnQueries;
  }

  /** The keys a member's config block may set for this peer. */
  public Set<String> peerSettings() {
    return peerSettings;
  }

  /**
   * True if a member of this kind can be queried over TCP, DoT and DoH: the study writes the
   * listeners and the certificate into its configuration. Every kind is queried over UDP.
   */
  public boolean servesEveryTransport() {
    return this == SHOAL || this == UNBOUND;
  }

  /** Looks a kind up by its scenario name; the error lists the allowed ones. */
  public static MemberKind named(String name) {
    for (MemberKind k : values()) {
      if (k.configName.equals(name)) {
        return k;
      }
    }
    throw new IllegalArgumentException("unknown member kind '" + name + "'; allowed: "
        + Arrays.stream(values()).map(MemberKind::configName).collect(Collectors.joining(", ")));
  }
}
