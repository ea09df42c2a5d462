package io.shoal.study.server;

import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Recipe;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Unbound forwarding the study zone to knotd. Its caches are sized in bytes; the per-entry sizes
 * below were measured for these answers (a 2048-entry cache is 528384 B of messages and 507904 B
 * of rrsets).
 */
final class UnboundPeer extends ServerUnderTest {
  static final long MSG_BYTES_PER_ENTRY = 258;
  static final long RRSET_BYTES_PER_ENTRY = 248;

  UnboundPeer(Member m, Recipe r, Path dir, InetSocketAddress upstream, StartedProcesses p, Prerequisites.Tools t,
      StudyCertificate certificate) throws IOException {
    super(m, r, dir, upstream, p, t, certificate);
  }

  private Path conf() {
    return dir.resolve("unbound.conf");
  }

  @Override
  public int workers() {
    return (int) setting("threads", defaultThreads());
  }

  @Override
  protected void writeConfig() throws IOException {
    List<String> lines = new ArrayList<>(List.of(
        "server:",
        "  interface: 127.0.0.1@" + port,
        "  do-ip6: no",
        "  username: \"\"",
        "  chroot: \"\"",
        "  directory: \"" + dir + "\"",
        "  pidfile: \"" + dir.resolve("unbound.pid") + "\"",
        "  use-syslog: no",
        "  logfile: \"\"",
        "  num-threads: " + workers(),
        // no DNSSEC validator unless the member validates (a signed recipe): see validatorLines
        "  module-config: \"" + (member.validates() ? "validator iterator" : "iterator") + "\"",
        // unbound refuses to forward to loopback and blocks test. (RFC 6761) unless told otherwise
        "  do-not-query-localhost: no",
        "  local-zone: \"" + topLabel() + ".\" nodefault",
        // a recursive member keeps unbound's default (on), as it resolves for real
        "  qname-minimisation: " + (recursive() ? "yes" : "no"),
        "  prefetch: no",
        "  msg-cache-size: " + setting("msg_cache_size", recipe.maxEntries() * MSG_BYTES_PER_ENTRY),
        "  rrset-cache-size: " + setting("rrset_cache_size", recipe.maxEntries() * RRSET_BYTES_PER_ENTRY),
        "  extended-statistics: yes",
        "  statistics-cumulative: no"));
    lines.addAll(validatorLines());
    lines.addAll(encryptedListener());
    extraLines().forEach(l -> lines.add("  " + l));
    lines.addAll(recursive()
        ? List.of("  root-hints: \"" + member.config().getString(Member.ROOT_HINTS) + "\"")
        : stubZone()
        ? List.of("stub-zone:", "  name: \"" + zoneApex() + "\"", "  stub-addr: " + upstreamHost() + "@"
            + upstream.getPort())
        : List.of("forward-zone:", "  name: \"" + zoneApex() + "\"", "  forward-addr: " + upstreamHost() + "@"
            + upstream.getPort()));
    if (member.config().hasPath(Member.UNBOUND_SIDE_ZONE)) {
      lines.addAll(List.of("forward-zone:", "  name: \"" + member.config().getString(Member.UNBOUND_SIDE_ZONE) + "\"",
          "  forward-addr: " + member.config().getString(Member.UNBOUND_SIDE_ADDR)));
    }
    lines.addAll(List.of(
        "remote-control:",
        "  control-enable: yes",
        "  control-interface: \"" + dir.resolve("unbound.ctl") + "\"",
        ""));
    Files.writeString(conf(), String.join("\n", lines));
  }

  /**
   * A validating member's anchor (the DS records of the zone knotd signed, which the run wrote)
   * and two settings that keep it answering what the other members answer: no aggressive use of
   * cached NSEC (RFC 8198, on by default since 1.15: under the wildcard zone it would synthesise
   * misses without asking knotd, which no other member does), and no trust-anchor signalling
   * query to knotd (RFC 8145).
   */
  private List<String> validatorLines() {
    if (!member.validates()) {
      return List.of();
    }
    if (!member.config().hasPath(Member.UNBOUND_ANCHOR)) {
      throw new IllegalStateException(member.name() + ": a validating unbound without the run's trust anchor");
    }
    return List.of(
        "  trust-anchor-file: \"" + member.config().getString(Member.UNBOUND_ANCHOR) + "\"",
        "  aggressive-nsec: no",
        "  trust-anchor-signaling: no");
  }

  /**
   * The DoT or DoH listener of a member queried over it: a second interface line on its own port,
   * which tls-port or https-port marks as TLS (DoH: HTTP/2 over TLS at /dns-query, unbound's default
   * http-endpoint).
   */
  private List<String> encryptedListener() {
    return switch (member.transport()) {
      case DOT, DOH -> List.of(
          "  interface: 127.0.0.1@" + encryptedPort,
          "  " + (member.transport() == io.shoal.study.scenario.Transport.DOT ? "tls-port: " : "https-port: ")
              + encryptedPort,
          "  tls-service-key: \"" + certificate.privateKey() + "\"",
          "  tls-service-pem: \"" + certificate.certificate() + "\"");
      case UDP, TCP -> List.of();
    };
  }

  /** True if the member resolves from root hints (the recursion study's tree) instead of asking knotd. */
  private boolean recursive() {
    return member.config().hasPath(Member.ROOT_HINTS);
  }

  /** True if the member asks knotd as the zone's authoritative server (stub-zone), not as a forwarder. */
  private boolean stubZone() {
    return flag(Member.UNBOUND_STUB_ZONE, false);
  }

