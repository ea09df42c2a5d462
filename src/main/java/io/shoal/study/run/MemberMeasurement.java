package io.shoal.study.run;

import io.shoal.study.cluster.RemoteLookupLatency;
import io.shoal.study.cluster.RemoteLookupProbe;
import io.shoal.study.cluster.RemoteLookups;
import io.shoal.study.cluster.ShoalNodes;
import io.shoal.study.host.Pause;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.LatencyPercentiles;
import io.shoal.study.measure.MetricsScrape;
import io.shoal.study.measure.ProcessCpu;
import io.shoal.study.report.ClusterRow;
import io.shoal.study.report.ResultRow;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.DnssecAnswerCheck;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.server.PolicyListCheck;
import io.shoal.study.server.ServerUnderTest;
import io.shoal.study.server.ShoalUnderTest;
import io.shoal.study.server.StudyCertificate;
import io.shoal.study.timeline.KillTimeline;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Measures one member of a plain study in its directory: a one-server member (start, warm up,
 * read statistics, dnsperf, read statistics, stop), or a member of several shoal nodes (one
 * dnsperf per node at once, the remote-lookup probe of a cluster, or the node-kill test). It keeps
 * what the summary reports beside the rows: the probes' results and the kill test's timeline.
 */
final class MemberMeasurement {
  /** Lets counters that are published on a timer (shoal's, every second) catch up before reading. */
  static final Duration SETTLE = Duration.ofSeconds(2);

  private final RunSettings run;
  private final Scenario scenario;
  private final Prerequisites.Tools tools;
  private final StartedProcesses processes;
  private final PrintStream out;
  private final Dnsperf dnsperf;
  private final MeasuredLoad measuredLoad;
  private final KillTest killTest;
  /** The query file of each node index: node 0 (and every one-node member) replays queries.txt. */
  private final List<Path> queryFiles;
  /** The remote-lookup probe of each clustered member that ran it, for the summary. */
  private final Map<String, String> probes = new LinkedHashMap<>();
  /** The kill test, once its member ran. */
  private KillTimeline.Event killEvent;
  private List<KillTimeline.Second> killSeconds;

  /** Names of the run's generated domain list that a member taking it must answer by the list. */
  private final List<String> listedNames;

  /**
   * @param listedNames names of the run's generated domain list (its first and last) that a member
   *     taking the list is asked for before its warm-up, or an empty list when the run wrote none
   */
  MemberMeasurement(RunSettings run, Dnsperf dnsperf, List<Path> queryFiles, List<String> listedNames) {
    this.run = run;
    this.scenario = run.scenario();
    this.tools = run.tools();
    this.processes = run.processes();
    this.out = run.out();
    this.dnsperf = dnsperf;
    this.measuredLoad = new MeasuredLoad(scenario, run.runDir(), processes, dnsperf);
    this.killTest = new KillTest(dnsperf, processes, out, run.quick());
    this.queryFiles = queryFiles;
    this.listedNames = listedNames;
  }

  /**
   * Fails unless a shoal node of a member that takes the generated domain list answers the list's
   * names by it: a node that started without its list would be measured as a node without one.
   */
  private void confirmPolicyList(Member m, ServerUnderTest server) throws StudyException, IOException {
    if (m.policyList() != null && server instanceof ShoalUnderTest shoal) {
      PolicyListCheck.confirm(shoal, listedNames, m.policyList(), shoal.directory().resolve("policy-check.txt"));
      out.println("study: " + shoal.label() + " answers the domain list's names by it (" + m.policyList() + ")");
    }
  }

  /**
   * In a signed recipe, asks the member for one name of the query file twice with DO (a miss, then
   * a hit, at the start; the name again after the measured run) and fails unless each answer is
   * signed and carries AD exactly when the member validates ({@link DnssecAnswerCheck}).
   */
  private void checkDnssec(Member m, ServerUnderTest server, String when) throws StudyException {
    if (!scenario.recipe().signed()) {
      return;
    }
    String name = "n0." + KnotUpstream.apex(scenario.recipe());
    int asks = when.equals("start") ? 2 : 1;
    for (int i = 1; i <= asks; i++) {
      DnssecAnswerCheck.require(server, m.validates(), name, tools, processes,
          server.directory().resolve("dnssec-check-" + when + "-" + i + ".txt"));
    }
    out.println("study: " + server.label() + " answers " + name + " with DO signed"
        + (m.validates() ? " and with AD (validated)" : " and without AD (not validated)") + " at the " + when);
  }

