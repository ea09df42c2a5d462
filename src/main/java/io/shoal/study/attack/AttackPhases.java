package io.shoal.study.attack;

import com.typesafe.config.Config;
import io.shoal.study.host.LoopbackPort;
import io.shoal.study.host.Pause;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.scenario.AttackPlan;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.scenario.Transport;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.server.ServerUnderTest;
import io.shoal.study.server.ShoalUnderTest;
import io.shoal.study.server.StudyCertificate;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The phases of a robustness scenario against one of its members: a baseline, then each attack of
 * the {@link AttackPlan} while dnsperf replays the recipe's queries as the honest clients (at
 * honest_qps in every UDP phase when the recipe sets it), with a {@link ZoneClient} asking new names
 * of the zone beside them in those paced phases. A shoal member gets a second profile for
 * the plan's hostile zone whose upstream is a {@link HostileUpstream} started here, an unbound
 * member a forward-zone to it; every other name goes to knotd as in any study.
 */
public final class AttackPhases {
  /** The attack starts this long before dnsperf, so dnsperf measures it in full swing. */
  private static final Duration LEAD = Duration.ofSeconds(1);
  /** Beyond dnsperf's window, how long an attack may run before its own limit ends it. */
  private static final Duration SLACK = Duration.ofSeconds(3);
  /** Lets shoal's counters (published every second) catch up before they are read. */
  private static final Duration SETTLE = Duration.ofSeconds(2);
  private static final long SEED = 11;

  private final Scenario scenario;
  private final AttackPlan plan;
  private final LoadSettings load;
  private final Path queries;
  private final Path dir;
  private final Dnsperf dnsperf;
  private final PrintStream out;
  private final AttackPackets packets = new AttackPackets(SEED);
  /** Names the zone clients of the phases so far asked: the next one starts after them, so none is cached. */
  private long zoneClientNames;
  private String setupNote = "";
  /** The member's DoT and DoH ports while it runs; -1 when the plan has no DoT and DoH phases. */
  private int dotPort = -1;
  private int dohPort = -1;

  public AttackPhases(Scenario scenario, LoadSettings load, Path queries, Path dir, Dnsperf dnsperf, PrintStream out) {
    this.scenario = scenario;
    this.plan = scenario.attacks();
    this.load = load;
    this.queries = queries;
    this.dir = dir;
    this.dnsperf = dnsperf;
    this.out = out;
  }

  /** How long the phases take beyond starting one member: warm-up, then every phase. */
  public static Duration estimate(LoadSettings load, AttackPlan plan) {
    Duration total = load.warmup();
    for (AttackPlan.Phase phase : plan.phases()) {
      total = total.plus(LEAD).plus(duration(phase, plan, load)).plus(SETTLE).plus(Duration.ofSeconds(2));
    }
    return total;
  }

  /**
   * How long dnsperf measures in {@code phase}: the recipe's duration, or for the DoT and DoH
   * phases the plan's encrypted_holders.duration when shorter (four phases more per member).
   */
  static Duration duration(AttackPlan.Phase phase, AttackPlan plan, LoadSettings load) {
    Transport t = phase.transport();
    if (t == null || !t.encrypted() || plan.encryptedDuration() == null) {
      return load.duration();
    }
    return plan.encryptedDuration().compareTo(load.duration()) < 0 ? plan.encryptedDuration() : load.duration();
  }

  /** What the member ran as, for the summary; empty before {@link #run}. */
  public String setupNote() {
    return setupNote;
  }