  /**
   * The counters of queries unbound turned away, cumulative: its request list full
   * (requestlist.exceeded: dropped; overwritten: an older query replaced), queries dropped by
   * ip-ratelimit, and queries over the zone ratelimit (num.query.ratelimited). Names as the
   * robustness summary shows them.
   */
  @Override
  public Map<String, Long> refusalCounters(Path audit) throws StudyException {
    StartedProcesses.Completed c = processes.run(
        List.of(tools.path("unbound-control"), "-c", conf().toString(), "stats_noreset"), audit, STATS_LIMIT);
    if (c.exitCode() != 0) {
      throw new StudyException("unbound-control stats_noreset failed: " + c.output().strip());
    }
    return refusals(keyValues(c.output(), "="));
  }

  /** {@link #refusalCounters} from unbound-control's key=value lines; a counter unbound does not print counts 0. */
  static Map<String, Long> refusals(Map<String, String> stats) {
    Map<String, Long> out = new TreeMap<>();
    out.put("requestlist_exceeded", Math.round(Double.parseDouble(stats.getOrDefault("total.requestlist.exceeded",
        "0"))));
    out.put("requestlist_overwritten", Math.round(Double.parseDouble(stats.getOrDefault(
        "total.requestlist.overwritten", "0"))));
    out.put("ip_ratelimited", Math.round(Double.parseDouble(stats.getOrDefault("total.num.queries_ip_ratelimited",
        "0"))));
    // the zone ratelimit: misses answered SERVFAIL (or passed one in ratelimit-factor) past ratelimit
    out.put("ratelimited", Math.round(Double.parseDouble(stats.getOrDefault("num.query.ratelimited", "0"))));
    return out;
  }

  private String topLabel() {
    String z = zoneName();
    return z.substring(z.lastIndexOf('.') + 1);
  }

  @Override
  protected List<String> command() {
    return List.of(tools.path("unbound"), "-d", "-c", conf().toString());
  }

  @Override
  public CacheCounters counters(Path audit) throws StudyException {
    Map<String, String> stats = statsNoReset(audit);
    return new CacheCounters(number(stats, "total.num.cachehits"), number(stats, "total.num.cachemiss"),
        null, null, null, null);
  }

  /**
   * The messages in unbound's message cache ({@code msg.cache.count}): one per answer it can give
   * from cache, each pointing at its rrsets in the rrset cache.
   */
  @Override
  public Long cachedAnswers(Path audit) throws StudyException {
    return number(statsNoReset(audit), "msg.cache.count");
  }

  /** unbound-control stats_noreset, its output kept in {@code audit}: the counters, by name. */
  private Map<String, String> statsNoReset(Path audit) throws StudyException {
    StartedProcesses.Completed c = processes.run(
        List.of(tools.path("unbound-control"), "-c", conf().toString(), "stats_noreset"), audit, STATS_LIMIT);
    if (c.exitCode() != 0) {
      throw new StudyException("unbound-control stats_noreset failed: " + c.output().strip());
    }
    return keyValues(c.output(), "=");
  }

  /** Parses "key SEP value" lines, as unbound-control and rec_control print them. */
  static Map<String, String> keyValues(String text, String separator) {
    Map<String, String> out = new TreeMap<>();
    for (String line : text.split("\n")) {
      int i = separator.isBlank() ? indexOfWhitespace(line) : line.indexOf(separator);
      if (i > 0) {
        out.put(line.substring(0, i).strip(), line.substring(i + separator.length()).strip());
      }
    }
    return out;
  }

  private static int indexOfWhitespace(String line) {
    for (int i = 0; i < line.length(); i++) {
      if (Character.isWhitespace(line.charAt(i))) {
        return i;
      }
    }
    return -1;
  }

  static Long number(Map<String, String> stats, String key) throws StudyException {
    String v = stats.get(key);
    if (v == null) {
      throw new StudyException("statistics have no " + key);
    }
    return Math.round(Double.parseDouble(v));
  }

  /** The answers the two caches hold at the measured bytes per entry: the smaller cache's count. */
  private long answersHeld() {
    return Math.min(setting("msg_cache_size", recipe.maxEntries() * MSG_BYTES_PER_ENTRY) / MSG_BYTES_PER_ENTRY,
        setting("rrset_cache_size", recipe.maxEntries() * RRSET_BYTES_PER_ENTRY) / RRSET_BYTES_PER_ENTRY);
  }

  @Override
  public String setupNote() {
    return "unbound, " + workers() + (workers() == 1 ? " thread" : " threads") + ", msg-cache-size "
        + setting("msg_cache_size", recipe.maxEntries() * MSG_BYTES_PER_ENTRY) + " B, rrset-cache-size "
        + setting("rrset_cache_size", recipe.maxEntries() * RRSET_BYTES_PER_ENTRY) + " B (about "
        + answersHeld() + " answers), "
        + (member.validates() ? "validator and iterator, trust anchor: the " + (recursive() ? "root's" : "zone's")
            + " DS, aggressive-nsec off" : "iterator only")
        + (member.transport().encrypted() ? ", " + member.transport().configName() + " on its own port" : "")
        + (recursive() ? ", recursive from the tree's root hints, qname-minimisation on" : "")
        + (stubZone() ? ", knotd as a stub-zone (authoritative, ratelimit applies)" : "")
        + (extraLines().isEmpty() ? "" : ", " + String.join(", ", extraLines()));
  }
}
