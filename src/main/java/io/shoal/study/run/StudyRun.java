package io.shoal.study.run;

import io.shoal.study.attack.AttackPhases;
import io.shoal.study.attack.PhaseRow;
import io.shoal.study.cluster.ClusterFormation;
import io.shoal.study.cluster.RemoteLookupProbe;
import io.shoal.study.cluster.RemoteLookups;
import io.shoal.study.cluster.ShoalNodes;
import io.shoal.study.host.HostFacts;
import io.shoal.study.host.Pause;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.host.ToolVersions;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.MetricsScrape;
import io.shoal.study.measure.ProcessCpu;
import io.shoal.study.report.ClusterRow;
import io.shoal.study.report.OutageChart;
import io.shoal.study.report.OutageSummary;
import io.shoal.study.report.ResultRow;
import io.shoal.study.report.RobustnessSummary;
import io.shoal.study.report.RoundRow;
import io.shoal.study.report.StudyCharts;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.report.StudySummary;
import io.shoal.study.scenario.KillPlan;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import io.shoal.study.scenario.QueryFile;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.server.ServerUnderTest;
import io.shoal.study.server.ShoalUnderTest;
import io.shoal.study.timeline.KillTimeline;
import io.shoal.study.timeline.OutageTimeline;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * One run of a scenario: the query file, knotd, then each member in turn (start, warm up, read
 * statistics, measure with dnsperf, read statistics, stop), and finally results.csv, the charts
 * and summary.md in the run directory.
 */
public final class StudyRun {
  /** Lets counters that are published on a timer (shoal's, every second) catch up before reading. */
  static final Duration SETTLE = Duration.ofSeconds(2);
  /** Rough cost of starting and stopping one member, for the time-left estimate. */
  static final Duration MEMBER_OVERHEAD = Duration.ofSeconds(12);
  /**
   * How long after a kill the study waits for the cluster to remove the node: the failure
   * detector's few seconds, the Split Brain Resolver's stable-after (20 s), and room for a busy host.
   */
  private static final Duration DEPARTURE_LIMIT = Duration.ofSeconds(90);
  /** Forming a cluster, then the remote-lookup probe: beyond starting its nodes. */
  private static final Duration CLUSTER_OVERHEAD = Duration.ofSeconds(45);

  private final Scenario scenario;
  private final Path runDir;
  private final boolean quick;
  private final Path shoalJar;
  private final Prerequisites.Tools tools;
  private final boolean root;
  private final Map<String, String> skipped;
  private final PrintStream out;
  private final StartedProcesses processes;
  private final Dnsperf dnsperf;
  /** The query file of each node index: node 0 (and every one-node member) replays queries.txt. */
  private final List<Path> queryFiles = new ArrayList<>();
  /** The remote-lookup probe of each clustered member that ran it, for the summary. */
  private final Map<String, String> probes = new LinkedHashMap<>();
  /** The kill test, once its member ran. */
  private KillTimeline.Event killEvent;
  private List<KillTimeline.Second> killSeconds;
  /**
   * A robustness scenario: its one shoal member through every attack phase, then robustness.csv,
   * its chart and summary.md. Returns 0; a phase that fails ends the run with the exception.
   */
  private int runPhases(String startedAt) throws IOException, StudyException {
    Member m = scenario.members().get(0);
    AttackPhases phases = new AttackPhases(scenario, load(), queryFiles.get(0),
        runDir.resolve("members").resolve(m.name()), dnsperf, out);
    List<PhaseRow> rows;
    out.println("study: starting knotd");
    try (KnotUpstream knot = KnotUpstream.start(runDir.resolve("knotd"), scenario.recipe(), root, tools, processes)) {
      rows = phases.run(m, knot, processes, tools, shoalJar);
    }
    Path csv = StudyCsv.ROBUSTNESS.write(runDir, rows);
    List<PhaseRow> written = StudyCsv.ROBUSTNESS.read(csv);
    StudyCharts.writeRobustness(runDir.resolve(RobustnessSummary.PNG), written,
        scenario.name() + (quick ? " (quick smoke run)" : "") + ", " + startedAt);
    RobustnessSummary.Context context = new RobustnessSummary.Context(scenario, startedAt, quick, load(),
        phases.setupNote(), HostFacts.probe(dataPath()),
        ToolVersions.probe(tools, shoalJar, processes, runDir.resolve("versions")), processes.commands());
    Files.writeString(runDir.resolve("summary.md"), RobustnessSummary.render(context, written), StandardCharsets.UTF_8);
    out.println("study: wrote " + csv + ", " + RobustnessSummary.PNG + " and summary.md");
    for (String line : RobustnessSummary.atAGlance(written)) {
      out.println("  " + line);
    }
    return 0;
  }