  /** Runs every phase in order; one row each. Everything started here is stopped before it returns. */
  public List<PhaseRow> run(Member member, KnotUpstream knot, StartedProcesses processes, Prerequisites.Tools tools,
      Path shoalJar) throws IOException, StudyException {
    List<PhaseRow> rows = new ArrayList<>();
    try (HostileUpstream hostile = HostileUpstream.start(SEED)) {
      boolean shoal = member.kind() == MemberKind.SHOAL;
      Config config = shoal
          ? AttackMemberConfig.withHostileProfile(member.config(), plan, hostile.address())
          : AttackMemberConfig.withHostileForward(member.config(), plan, hostile.address());
      Files.createDirectories(dir);
      boolean encrypted = plan.encryptedHolders() > 0;
      if (encrypted) {
        StudyCertificate certificate = StudyCertificate.make(dir.resolve("tls"), processes, tools);
        dotPort = LoopbackPort.pick();
        dohPort = LoopbackPort.pick();
        config = shoal ? AttackMemberConfig.withEncryptedListeners(config, dotPort, dohPort, certificate)
            : AttackMemberConfig.withEncryptedInterfaces(config, dotPort, dohPort, certificate);
      }
      Member m = new Member(member.name(), member.kind(), config);
      processes.note("# in-process: hostile upstream on " + hostile.address().getAddress().getHostAddress() + ":"
          + hostile.address().getPort() + " for " + plan.hostileZone() + " (member " + m.name() + ")");
      try (ServerUnderTest server = shoal
          ? new ShoalUnderTest(m, scenario.recipe(), dir, knot.address(), processes, tools, shoalJar)
          : ServerUnderTest.of(m, scenario.recipe(), dir, knot.address(), processes, tools, shoalJar, null)) {
        setupNote = server.setupNote() + (shoal
            ? "; profile '" + AttackMemberConfig.HOSTILE + "' (" + plan.hostileZone()
                + ") forwards to the study's hostile upstream, timeout " + plan.hostileTimeout().toMillis() + " ms"
            : "; a forward-zone for " + plan.hostileZone() + " to the study's hostile upstream (unbound's own "
                + "timeouts)") + (encrypted ? "; DoT on port " + dotPort + " and DoH on port " + dohPort
                + " beside UDP and TCP, with a throw-away self-signed certificate" : "");
        server.start();
        if (!load.warmup().isZero()) {
          out.println("study: warming up " + m.name() + " for " + load.warmup().toSeconds() + " s");
          // not paced: the warm-up fills the cache, and a short one at honest_qps would leave names
          // for the baseline to miss (and a miss budget to answer SERVFAIL)
          dnsperf.run(server.port(), queries, load, load.warmup(), dir.resolve("dnsperf-warmup.txt"));
        }
        List<AttackPlan.Phase> phases = plan.phases();
        for (int i = 0; i < phases.size(); i++) {
          AttackPlan.Phase phase = phases.get(i);
          out.println("study: " + m.name() + " phase " + (i + 1) + " of " + phases.size() + ": "
              + phase.configName() + " (" + phase.what() + ")");
          Double baselineQps = rows.isEmpty() ? null : rows.get(0).honestQps();
          Double againstQps = rows.stream().filter(r -> r.phase().equals(phase.baseline().configName()))
              .map(PhaseRow::honestQps).findFirst().orElse(null);
          PhaseRow row = phase(m.name(), phase, dir.resolve("phases").resolve((i + 1) + "-" + phase.configName()),
              server, hostile, baselineQps, againstQps, processes);
          rows.add(row);
          out.println(String.format(Locale.ROOT, "study:   honest %.0f QPS%s%s, SERVFAIL %d, lost %d; RSS max %s "
              + "MiB, fds max %s; dropped %s", row.honestQps(),
              row.answeredOfOffered() == null ? "" : String.format(Locale.ROOT, " (%.3f of %d offered)",
                  row.answeredOfOffered(), row.honestOffered()),
              row.qpsVsBaseline() == null ? "" : String.format(Locale.ROOT, " (%.2fx %s)", row.qpsVsBaseline(),
                  phase.baseline().configName()),
              row.honestServfail(), row.honestLost(), row.rssMaxMib() == null ? "?" : String.format(Locale.ROOT,
                  "%.0f", row.rssMaxMib()), row.fdsMax() == null ? "?" : row.fdsMax(),
              row.droppedTotal() == 0 ? "nothing" : row.droppedWords()));
          if (row.zoneClient() != null) {
            out.println("study:   zone client " + row.zoneClient().words());
          }
          if (row.held() != null) {
            out.println("study:   " + row.attackDetail());
          }
        }
        int status = server.stop();
        if (status != 0) {
          out.println("study: note: " + m.name() + " exited with status " + status + " on SIGTERM (expected 0)");
        }
      }
    }
    return rows;
  }

  /**
   * The honest clients' load in {@code phase}: held to honest_qps in every UDP phase of a paced
   * plan, with honest_outstanding queries outstanding when the plan sets it.
   */
  public LoadSettings honestLoad(AttackPlan.Phase phase) {
    if (!phase.pacedIn(plan)) {
      return load;
    }
    LoadSettings paced = load.paced(plan.honestQps());
    return plan.honestOutstanding() == null ? paced : paced.withOutstanding(plan.honestOutstanding());
  }

