package io.shoal.study.run;

import io.shoal.study.cluster.ShoalNodes;
import io.shoal.study.host.HostFacts;
import io.shoal.study.host.Pause;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.host.ToolVersions;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.LatencyPercentiles;
import io.shoal.study.measure.ProcessCpu;
import io.shoal.study.measure.ResponseCodes;
import io.shoal.study.report.RecursionRow;
import io.shoal.study.report.RecursionSummary;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import io.shoal.study.scenario.RecursionPlan;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.RecursionTree;
import io.shoal.study.server.ServerUnderTest;
import io.shoal.study.server.ShoalUnderTest;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A recursion scenario: one DNS tree on loopback ({@link RecursionTree}), every member in turn
 * resolving from its root, round after round, each run with cold names of its own: the zone cuts
 * warmed (one name per zone), a warm-up ({@link #warmUp}), a cold pass (each name once), warm hits
 * over the same names. Then,
 * per round, the cluster part: the first shoal member's configuration on N clustered nodes and
 * on N independent nodes, each group sent the same cold names on every node at once. Then
 * rounds.csv, results.csv, the charts and summary.md.
 */
final class RecursionStudy {
  private final RunSettings run;
  private final Dnsperf dnsperf;
  private long ticksPerSecond;
  /** How long the compilers must stay (nearly) idle. */
  private static final Duration COMPILER_WINDOW = Duration.ofMillis(500);

  RecursionStudy(RunSettings run, Dnsperf dnsperf) {
    this.run = run;
    this.dnsperf = dnsperf;
  }

  /** Runs every member and the cluster part; returns 0 if every run produced its rows, 1 otherwise. */
  int run(String startedAt) throws IOException, StudyException {
    Scenario scenario = run.scenario();
    RecursionPlan plan = scenario.recursion();
    Path runDir = run.runDir();
    PrintStream out = run.out();
    List<Member> members = run.members();
    int rounds = run.rounds();
    int cold = plan.coldNames(run.quick());
    int warm = plan.warmUpNames(run.quick());
    int runs = plan.runsNeedingNames(members.size(), rounds);
    // each run's cold pass asks names of its own; the warm-up names are the same for every run (each
    // run is a fresh process: they are new to it), so a long warm-up does not grow the tree per run
    int perZone = (int) (((long) runs * cold + warm + plan.zones() - 1) / plan.zones());
    Map<String, String> setups = new LinkedHashMap<>();
    Map<String, String> notRun = new LinkedHashMap<>(run.skipped());
    List<RecursionRow> rows = new ArrayList<>();
    Path names = Files.createDirectories(runDir.resolve("queries"));
    out.println(String.format(Locale.ROOT, "study: starting the tree: %d signed zones of %,d names each", plan.zones(),
        perZone));
    String treeNote;
    try (RecursionTree tree = startTree(runDir.resolve("tree"), plan.zones(), perZone)) {
      treeNote = tree.describe();
      ticksPerSecond = ProcessCpu.ticksPerSecond(run.processes(), runDir.resolve("clk_tck.txt"));
      Path cuts = writeCuts(names.resolve("cuts.txt"), plan.zones());
      List<Path> warmUp = writeWarmUp(names, (long) runs * cold, warm, plan.zones());
      int slot = 0;
      for (int round = 1; round <= rounds; round++) {
        for (int i = 0; i < members.size(); i++, slot++) {
          Member m = members.get(i).withRecursionTree(tree.rootHints(), tree.trustAnchor());
          Path dir = runDir.resolve("members").resolve(m.name()).resolve("round-" + round);
          Path file = writeNames(names.resolve("names-" + slot + ".txt"), (long) slot * cold, cold, plan.zones());
          out.println("study: round " + round + " of " + rounds + ", member " + (i + 1) + " of " + members.size()
              + ": " + m.name() + " (" + cold + " cold names)");
          try {
            rows.addAll(measureServer(m, round, tree, cuts, warmUp, file, dir, setups));
          } catch (StudyException | IOException | RuntimeException e) {
            failed(m.name() + " in round " + round, e, dir, notRun);
          }
        }
        if (plan.clusterNodes() > 0) {
          Member shoal = members.stream().filter(x -> x.kind() == MemberKind.SHOAL).findFirst().orElseThrow()
              .withRecursionTree(tree.rootHints(), tree.trustAnchor());
          for (boolean clustered : new boolean[] {true, false}) {
            Member group = nodes(shoal, plan.clusterNodes(), clustered);
            Path dir = runDir.resolve("members").resolve(group.name()).resolve("round-" + round);
            Path file = writeNames(names.resolve("names-" + slot + ".txt"), (long) slot * cold, cold, plan.zones());
            slot++;
            out.println("study: round " + round + ", cluster part: " + group.name());
            try {
              rows.add(measureNodes(group, round, tree, cuts, warmUp, file, dir, setups));
            } catch (StudyException | IOException | RuntimeException e) {
              failed(group.name() + " in round " + round, e, dir, notRun);
            }
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted while starting the tree", e);
    }
    return write(startedAt, rows, setups, notRun, treeNote);
  }

  private static RecursionTree startTree(Path dir, int zones, int perZone)
      throws IOException, StudyException, InterruptedException {
    return RecursionTree.start(dir, zones, perZone);
  }

  private void failed(String what, Exception e, Path dir, Map<String, String> notRun) {
    String why = e.getMessage() == null ? e.toString() : e.getMessage();
    run.out().println("study: " + what + " failed: " + why);
    notRun.put(what, "failed: " + StudyRun.abbreviated(why) + " (see " + run.runDir().relativize(dir) + "/)");
  }

  /**
   * The cluster part's member: {@code shoal}'s configuration and JVM options on {@code n} nodes,
   * clustered or not.
   */
  static Member nodes(Member shoal, int n, boolean clustered) {
    return new Member(shoal.name() + (clustered ? "-cluster-" : "-independent-") + n, MemberKind.SHOAL,
        shoal.config(), n, clustered, null, null, shoal.transport(), "cluster", null, shoal.jvmOptions());
  }

  /** One name per zone ({@code ns.zN.example.}): asking them caches every zone cut and key on the way. */
  static Path writeCuts(Path file, int zones) throws IOException {
    StringBuilder t = new StringBuilder();
    for (int z = 1; z <= zones; z++) {
      t.append("ns.").append(RecursionTree.zone(z)).append(" A\n");
    }
    return Files.writeString(file, t);
  }

  /**
   * The cold names of run {@code slot}: names {@code slot * count} to {@code slot * count + count - 1}
   * of the tree, taken round-robin over the zones, so no two runs share a name.
   */
  static Path writeNames(Path file, long first, int count, int zones) throws IOException {
    StringBuilder t = new StringBuilder();
    for (long g = first; g < first + count; g++) {
      t.append(RecursionTree.name((int) (g % zones) + 1, (int) (g / zones))).append(" A\n");
    }
    return Files.writeString(file, t);
  }

  private List<RecursionRow> measureServer(Member m, int round, RecursionTree tree, Path cuts, List<Path> warmUp,
      Path names, Path dir, Map<String, String> setups) throws IOException, StudyException {
    Files.createDirectories(dir);
    try (ServerUnderTest server = ServerUnderTest.of(m, run.scenario().recipe(), dir, root(tree), run.processes(),
        run.tools(), run.shoalJar(), null)) {
      setups.putIfAbsent(m.name(), server.setupNote() + "; CPU time read from " + server.servingProcesses());
      server.start();
      List<ServerUnderTest> one = List.of(server);
      warmUp(one, cuts, warmUp);
      RecursionRow coldRow = phase(m.name(), round, "cold", one, names, tree, dir);
      RecursionRow warmRow = phase(m.name(), round, "warm", one, names, tree, dir);
      int status = server.stop();
      if (m.kind() == MemberKind.SHOAL && status != 0) {
        run.out().println("study: note: " + m.name() + " exited with status " + status + " on SIGTERM (expected 0)");
      }
      return List.of(coldRow, warmRow);
    }
  }

  private RecursionRow measureNodes(Member group, int round, RecursionTree tree, Path cuts, List<Path> warmUp, Path names,
      Path dir, Map<String, String> setups) throws IOException, StudyException {
    Files.createDirectories(dir);
    try (ShoalNodes nodes = ShoalNodes.of(group, run.scenario().recipe(), dir, root(tree), run.processes(),
        run.tools(), run.shoalJar())) {
      setups.putIfAbsent(group.name(), nodes.setupNote() + "; CPU time read from the " + group.nodes()
          + " shoal JVMs, summed");
      nodes.start();
      warmUp(nodes.nodes(), cuts, warmUp);
      RecursionRow row = phase(group.name(), round, "cold", nodes.nodes(), names, tree, dir);
      int status = nodes.stop(List.of());
      if (status != 0) {
        run.out().println("study: note: a node of " + group.name() + " exited with status " + status
            + " on SIGTERM (expected 0)");
      }
      return row;
    }
  }

  /**
   * The warm-up names every run asks (names {@code first} on of the tree): an eighth in one file,
   * asked before the warm-up's hits, and the rest in {@link RecursionPlan#WARM_UP_PARTS} files, asked after them
   * ({@link #warmUp}).
   */
  static List<Path> writeWarmUp(Path dir, long first, int count, int zones) throws IOException {
    List<Path> files = new ArrayList<>();
    int early = RecursionPlan.earlyWarmUpNames(count);
    files.add(writeNames(dir.resolve("warm-up.txt"), first, early, zones));
    int each = (count - early) / RecursionPlan.WARM_UP_PARTS;
    for (int i = 0; i < RecursionPlan.WARM_UP_PARTS && each > 0; i++) {
      files.add(writeNames(dir.resolve("warm-up-late-" + (i + 1) + ".txt"), first + early + (long) i * each,
          each, zones));
    }
    return files;
  }

  /**
   * Before anything is measured: one name per zone ({@code cuts}), so every cut and key is cached;
   * then the first eighth of the warm-up names resolved once and asked again for the recipe's
   * warm-up (the hit path gets compiled), then the rest resolved once, a part at a time,
   * until a part costs the servers' JIT compilers under {@link RecursionPlan#WARM_UP_SETTLED_SHARE} of their CPU; then a
   * wait until the compilers are idle. Every server is sent the same names.
   *
   * <p>Why in parts: a resolution goes through many small methods that C1's profiling code inlines
   * into its callers, and HotSpot decides on C2 for the method whose code is running, so the path
   * is promoted to C2 a layer at a time, each layer on the calls after the one below it was
   * compiled. After one long pass of new names, the measured cold pass still paid a third of its
   * CPU to C2 (docs/recursion.md).
   */
  private void warmUp(List<? extends ServerUnderTest> servers, Path cuts, List<Path> warmUp) throws StudyException,
      IOException {
    LoadSettings load = run.load();
    for (ServerUnderTest s : servers) {
      dnsperf.onePass(s.port(), cuts, s.directory().resolve("dnsperf-cuts.txt"));
    }
    resolveOnce(servers, warmUp.get(0), "dnsperf-warm-up-cold.txt");
    if (!load.warmup().isZero()) {
      dnsperf.awaitAll(dnsperf.launchAtOnce(servers.stream().map(ServerUnderTest::port).toList(),
          servers.stream().map(s -> warmUp.get(0)).toList(), load, load.warmup(), List.of(),
          servers.stream().map(s -> s.directory().resolve("dnsperf-warm-up-hits.txt")).toList()), load.warmup());
    }
    List<Long> pids = servers.stream().flatMap(s -> s.servingPids().stream()).toList();
    Path audit = servers.get(0).directory().resolve("cpu-warm-up.txt");
    for (int i = 1; i < warmUp.size(); i++) {
      ProcessCpu.Sample before = ProcessCpu.sample(pids, audit);
      resolveOnce(servers, warmUp.get(i), "dnsperf-warm-up-late-" + i + ".txt");
      ProcessCpu.Sample after = ProcessCpu.sample(pids, audit);
      double cpu = ProcessCpu.secondsBetween(before, after, ticksPerSecond);
      double share = cpu <= 0 ? 0 : ProcessCpu.compilerSecondsBetween(before, after, ticksPerSecond) / cpu;
      run.out().println(String.format(Locale.ROOT, "study: warm-up part %d of %d: JIT compilers %.0f%% of the CPU",
          i, warmUp.size() - 1, 100 * share));
      if (share < RecursionPlan.WARM_UP_SETTLED_SHARE) {
        break;
      }
    }
    Pause.sleep(MemberMeasurement.SETTLE);
    awaitIdleCompilers(pids, audit);
  }

  private void resolveOnce(List<? extends ServerUnderTest> servers, Path names, String output) throws StudyException {
    RecursionPlan plan = run.scenario().recursion();
    List<StartedProcesses.Running> passes = new ArrayList<>();
    for (ServerUnderTest s : servers) {
      passes.add(dnsperf.launchOnce(s.port(), names, plan.coldOutstanding(), plan.coldLimit(),
          s.directory().resolve(output)));
    }
    dnsperf.awaitAll(passes, plan.coldLimit());
  }

  /**
   * Waits, at most {@link RecursionPlan#COMPILER_WAIT}, until the servers' JIT compiler threads spent under
   * 2% of a CPU over one {@link #COMPILER_WINDOW} (a server that is no JVM has none, and passes at
   * once); says so when they did not.
   */
  private void awaitIdleCompilers(List<Long> pids, Path audit) throws StudyException, IOException {
    long deadline = System.nanoTime() + RecursionPlan.COMPILER_WAIT.toNanos();
    // 2% of the window, and at least one clock tick (what /proc counts in)
    double quiet = Math.max(1.0 / ticksPerSecond, COMPILER_WINDOW.toMillis() / 1000.0 / 50);
    ProcessCpu.Sample before = ProcessCpu.sample(pids, audit);
    for (int i = 0; i < RecursionPlan.COMPILER_WAIT.toMillis() / COMPILER_WINDOW.toMillis(); i++) {
      Pause.sleep(COMPILER_WINDOW);
      ProcessCpu.Sample after = ProcessCpu.sample(pids, audit);
      if (ProcessCpu.compilerSecondsBetween(before, after, ticksPerSecond) <= quiet) {
        return;
      }
      if (System.nanoTime() > deadline) {
        break;
      }
      before = after;
    }
    run.out().println("study: note: the JIT compilers of " + pids + " were still busy " + RecursionPlan.COMPILER_WAIT.toSeconds()
        + " s after the warm-up; measuring anyway");
  }

  /** The root server's address: what a member is given as its upstream, which a recursive member does not use. */
  private static InetSocketAddress root(RecursionTree tree) {
    return new InetSocketAddress(tree.ip(1), 53);
  }

  /**
   * One measured phase against {@code servers} at once, each sent the same names: cold (one pass,
   * each name once) or warm (the recipe's window for its duration). The servers' CPU time is read
   * right around dnsperf; the authorities' counts before it and after it, once the servers settled.
   */
  private RecursionRow phase(String member, int round, String phase, List<? extends ServerUnderTest> servers,
      Path names, RecursionTree tree, Path dir) throws IOException, StudyException {
    RecursionPlan plan = run.scenario().recursion();
    LoadSettings load = run.load();
    boolean cold = phase.equals("cold");
    long authorityBefore = tree.queryCount(dir.resolve("authority-before-" + phase + ".txt"));
    List<Long> pids = servers.stream().flatMap(s -> s.servingPids().stream()).toList();
    List<Path> verbose = servers.stream().map(s -> s.directory().resolve("dnsperf-" + phase + "-verbose.txt")).toList();
    ProcessCpu.Sample cpuBefore = ProcessCpu.sample(pids, dir.resolve("cpu-before-" + phase + ".txt"));
    List<StartedProcesses.Running> running = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      running.add(cold
          ? dnsperf.launchOnce(servers.get(i).port(), names, plan.coldOutstanding(), plan.coldLimit(), verbose.get(i))
          : dnsperf.launchAtOnce(List.of(servers.get(i).port()), List.of(names), load, load.duration(), List.of("-v"),
              List.of(verbose.get(i))).get(0));
    }
    dnsperf.awaitAll(running, cold ? plan.coldLimit() : load.duration());
    ProcessCpu.Sample cpuAfter = ProcessCpu.sample(pids, dir.resolve("cpu-after-" + phase + ".txt"));
    Pause.sleep(MemberMeasurement.SETTLE);
    long authority = tree.queryCount(dir.resolve("authority-after-" + phase + ".txt")) - authorityBefore;
    List<DnsperfReport> reports = new ArrayList<>();
    List<LatencyPercentiles> percentiles = new ArrayList<>();
    double servfail = 0;
    double other = 0;
    for (int i = 0; i < servers.size(); i++) {
      LatencyPercentiles.Condensed c = LatencyPercentiles.condense(verbose.get(i),
          servers.get(i).directory().resolve("dnsperf-" + phase + ".txt"));
      DnsperfReport r = DnsperfReport.parse(c.text());
      reports.add(r);
      percentiles.add(c.percentiles());
      Map<String, Long> codes = ResponseCodes.parse(c.text());
      long sf = ResponseCodes.of(codes, "SERVFAIL");
      servfail += sf;
      other += r.completed() - ResponseCodes.of(codes, "NOERROR") - sf;
    }
    DnsperfReport total = DnsperfReport.sumOver(reports);
    LatencyPercentiles all = LatencyPercentiles.of(percentiles);
    RecursionRow row = new RecursionRow(Integer.toString(round), member, phase, servers.size(), total.sent(),
        total.completed(), servfail, other, total.queriesPerSecond(),
        ProcessCpu.secondsBetween(cpuBefore, cpuAfter, ticksPerSecond), authority, all.millis(50), all.millis(99));
    Files.writeString(dir.resolve("phase-" + phase + ".txt"), String.join(",", RecursionRow.COLUMNS) + "\n"
        + String.join(",", row.cells()) + "\n# latency: " + all.describe() + "\n", StandardCharsets.UTF_8);
    run.out().println(String.format(Locale.ROOT, "study: %s %s: %,.0f of %,.0f answered (%,.0f SERVFAIL), %.0f qps, "
        + "%s us CPU and %s authority queries per answer, p50 %s ms, p99 %s ms", member, phase, row.answered(),
        row.sent(), row.servfail(), row.qps(), fmt(row.cpuMicrosPerResolution(), "%.1f"),
        fmt(row.authorityPerResolution(), "%.3f"), fmt(row.p50Ms(), "%.2f"), fmt(row.p99Ms(), "%.2f")));
    return row;
  }

  private static String fmt(Double v, String format) {
    return v == null ? "?" : String.format(Locale.ROOT, format, v);
  }

  /** rounds.csv, results.csv (the medians), the charts and summary.md; 0 if nothing failed. */
  private int write(String startedAt, List<RecursionRow> rows, Map<String, String> setups, Map<String, String> notRun,
      String treeNote) throws IOException {
    Path runDir = run.runDir();
    Scenario scenario = run.scenario();
    List<RecursionRow> rounds = StudyCsv.RECURSION_ROUNDS.read(StudyCsv.RECURSION_ROUNDS.write(runDir, rows));
    List<RecursionRow> results = StudyCsv.RECURSION_RESULTS.read(
        StudyCsv.RECURSION_RESULTS.write(runDir, RecursionRow.medians(rounds)));
    List<String> charts = RecursionSummary.writeCharts(runDir, results, run.subtitle(startedAt));
    StartedProcesses processes = run.processes();
    RecursionSummary.Context context = new RecursionSummary.Context(scenario, startedAt, run.quick(), run.load(),
        run.scenario().recursion().coldNames(run.quick()), run.scenario().recursion().warmUpNames(run.quick()), treeNote, setups, notRun, HostFacts.probe(run.dataPath()),
        ToolVersions.probe(run.tools(), run.shoalJar(), processes, runDir.resolve("versions")), processes.commands());
    Files.writeString(runDir.resolve("summary.md"), RecursionSummary.render(context, results, rounds),
        StandardCharsets.UTF_8);
    run.out().println("study: wrote results.csv, rounds.csv, " + String.join(", ", charts) + " and summary.md");
    for (String line : RecursionSummary.atAGlance(rounds, scenario.baseline())) {
      run.out().println("  " + line);
    }
    return notRun.isEmpty() ? 0 : 1;
  }
}