  /** The kernel's clock ticks per second, read once, for CPU time from /proc. */
  private long ticksPerSecond;

  /**
   * @param skipped members not to run, with the reason the summary gives
   */
  public StudyRun(Scenario scenario, Path runDir, boolean quick, Path shoalJar, Prerequisites.Tools tools,
      boolean root, Map<String, String> skipped, PrintStream out, StartedProcesses processes) {
    this.scenario = scenario;
    this.runDir = runDir;
    this.quick = quick;
    this.shoalJar = shoalJar;
    this.tools = tools;
    this.root = root;
    this.skipped = skipped;
    this.out = out;
    this.processes = processes;
    this.dnsperf = new Dnsperf(tools, processes);
  }

  /**
   * Checks every shoal member's configuration as shoal would, before anything starts.
   *
   * @throws ScenarioException naming the member and key at fault
   */
  public static void checkShoalMembers(Scenario scenario) {
    for (Member m : scenario.members()) {
      if (m.kind() == MemberKind.SHOAL) {
        ShoalUnderTest.check(scenario.recipe(), m);
      }
    }
  }

  /** The load this run applies: the recipe's, or its quick variant. */
  public LoadSettings load() {
    return quick ? scenario.recipe().quick() : scenario.recipe().load();
  }

  /** A member's results: its results.csv row, and its cluster.csv row. */
  private record Measured(ResultRow row, ClusterRow cluster) {}