  /**
   * Measures member {@code m} in {@code dir} against {@code knot} under {@code load} (the run's, or
   * a paced member's); its setup note goes to {@code setups}.
   */
  Measured measure(Member m, Path dir, KnotUpstream knot, Map<String, String> setups, LoadSettings load)
      throws IOException, StudyException {
    return m.isNodeGroup() ? measureNodes(m, dir, knot, setups, load) : measureServer(m, dir, knot, setups, load);
  }

  /** The remote-lookup probe of each clustered member that ran it, for the summary. */
  Map<String, String> probes() {
    return probes;
  }

  /** The kill test, once its member ran; null before. */
  KillTimeline.Event killEvent() {
    return killEvent;
  }

  /** The kill test's seconds, once its member ran; null before. */
  List<KillTimeline.Second> killSeconds() {
    return killSeconds;
  }

  private Measured measureServer(Member m, Path dir, KnotUpstream knot, Map<String, String> setups, LoadSettings load)
      throws IOException, StudyException {
    try (WarmServer warm = startWarm(m, dir, knot, setups, load)) {
      Measured measured = measureWarm(warm, dir, knot, load);
      stop(warm);
      return measured;
    }
  }

  /** A one-server member, started and warmed up: measured once, or in slices beside the others. */
  record WarmServer(Member member, ServerUnderTest server) implements AutoCloseable {
    /** Stops the server if it still runs (SIGTERM, SIGKILL after a bounded wait). */
    @Override
    public void close() {
      server.close();
    }
  }

  /**
   * Starts one-server member {@code m} in {@code dir} against {@code knot}, checks it, and warms it
   * up under {@code load}; its setup note goes to {@code setups}.
   */
  WarmServer startWarm(Member m, Path dir, KnotUpstream knot, Map<String, String> setups, LoadSettings load)
      throws IOException, StudyException {
    Files.createDirectories(dir);
    StudyCertificate certificate = m.transport().encrypted()
        ? StudyCertificate.make(dir.resolve("tls"), processes, tools) : null;
    ServerUnderTest server = ServerUnderTest.of(m, scenario.recipe(), dir, knot.address(), processes, tools,
        run.jarOf(m), certificate);
    try {
      setups.put(m.name(), server.setupNote() + "; queried with dnsperf -m " + m.transport().configName()
          + "; CPU time read from " + server.servingProcesses() + run.ownJarNote(m));
      server.start();
      confirmPolicyList(m, server);
      checkDnssec(m, server, "start");
      if (!load.warmup().isZero()) {
        dnsperf.run(server.transport(), server.queryPort(), queryFiles.get(0), load, load.warmup(),
            dir.resolve("dnsperf-warmup.txt"));
      }
      if (server instanceof ShoalUnderTest shoal) {
        shoal.enforceQuota();
      }
      return new WarmServer(m, server);
    } catch (IOException | StudyException | RuntimeException e) {
      server.close();
      throw e;
    }
  }