  /**
   * Queries the honest clients were to send in {@code phase} at their fixed rate over {@code duration}
   * (dnsperf -Q over -l seconds); null when they were not paced.
   */
  Long offered(AttackPlan.Phase phase, Duration duration) {
    return phase.pacedIn(plan) ? (long) plan.honestQps() * Math.max(1, duration.toSeconds()) : null;
  }

  /**
   * @param baselineQps the UDP baseline's honest QPS (the miss flood's rate follows it)
   * @param againstQps the honest QPS of the phase this one is compared with; null for a baseline
   */
  private PhaseRow phase(String member, AttackPlan.Phase phase, Path pd, ServerUnderTest server,
      HostileUpstream hostile, Double baselineQps, Double againstQps, StartedProcesses processes)
      throws IOException, StudyException {
    Files.createDirectories(pd);
    Map<String, Long> before = Refusals.of(server, pd.resolve("metrics-before.txt"));
    Map<HostileUpstream.Misbehaviour, Long> hostileBefore = hostile.counts();
    Duration measured = duration(phase, plan, load);
    Duration limit = LEAD.plus(measured).plus(SLACK);
    Attack.Report report;
    Attack.Report zoneReport = null;
    PhaseRow.ZoneClientCounts zone = null;
    String output;
    Double rss;
    Long fds;
    try (ProcessFootprint footprint = ProcessFootprint.watch(server.pid());
        Attack attack = start(phase, server, limit, baselineQps, processes);
        ZoneClient zoneClient = zoneClient(phase, server.address(), limit, processes)) {
      Pause.sleep(LEAD);
      List<String> flags = phase.overTcp() ? List.of("-v", "-m", phase.transport().configName()) : List.of("-v");
      List<StartedProcesses.Running> running = dnsperf.launchAtOnce(List.of(port(phase, server)), List.of(queries),
          honestLoad(phase), measured, flags, List.of(pd.resolve("dnsperf.txt")));
      output = dnsperf.awaitAll(running, measured).get(0);
      report = attack.stop();
      if (zoneClient != null) {
        zoneReport = zoneClient.stop();
        zone = zoneClient.counts();
        zoneClientNames += zone.asked();
      }
      rss = footprint.maxRssMib();
      fds = footprint.maxFds();
    }
    Pause.sleep(SETTLE);
    Map<String, Long> after = Refusals.of(server, pd.resolve("metrics-after.txt"));
    DnsperfReport dnsperfReport = DnsperfReport.parse(output);
    PhaseRow.Honest honest = PhaseRow.Honest.of(output);
    keepStatisticsOnly(pd.resolve("dnsperf.txt"), output, honest);
    String detail = report.detail();
    if (phase == AttackPlan.Phase.HOSTILE_UPSTREAM) {
      Map<HostileUpstream.Misbehaviour, Long> now = hostile.counts();
      now.replaceAll((k, v) -> v - hostileBefore.get(k));
      detail += "; the hostile upstream received " + now.values().stream().mapToLong(Long::longValue).sum()
          + " queries (" + HostileUpstream.describe(now) + ")";
    }
    Files.writeString(pd.resolve("attack.txt"), detail + "\n" + (zoneReport == null ? "" : zoneReport.detail() + "\n"),
        StandardCharsets.UTF_8);
    double qps = dnsperfReport.queriesPerSecond();
    // a baseline is compared with itself: 1 when it measured anything
    double against = phase.baseline() == phase ? qps : againstQps == null ? 0 : againstQps;
    return new PhaseRow(member, phase.configName(), report.sent(), report.perSecond(), qps,
        against > 0 ? qps / against : null, dnsperfReport.avgLatencyMillis(), honest.p99LatencyMs(),
        offered(phase, measured), dnsperfReport.completed(), honest.servfail(), dnsperfReport.lost(), rss, fds,
        Refusals.delta(before, after), detail, zone, report.held());
  }

  /**
   * Whether a zone client asks beside the honest clients in {@code phase}: in every phase whose
   * honest clients are paced, unless the plan turns it off (zone_client_qps = 0).
   */
  boolean zoneClientIn(AttackPlan.Phase phase) {
    return phase.pacedIn(plan) && plan.zoneClientQps() > 0;
  }