  /** Runs everything; returns 0 if every member produced a row, 1 otherwise. */
  public int run() throws IOException, StudyException {
    String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    Files.createDirectories(runDir);
    if (scenario.source() != null) {
      Files.copy(scenario.source(), runDir.resolve("scenario.conf"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    QueryFile recipeQueries = scenario.recipe().queries();
    out.println("study: " + scenario.name() + " -> " + runDir);
    out.println("study: writing " + recipeQueries.lines() + " queries over " + recipeQueries.names()
        + " names (seed " + recipeQueries.seed() + ")");
    queryFiles.add(runDir.resolve("queries.txt"));
    recipeQueries.write(queryFiles.get(0));
    for (int i = 1; i < scenario.maxNodes(); i++) {
      // Clients of different nodes ask different names in a different order, as real clients
      // would: the same file on every node would line their misses up in time.
      QueryFile perNode = new QueryFile(recipeQueries.zone(), recipeQueries.names(), recipeQueries.lines(),
          recipeQueries.seed() + i);
      out.println("study: writing the query file of node " + i + " (seed " + perNode.seed() + ")");
      queryFiles.add(runDir.resolve("queries-node" + i + ".txt"));
      perNode.write(queryFiles.get(i));
    }
    if (scenario.attacks() != null) {
      return runPhases(startedAt);
    }
    if (scenario.outage() != null) {
      return runOutage(startedAt);
    }

    Map<String, String> setups = new LinkedHashMap<>();
    Map<String, String> notRun = new LinkedHashMap<>(skipped);
    List<Member> members = scenario.members().stream().filter(m -> !skipped.containsKey(m.name())).toList();
    int rounds = rounds();
    // Members take turns, round after round, so a slow drift of the host (another tenant, a
    // warming disk) touches every member alike instead of whichever ran last.
    Map<String, List<Measured>> measuredRounds = new LinkedHashMap<>();
    List<RoundRow> roundRows = new ArrayList<>();

    out.println("study: starting knotd");
    try (KnotUpstream knot = KnotUpstream.start(runDir.resolve("knotd"), scenario.recipe(), root, tools, processes)) {
      int runs = rounds * members.size();
      int done = 0;
      for (int round = 1; round <= rounds; round++) {
        for (int i = 0; i < members.size(); i++, done++) {
          Member m = members.get(i);
          if (notRun.containsKey(m.name())) {
            continue;
          }
          long left = members.subList(i, members.size()).stream().map(this::estimate)
              .reduce(Duration.ZERO, Duration::plus)
              .plus(estimatedRound().multipliedBy(rounds - round)).toSeconds();
          out.println("study: " + (rounds > 1 ? "round " + round + " of " + rounds + ", " : "")
              + "member " + (i + 1) + " of " + members.size() + ": " + m.name() + " — about " + left + " s left"
              + (rounds > 1 ? " (" + done + " of " + runs + " runs done)" : ""));
          Path dir = runDir.resolve("members").resolve(m.name());
          if (rounds > 1) {
            dir = dir.resolve("round-" + round);
          }
          try {
            Measured measured = m.isNodeGroup() ? measureNodes(m, dir, knot, setups) : measure(m, dir, knot, setups);
            measuredRounds.computeIfAbsent(m.name(), k -> new ArrayList<>()).add(measured);
            roundRows.add(new RoundRow(round, measured.row()));
          } catch (StudyException | IOException | RuntimeException e) {
            String why = e.getMessage() == null ? e.toString() : e.getMessage();
            out.println("study: member " + m.name() + " failed: " + why);
            notRun.put(m.name(), "failed" + (rounds > 1 ? " in round " + round : "") + ": " + abbreviated(why)
                + " (see " + runDir.relativize(dir) + "/)");
            measuredRounds.remove(m.name());
          }
        }
      }
    }
    List<ResultRow> rows = new ArrayList<>();
    List<ClusterRow> clusterRows = new ArrayList<>();
    for (List<Measured> runsOfMember : measuredRounds.values()) {
      Measured median = median(runsOfMember);
      rows.add(median.row());
      clusterRows.add(median.cluster());
    }
    List<RoundRow> roundsWritten = List.of();
    if (rounds > 1) {
      Path roundsCsv = StudyCsv.ROUNDS.write(runDir,
          roundRows.stream().filter(r -> measuredRounds.containsKey(r.row().member())).toList());
      roundsWritten = StudyCsv.ROUNDS.read(roundsCsv);
    }

    String subtitle = scenario.name() + (quick ? " (quick smoke run)" : "") + ", " + startedAt;
    Path csv = StudyCsv.RESULTS.write(runDir, rows);
    List<ResultRow> written = StudyCsv.RESULTS.read(csv);
    StudyCharts.write(runDir, written, subtitle);
    List<String> files = new ArrayList<>(StudyCharts.FILES);
    if (rounds > 1) {
      files.add(StudyCsv.ROUNDS.file());
    }
    // Every cluster number in the summary comes from the files as written, like results.csv's.
    List<ClusterRow> clusterWritten = List.of();
    if (scenario.hasNodeGroups()) {
      Path clusterCsv = StudyCsv.CLUSTER.write(runDir, clusterRows);
      clusterWritten = StudyCsv.CLUSTER.read(clusterCsv);
      StudyCharts.writeCluster(runDir, clusterWritten, subtitle);
      files.add(StudyCsv.CLUSTER.file());
      files.addAll(StudyCharts.CLUSTER_FILES);
    }
    List<KillTimeline.Second> killWritten = null;
    if (killSeconds != null) {
      Path killCsv = StudyCsv.KILL_TIMELINE.write(runDir, killSeconds);
      killWritten = StudyCsv.KILL_TIMELINE.read(killCsv);
      StudyCharts.writeKillTimeline(runDir.resolve(KillTimeline.PNG), killWritten, killEvent, subtitle);
      files.add(StudyCsv.KILL_TIMELINE.file());
      files.add(KillTimeline.PNG);
    }
    StudySummary.Context context = new StudySummary.Context(
        scenario, startedAt, quick, load(), HostFacts.probe(dataPath()),
        ToolVersions.probe(tools, shoalJar, processes, runDir.resolve("versions")), setups, notRun,
        processes.commands(), clusterWritten, probes, killEvent, killWritten, roundsWritten);
    Files.writeString(runDir.resolve("summary.md"), StudySummary.render(context, written), StandardCharsets.UTF_8);
    out.println("study: wrote " + csv + ", " + String.join(", ", files) + " and summary.md");
    for (String line : StudySummary.atAGlance(written, scenario.baseline())) {
      out.println("  " + line);
    }
    for (String line : StudySummary.roundsAtAGlance(roundsWritten, scenario.baseline())) {
      out.println("  " + line);
    }
    for (String line : StudySummary.clusterAtAGlance(clusterWritten)) {
      out.println("  " + line);
    }
    if (killWritten != null) {
      for (String line : StudySummary.killAtAGlance(killEvent, killWritten)) {
        out.println("  " + line);
      }
    }
    return notRun.isEmpty() ? 0 : 1;
  }

  /** The kernel's clock ticks per second ({@code getconf CLK_TCK}), read on first use. */
  private long ticksPerSecond() throws StudyException {
    if (ticksPerSecond == 0) {
      ticksPerSecond = ProcessCpu.ticksPerSecond(processes, runDir.resolve("clk_tck.txt"));
    }
    return ticksPerSecond;
  }

  /** How many rounds this run measures: the recipe's, or one for a quick run. */
  private int rounds() {
    return quick ? 1 : scenario.recipe().rounds();
  }

  /**
   * The run of a member whose QPS is the median of its rounds (the lower one of the middle two
   * for an even count). Its whole row is kept, so every number in results.csv is from one run.
   */
  private static Measured median(List<Measured> runs) {
    List<Measured> sorted = new ArrayList<>(runs);
    sorted.sort(java.util.Comparator.comparingDouble(r -> r.row().achievedQps()));
    return sorted.get((sorted.size() - 1) / 2);
  }

  private Measured measure(Member m, Path dir, KnotUpstream knot, Map<String, String> setups)
      throws IOException, StudyException {
    Files.createDirectories(dir);
    Path queries = queryFiles.get(0);
    try (ServerUnderTest server = ServerUnderTest.of(m, scenario.recipe(), dir, knot.address(), processes, tools,
        shoalJar)) {
      setups.put(m.name(), server.setupNote() + "; CPU time read from " + server.servingProcesses());
      server.start();
      LoadSettings load = load();
      if (!load.warmup().isZero()) {
        dnsperf.run(server.port(), queries, load, load.warmup(), dir.resolve("dnsperf-warmup.txt"));
      }
      Pause.sleep(SETTLE);
      CacheCounters before = server.counters(dir.resolve("stats-before.txt"));
      long upstreamBefore = knot.queryCount(dir.resolve("knotd-stats-before.txt"));
      // CPU is read right around dnsperf, after the statistics: scraping them costs the server CPU too
      ProcessCpu.Sample cpuBefore = ProcessCpu.sample(server.servingPids(), dir.resolve("cpu-before.txt"));
      DnsperfReport report = dnsperf.run(server.port(), queries, load, load.duration(), dir.resolve("dnsperf.txt"));
      ProcessCpu.Sample cpuAfter = ProcessCpu.sample(server.servingPids(), dir.resolve("cpu-after.txt"));
      double cpuSeconds = ProcessCpu.secondsBetween(cpuBefore, cpuAfter, ticksPerSecond());
      Pause.sleep(SETTLE);
      CacheCounters window = server.counters(dir.resolve("stats-after.txt")).minus(before);
      long upstream = knot.queryCount(dir.resolve("knotd-stats-after.txt")) - upstreamBefore;
      Files.writeString(dir.resolve("upstream-queries.txt"), upstream + "\n");
      int status = server.stop();
      if (m.kind() == MemberKind.SHOAL && status != 0) {
        out.println("study: note: " + m.name() + " exited with status " + status + " on SIGTERM (expected 0)");
      }
      // a member that answers without the study's upstream (knotd itself) has no hit rate to speak of
      ResultRow row = ResultRow.of(m.name(), server.lmdbSync(), server.runtime(), server.workers(), report,
          server.forwardsToUpstream() ? upstream : null, window, cpuSeconds);
      return new Measured(row, ClusterRow.of(m.name(), 1, false, report, upstream, window, RemoteLookups.NONE, null,
          cpuSeconds));
    }
  }

  /**
   * A member of several nodes: one dnsperf per node, all at once, each with the recipe's whole
   * window; counts and QPS summed over the nodes, latency averaged over every completed query.
   * In the kill test dnsperf runs against all nodes but the one killed, with per-second statistics.
   */
  private Measured measureNodes(Member m, Path dir, KnotUpstream knot, Map<String, String> setups)
      throws IOException, StudyException {
    Files.createDirectories(dir);
    try (ShoalNodes group = ShoalNodes.of(m, scenario.recipe(), dir, knot.address(), processes, tools, shoalJar)) {
      setups.put(m.name(), group.setupNote() + (m.kill() == null
          ? "; CPU time read from the " + m.nodes() + " shoal JVMs, summed"
          : "; CPU time not measured (a node is killed mid-run)"));
      group.start();
      LoadSettings load = load();
      List<ShoalUnderTest> all = group.nodes();
      if (!load.warmup().isZero()) {
        dnsperf.runAtOnce(ports(all), queriesFor(all, group), load, load.warmup(),
            outputs(all, "dnsperf-warmup.txt"));
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
      if (m.kill() == null) {
        List<Long> pids = all.stream().map(ShoalUnderTest::pid).toList();
        ProcessCpu.Sample cpuBefore = ProcessCpu.sample(pids, dir.resolve("cpu-before.txt"));
        reports = dnsperf.runAtOnce(ports(all), queriesFor(all, group), load, load.duration(),
            outputs(all, "dnsperf.txt"));
        ProcessCpu.Sample cpuAfter = ProcessCpu.sample(pids, dir.resolve("cpu-after.txt"));
        cpuSeconds = ProcessCpu.secondsBetween(cpuBefore, cpuAfter, ticksPerSecond());
      } else {
        killed = m.kill().nodes().stream().map(group::node).toList();
        List<ShoalUnderTest> victims = killed;
        measured = all.stream().filter(n -> !victims.contains(n)).toList();
        for (String output : killTest(m, victims, measured, group, load, dir)) {
          reports.add(DnsperfReport.parse(output));
        }
      }
      Pause.sleep(SETTLE);

      CacheCounters window = null;
      RemoteLookups remote = RemoteLookups.NONE;
      long servfail = 0;
      for (ShoalUnderTest n : measured) {
        MetricsScrape after = n.scrape(n.directory().resolve("stats-after.txt"));
        MetricsScrape was = before.get(all.indexOf(n));
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
      Files.writeString(dir.resolve("dnsperf-summed.txt"), summed(measured, reports, total), StandardCharsets.UTF_8);

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
          overhead, cpuSeconds));
    }
  }

  /**
   * dnsperf with per-second statistics against the surviving nodes; the victims are killed with
   * SIGKILL together a set time into the run. Returns the runs' outputs and keeps the merged timeline.
   */
  private List<String> killTest(Member m, List<ShoalUnderTest> victims, List<ShoalUnderTest> targets,
      ShoalNodes group,
      LoadSettings load, Path dir) throws StudyException, IOException {
    KillPlan plan = m.kill();
    List<String> extra = List.of("-S", "1", "-v", "-t", Long.toString(plan.queryTimeout().toSeconds()));
    List<StartedProcesses.Running> running = dnsperf.launchAtOnce(ports(targets), queriesFor(targets, group), load,
        load.duration(), extra, outputs(targets, "dnsperf-kill.txt"));
    Duration after = plan.after(quick);
    String names = victims.stream().map(ShoalUnderTest::label).collect(Collectors.joining(" and "));
    String pids = victims.stream().map(v -> Long.toString(v.pid())).collect(Collectors.joining(" and "));
    out.println("study: " + m.name() + ": dnsperf on " + targets.size() + (targets.size() == 1 ? " node" : " nodes")
        + "; killing " + names + " (pid " + pids + ") in " + after.toSeconds() + " s");
    Pause.sleep(after);
    double killedAt = System.currentTimeMillis() / 1000.0;
    long killNanos = System.nanoTime();
    for (ShoalUnderTest victim : victims) {
      victim.kill();
    }
    // Watching while dnsperf runs says when ownership moved (unreachable) and when the cluster
    // let the node go; the survivors only stop cleanly once it is gone.
    boolean minority = plan.leavesMinority(group.nodes().size());
    ClusterFormation.Departure departure = ClusterFormation.watchDeparture(targets.get(0), targets.size(), minority,
        killNanos, DEPARTURE_LIMIT, processes, dir);
    List<String> outputs = dnsperf.awaitAll(running, load.duration());
    // the epoch of the kill is what places it among dnsperf's interval marks; kept for re-analysis
    Files.writeString(dir.resolve("kill.txt"), String.format(java.util.Locale.ROOT,
        "node %s pid %s killed at epoch %.3f%nunreachable after %s s, removed after %s s (null: not seen)%n",
        names, pids, killedAt, tenths(departure.unreachableAfterSeconds()),
        tenths(departure.removedAfterSeconds())), StandardCharsets.UTF_8);
    killSeconds = KillTimeline.merge(outputs, killedAt, 1.0);
    killEvent = new KillTimeline.Event(m.name(), plan.nodes().stream().map(ShoalNodes::nodeName)
        .collect(Collectors.joining(" and ")), pids,
        KillTimeline.killAtSeconds(outputs.get(0), killedAt, 1.0),
        targets.stream().map(n -> ShoalNodes.nodeName(group.nodes().indexOf(n))).toList(), plan.queryTimeout(),
        departure.unreachableAfterSeconds(), departure.removedAfterSeconds(), null, minority);
    if (departure.removedAfterSeconds() == null) {
      out.println("study: note: " + (minority ? targets.get(0).label() + " was not downed" : names
          + (victims.size() == 1 ? " was" : " were") + " still listed") + " " + DEPARTURE_LIMIT.toSeconds()
          + " s after the kill");
    }
    return outputs;
  }

  private static String tenths(Double seconds) {
    return seconds == null ? "null" : String.format(java.util.Locale.ROOT, "%.1f", seconds);
  }

  private static List<Integer> ports(List<ShoalUnderTest> nodes) {
    return nodes.stream().map(ShoalUnderTest::port).toList();
  }

  /** Each node's query file: node i of a member replays the i-th file. */
  private List<Path> queriesFor(List<ShoalUnderTest> nodes, ShoalNodes group) {
    return nodes.stream().map(n -> queryFiles.get(group.nodes().indexOf(n))).toList();
  }

  private static List<Path> outputs(List<ShoalUnderTest> nodes, String file) {
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

  /** Where members keep their data; its device is the one the summary describes. */
  private Path dataPath() {
    return runDir.resolve("members");
  }

  private Duration estimate(Member m) {
    if (scenario.outage() != null) {
      return OutageRun.estimate(scenario, load());
    }
    Duration measured = load().warmup().plus(load().duration()).plus(SETTLE.multipliedBy(2));
    if (scenario.attacks() != null) {
      return MEMBER_OVERHEAD.plus(AttackPhases.estimate(load()));
    }
    if (!m.isNodeGroup()) {
      return MEMBER_OVERHEAD.plus(measured);
    }
    // nodes start together but share the cores; a cluster also forms, and runs the probe
    Duration extra = m.cluster() ? CLUSTER_OVERHEAD : Duration.ZERO;
    if (m.kill() != null) {
      extra = extra.plus(Duration.ofSeconds(30)); // the cluster downs the killed node about 30 s after the kill
    }
    return MEMBER_OVERHEAD.multipliedBy(m.nodes()).plus(extra).plus(measured);
  }

  /** Estimated wall time for the whole run, shown before it starts. */
  public Duration estimatedTotal() {
    return estimatedRound().multipliedBy(rounds());
  }

  private Duration estimatedRound() {
    return scenario.members().stream().filter(m -> !skipped.containsKey(m.name())).map(this::estimate)
        .reduce(Duration.ZERO, Duration::plus);
  }

  /**
   * An outage scenario: each member in turn through {@link OutageRun} against one knotd, then
   * outage_timeline.csv, outage_phases.csv, their chart and summary.md. Returns 0 if every member
   * ran, 1 otherwise.
   */
  private int runOutage(String startedAt) throws IOException, StudyException {
    Path names = runDir.resolve("names.txt");
    scenario.recipe().queries().writeEachNameOnce(names);
    OutageRun outage = new OutageRun(scenario, quick, load(), queryFiles.get(0), names, dnsperf, processes, tools,
        shoalJar, out);
    List<Member> members = scenario.members().stream().filter(m -> !skipped.containsKey(m.name())).toList();
    Map<String, String> setups = new LinkedHashMap<>();
    Map<String, String> notRun = new LinkedHashMap<>(skipped);
    List<OutageTimeline.Second> seconds = new ArrayList<>();
    out.println("study: starting knotd");
    try (KnotUpstream knot = KnotUpstream.start(runDir.resolve("knotd"), scenario.recipe(), root, tools, processes)) {
      for (int i = 0; i < members.size(); i++) {
        Member m = members.get(i);
        out.println("study: member " + (i + 1) + " of " + members.size() + ": " + m.name() + " — about "
            + OutageRun.estimate(scenario, load()).multipliedBy(members.size() - i).toSeconds() + " s left");
        Path dir = runDir.resolve("members").resolve(m.name());
        StringBuilder setup = new StringBuilder();
        try {
          seconds.addAll(outage.measure(m, dir, knot, setup));
          setups.put(m.name(), setup.toString());
        } catch (StudyException | IOException | RuntimeException e) {
          String why = e.getMessage() == null ? e.toString() : e.getMessage();
          out.println("study: member " + m.name() + " failed: " + why);
          notRun.put(m.name(), "failed: " + abbreviated(why) + " (see " + runDir.relativize(dir) + "/)");
        }
      }
    }
    Path timelineCsv = StudyCsv.OUTAGE_TIMELINE.write(runDir, seconds);
    List<OutageTimeline.Second> written = StudyCsv.OUTAGE_TIMELINE.read(timelineCsv);
    Path phasesCsv = StudyCsv.OUTAGE_PHASES.write(runDir, OutageTimeline.phases(written));
    List<OutageTimeline.Phase> phases = StudyCsv.OUTAGE_PHASES.read(phasesCsv);
    String subtitle = scenario.name() + (quick ? " (quick smoke run)" : "") + ", " + startedAt;
    OutageChart.write(runDir.resolve(OutageTimeline.PNG), written, subtitle);
    OutageSummary.Context context = new OutageSummary.Context(scenario, startedAt, quick, load(), setups, notRun,
        HostFacts.probe(dataPath()), ToolVersions.probe(tools, shoalJar, processes, runDir.resolve("versions")),
        processes.commands());
    Files.writeString(runDir.resolve("summary.md"), OutageSummary.render(context, phases, written), StandardCharsets.UTF_8);
    out.println("study: wrote " + timelineCsv + ", " + StudyCsv.OUTAGE_PHASES.file() + ", " + OutageTimeline.PNG
        + " and summary.md");
    for (String line : OutageSummary.atAGlance(scenario, phases, written)) {
      out.println("  " + line);
    }
    return notRun.isEmpty() ? 0 : 1;
  }

  private static String abbreviated(String s) {
    String t = s.strip().replaceAll("\\s*\n\\s*", " | ");
    return t.length() <= 600 ? t : t.substring(0, 600) + " ...";
  }
}