  /**
   * One measured dnsperf window of a warm member, its files in {@code dir}: counters and knotd's
   * query count before and after, the server's CPU time right around dnsperf.
   */
  Measured measureWarm(WarmServer warm, Path dir, KnotUpstream knot, LoadSettings load)
      throws IOException, StudyException {
    Files.createDirectories(dir);
    Member m = warm.member();
    ServerUnderTest server = warm.server();
    Path queries = queryFiles.get(0);
    Pause.sleep(SETTLE);
    CacheCounters before = server.counters(dir.resolve("stats-before.txt"));
    long upstreamBefore = knot.queryCount(dir.resolve("knotd-stats-before.txt"));
    // CPU is read right around dnsperf, after the statistics: scraping them costs the server CPU too
    MeasuredLoad.LoadRun loadRun = null;
    DnsperfReport report;
    double cpuSeconds;
    if (server.transport() == io.shoal.study.scenario.Transport.UDP) {
      loadRun = measuredLoad.run(List.of(server), List.of(server.queryPort()), List.of(queries), load,
          List.of(dir.resolve("dnsperf.txt")), dir);
      report = loadRun.reports().get(0);
      cpuSeconds = loadRun.serverCpuSeconds();
    } else {
      ProcessCpu.Sample cpuBefore = ProcessCpu.sample(server.servingPids(), dir.resolve("cpu-before.txt"));
      report = dnsperf.run(server.transport(), server.queryPort(), queries, load, load.duration(),
          dir.resolve("dnsperf.txt"));
      ProcessCpu.Sample cpuAfter = ProcessCpu.sample(server.servingPids(), dir.resolve("cpu-after.txt"));
      cpuSeconds = ProcessCpu.secondsBetween(cpuBefore, cpuAfter, measuredLoad.ticksPerSecond());
    }
    Pause.sleep(SETTLE);
    CacheCounters window = server.counters(dir.resolve("stats-after.txt")).minus(before);
    long upstream = knot.queryCount(dir.resolve("knotd-stats-after.txt")) - upstreamBefore;
    Files.writeString(dir.resolve("upstream-queries.txt"), upstream + "\n");
    // a member that answers without the study's upstream (knotd itself) has no hit rate to speak of
    ResultRow row = ResultRow.of(m.name(), server.lmdbSync(), server.runtime(), server.workers(), report,
        server.forwardsToUpstream() ? upstream : null, window, cpuSeconds);
    return new Measured(row, ClusterRow.of(m.name(), 1, false, report, upstream, window, RemoteLookups.NONE,
        RemoteLookupLatency.NONE, null, cpuSeconds, measuredLoad.capacity(m, load, loadRun)));
  }

  /** Checks a signed member's answers once more, then stops it; a shoal that exits unclean is noted. */
  void stop(WarmServer warm) throws StudyException {
    Member m = warm.member();
    checkDnssec(m, warm.server(), "end");
    int status = warm.server().stop();
    if (m.kind() == MemberKind.SHOAL && status != 0) {
      out.println("study: note: " + m.name() + " exited with status " + status + " on SIGTERM (expected 0)");
    }
  }