  /** The phase's zone client, started; null when {@link #zoneClientIn} says it has none. */
  private ZoneClient zoneClient(AttackPlan.Phase phase, InetSocketAddress target, Duration limit,
      StartedProcesses processes) throws IOException {
    if (!zoneClientIn(phase)) {
      return null;
    }
    String zone = KnotUpstream.apex(scenario.recipe());
    processes.note("# in-process: zone client from " + ZoneClient.SOURCE + " to " + target.getAddress().getHostAddress()
        + ":" + target.getPort() + ", " + plan.zoneClientQps() + " new names of " + zone + " a second, for at most "
        + limit.toSeconds() + " s");
    return ZoneClient.start(zone, target, plan.zoneClientQps(), limit, SEED, zoneClientNames);
  }

  /** The port the honest clients and the attack of {@code phase} go to: DoT's, DoH's, or the DNS port. */
  private int port(AttackPlan.Phase phase, ServerUnderTest server) {
    Transport t = phase.transport();
    return t == Transport.DOT ? dotPort : t == Transport.DOH ? dohPort : server.port();
  }

  /** The phase's attack, started; the baselines' do nothing. */
  private Attack start(AttackPlan.Phase phase, ServerUnderTest server, Duration limit, Double baselineQps,
      StartedProcesses processes) throws IOException {
    String zone = KnotUpstream.apex(scenario.recipe());
    InetSocketAddress target = new InetSocketAddress(server.address().getAddress(), port(phase, server));
    Attack attack = switch (phase) {
      case BASELINE, TCP_BASELINE, DOT_BASELINE, DOH_BASELINE -> () -> new Attack.Report(0, 0, "no attack");
      case DOT_HOLDERS, DOH_HOLDERS -> TcpSiege.silent(target, plan.encryptedHolders(), limit);
      case MALFORMED_UDP -> UdpFlood.start("malformed UDP", target, plan.malformedPerSecond(), limit,
          () -> packets.malformed(zone));
      case TCP_DRIP_IDLE -> TcpSiege.start(target, plan.dripConnections(), plan.idleConnections(), limit,
          AttackPackets.query(0x5151, "drip." + zone, 1));
      case TCP_HOLDERS -> TcpSiege.hold(target, plan.holderEmptyConnections(), plan.holderIdleConnections(), limit);
      case MISS_FLOOD -> UdpFlood.start("unique-name queries", target, missRate(baselineQps), limit,
          () -> packets.uniqueQuery(zone));
      case MISS_FLOOD_SPREAD -> UdpFlood.spread("unique-name queries from " + UdpFlood.SPREAD_NETWORKS + " networks",
          target, missRate(baselineQps), limit, () -> packets.uniqueQuery(zone));
      case HOSTILE_UPSTREAM -> UdpFlood.start("queries for " + plan.hostileZone(), target, plan.hostilePerSecond(),
          limit, () -> packets.hostileQuery(plan.hostileZone()));
    };
    if (phase.baseline() != phase) {
      processes.note("# in-process: " + phase.configName() + " attack on " + target.getAddress().getHostAddress()
          + ":" + target.getPort() + " for at most " + limit.toSeconds() + " s");
    }
    return attack;
  }

  /**
   * The miss flood's rate: the plan's multiple of the honest clients' rate (honest_qps when paced,
   * the baseline's measured QPS otherwise), under its ceiling.
   */
  int missRate(Double baselineQps) {
    double base = plan.paced() ? plan.honestQps() : baselineQps == null ? 0 : baselineQps;
    return (int) Math.max(1, Math.min(plan.missMaxPerSecond(), Math.ceil(plan.missTimesBaseline() * base)));
  }

  /**
   * dnsperf -v prints a line per query (tens of megabytes a phase); once counted they are left out
   * of the kept output, which says so and what they added up to.
   */
  private static void keepStatisticsOnly(Path file, String output, PhaseRow.Honest honest) throws IOException {
    String kept = output.lines().filter(l -> !l.startsWith("> ")).collect(Collectors.joining("\n"));
    String p99 = honest.p99LatencyMs() == null ? "none" : String.format(Locale.ROOT, "%.3f ms", honest.p99LatencyMs());
    Files.writeString(file, kept + "\n# per-query lines (-v) removed after counting: " + honest.answered()
        + " answers, " + honest.servfail() + " SERVFAIL, p99 latency " + p99 + "\n", StandardCharsets.UTF_8);
  }
}