  /**
   * A member of several nodes: one dnsperf per node, all at once, each with the recipe's whole
   * window; counts and QPS summed over the nodes, latency averaged over every completed query.
   * In the kill test dnsperf runs against all nodes but the one killed, with per-second statistics.
   */
  private Measured measureNodes(Member m, Path dir, KnotUpstream knot, Map<String, String> setups, LoadSettings load)
      throws IOException, StudyException {
    Files.createDirectories(dir);
    try (ShoalNodes group = ShoalNodes.of(m, scenario.recipe(), dir, knot.address(), processes, tools, run.jarOf(m))) {
      setups.put(m.name(), group.setupNote() + (m.kill() == null
          ? "; CPU time read from the " + m.nodes() + " shoal JVMs, summed"
          : "; CPU time not measured (a node is killed mid-run)") + run.ownJarNote(m));
      group.start();
      List<ShoalUnderTest> all = group.nodes();
      for (ShoalUnderTest n : all) {
        confirmPolicyList(m, n);
      }
      if (!load.warmup().isZero()) {
        dnsperf.runAtOnce(ports(all), queriesFor(all, group), load, load.warmup(),
            outputs(all, "dnsperf-warmup.txt"));
      }
      for (ShoalUnderTest n : all) {
        n.enforceQuota();
      }
      Pause.sleep(SETTLE);
      List<MetricsScrape> before = new ArrayList<>();
      for (ShoalUnderTest n : all) {
        before.add(n.scrape(n.directory().resolve("stats-before.txt")));
      }
      long upstreamBefore = knot.queryCount(dir.resolve("knotd-stats-before.txt"));

      List<ShoalUnderTest> measured = all;
      List<ShoalUnderTest> killed = List.of();
      List<DnsperfReport> reports = new ArrayList<>();
      Double cpuSeconds = null;
      MeasuredLoad.LoadRun loadRun = null;
      if (m.kill() == null) {
        loadRun = measuredLoad.run(all, ports(all), queriesFor(all, group), load, outputs(all, "dnsperf.txt"), dir);
        reports = loadRun.reports();
        cpuSeconds = loadRun.serverCpuSeconds();
      } else {
        killed = m.kill().nodes().stream().map(group::node).toList();
        List<ShoalUnderTest> victims = killed;
        measured = all.stream().filter(n -> !victims.contains(n)).toList();
        KillTest.Outcome kill = killTest.run(m, victims, measured, group, queriesFor(measured, group), load, dir);
        killSeconds = kill.seconds();
        killEvent = kill.event();
        for (String output : kill.outputs()) {
          reports.add(DnsperfReport.parse(output));
        }
      }
      Pause.sleep(SETTLE);

      CacheCounters window = null;
      RemoteLookups remote = RemoteLookups.NONE;
      List<MetricsScrape> measuredBefore = new ArrayList<>();
      List<MetricsScrape> measuredAfter = new ArrayList<>();
      long servfail = 0;
      for (ShoalUnderTest n : measured) {
        MetricsScrape after = n.scrape(n.directory().resolve("stats-after.txt"));
        MetricsScrape was = before.get(all.indexOf(n));
        measuredBefore.add(was);
        measuredAfter.add(after);
        CacheCounters delta = ShoalUnderTest.countersOf(after).minus(ShoalUnderTest.countersOf(was));
        window = window == null ? delta : window.plus(delta);
        remote = remote.plus(RemoteLookups.of(after).minus(RemoteLookups.of(was)));
        servfail += Math.round(after.sum("shoal_queries_total", "rcode", "SERVFAIL")
            - was.sum("shoal_queries_total", "rcode", "SERVFAIL"));
      }
      if (m.kill() != null && killEvent != null) {
        // what the servers say, beside what dnsperf saw: a SERVFAIL dnsperf gave up on still counts here
        killEvent = killEvent.withServfailCounted(servfail);
      }
      long upstream = knot.queryCount(dir.resolve("knotd-stats-after.txt")) - upstreamBefore;
      Files.writeString(dir.resolve("upstream-queries.txt"), upstream + "\n");
      DnsperfReport total = DnsperfReport.sumOver(reports);
      Files.writeString(dir.resolve("dnsperf-summed.txt"), summed(measured, reports, total)
          + (loadRun == null || loadRun.percentiles() == null ? "" : "# latency over every node's completed queries: "
          + LatencyPercentiles.of(loadRun.percentiles()).describe() + "\n"), StandardCharsets.UTF_8);

      Double overhead = null;
      if (m.cluster() && m.kill() == null && m.nodes() >= 2) {
        out.println("study: " + m.name() + ": measuring the remote-lookup overhead (idle, one query at a time)");
        RemoteLookupProbe.Result probe = RemoteLookupProbe.run(group, scenario.recipe(), dnsperf,
            dir.resolve("remote-lookup-probe"));
        probes.put(m.name(), probe.describe());
        overhead = probe.overheadMs();
      }
      int status = group.stop(killed);
      if (status != 0) {
        out.println("study: note: a node of " + m.name() + " exited with status " + status
            + " on SIGTERM (expected 0)");
      }
      ShoalUnderTest first = all.get(0);
      ResultRow row = ResultRow.of(m.name(), first.lmdbSync(), first.runtime(), first.workers() * all.size(), total,
          upstream, window, cpuSeconds);
      return new Measured(row, ClusterRow.of(m.name(), m.nodes(), m.cluster(), total, upstream, window, remote,
          RemoteLookupLatency.between(measuredBefore, measuredAfter), overhead, cpuSeconds,
          measuredLoad.capacity(m, load, loadRun)));
    }
  }

  static List<Integer> ports(List<ShoalUnderTest> nodes) {
    return nodes.stream().map(ShoalUnderTest::port).toList();
  }

  /** Each node's query file: node i of a member replays the i-th file. */
  private List<Path> queriesFor(List<ShoalUnderTest> nodes, ShoalNodes group) {
    return nodes.stream().map(n -> queryFiles.get(group.nodes().indexOf(n))).toList();
  }

  static List<Path> outputs(List<ShoalUnderTest> nodes, String file) {
    return nodes.stream().map(n -> n.directory().resolve(file)).toList();
  }

  private static String summed(List<ShoalUnderTest> nodes, List<DnsperfReport> reports, DnsperfReport total) {
    StringBuilder t = new StringBuilder(
        "# node sent completed lost qps avg_latency_ms (each node's measured dnsperf run, then their sum)\n");
    for (int i = 0; i < nodes.size(); i++) {
      t.append(line(nodes.get(i).label(), reports.get(i)));
    }
    return t.append(line("sum", total)).toString();
  }

  private static String line(String what, DnsperfReport r) {
    return String.format(java.util.Locale.ROOT, "%s %d %d %d %.1f %.3f%n", what, r.sent(), r.completed(), r.lost(),
        r.queriesPerSecond(), r.avgLatencyMillis());
  }
}
