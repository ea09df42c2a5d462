package io.shoal.study;

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

/**
 * One run of a scenario: the query file, knotd, then each member in turn (start, warm up, read
 * statistics, measure with dnsperf, read statistics, stop), and finally results.csv, the charts
 * and summary.md in the run directory.
 */
public final class StudyRun {
  /** Lets counters that are published on a timer (shoal's, every second) catch up before reading. */
  private static final Duration SETTLE = Duration.ofSeconds(2);
  /** Rough cost of starting and stopping one member, for the time-left estimate. */
  private static final Duration MEMBER_OVERHEAD = Duration.ofSeconds(12);
  /** dnsperf may outlive -l by its query timeout; beyond this it is stuck. */
  private static final Duration DNSPERF_SLACK = Duration.ofSeconds(60);

  private final Scenario scenario;
  private final Path runDir;
  private final boolean quick;
  private final Path shoalJar;
  private final Prerequisites.Tools tools;
  private final boolean root;
  private final Map<String, String> skipped;
  private final PrintStream out;
  private final StartedProcesses processes;

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

  /** Runs everything; returns 0 if every member produced a row, 1 otherwise. */
  public int run() throws IOException, StudyException {
    String startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    Files.createDirectories(runDir);
    if (scenario.source() != null) {
      Files.copy(scenario.source(), runDir.resolve("scenario.conf"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    Path queries = runDir.resolve("queries.txt");
    out.println("study: " + scenario.name() + " -> " + runDir);
    out.println("study: writing " + scenario.recipe().queries().lines() + " queries over "
        + scenario.recipe().queries().names() + " names (seed " + scenario.recipe().queries().seed() + ")");
    scenario.recipe().queries().write(queries);

    Map<String, String> setups = new LinkedHashMap<>();
    Map<String, String> notRun = new LinkedHashMap<>(skipped);
    List<ResultRow> rows = new ArrayList<>();
    List<Member> members = scenario.members().stream().filter(m -> !skipped.containsKey(m.name())).toList();

    out.println("study: starting knotd");
    try (KnotUpstream knot = KnotUpstream.start(runDir.resolve("knotd"), scenario.recipe(), root, tools, processes)) {
      for (int i = 0; i < members.size(); i++) {
        Member m = members.get(i);
        long left = estimate().multipliedBy(members.size() - i).toSeconds();
        out.println("study: member " + (i + 1) + " of " + members.size() + ": " + m.name() + " — about "
            + left + " s left");
        try {
          rows.add(measure(m, knot, queries, setups));
        } catch (StudyException | IOException | RuntimeException e) {
          String why = e.getMessage() == null ? e.toString() : e.getMessage();
          out.println("study: member " + m.name() + " failed: " + why);
          notRun.put(m.name(), "failed: " + abbreviated(why) + " (see members/" + m.name() + "/)");
        }
      }
    }

    Path csv = runDir.resolve("results.csv");
    ResultsCsv.write(csv, rows);
    List<ResultRow> written = ResultsCsv.read(csv);
    StudyCharts.write(runDir, written, scenario.name() + (quick ? " (quick smoke run)" : "") + ", " + startedAt);
    StudySummary.Context context = new StudySummary.Context(
        scenario, startedAt, quick, load(), HostFacts.probe(dataPath()),
        ToolVersions.probe(tools, shoalJar, processes, runDir.resolve("versions")), setups, notRun,
        processes.commands());
    Files.writeString(runDir.resolve("summary.md"), StudySummary.render(context, written), StandardCharsets.UTF_8);
    out.println("study: wrote " + csv + ", " + String.join(", ", StudyCharts.FILES) + " and summary.md");
    for (String line : StudySummary.atAGlance(written, scenario.baseline())) {
      out.println("  " + line);
    }
    return notRun.isEmpty() ? 0 : 1;
  }

  private ResultRow measure(Member m, KnotUpstream knot, Path queries, Map<String, String> setups)
      throws IOException, StudyException {
    Path dir = runDir.resolve("members").resolve(m.name());
    Files.createDirectories(dir);
    try (ServerUnderTest server = ServerUnderTest.of(m, scenario.recipe(), dir, knot.address(), processes, tools,
        shoalJar)) {
      setups.put(m.name(), server.setupNote());
      server.start();
      LoadSettings load = load();
      if (!load.warmup().isZero()) {
        dnsperf(server, queries, load.warmup(), dir.resolve("dnsperf-warmup.txt"));
      }
      pause(SETTLE);
      CacheCounters before = server.counters(dir.resolve("stats-before.txt"));
      long upstreamBefore = knot.queryCount(dir.resolve("knotd-stats-before.txt"));
      DnsperfReport report = dnsperf(server, queries, load.duration(), dir.resolve("dnsperf.txt"));
      pause(SETTLE);
      CacheCounters window = server.counters(dir.resolve("stats-after.txt")).minus(before);
      long upstream = knot.queryCount(dir.resolve("knotd-stats-after.txt")) - upstreamBefore;
      Files.writeString(dir.resolve("upstream-queries.txt"), upstream + "\n");
      int status = server.stop();
      if (m.kind() == MemberKind.SHOAL && status != 0) {
        out.println("study: note: " + m.name() + " exited with status " + status + " on SIGTERM (expected 0)");
      }
      return new ResultRow(
          m.name(), server.lmdbSync(), server.runtime(), report.queriesPerSecond(), report.avgLatencyMillis(),
          report.sent(), report.completed(), report.lost(), server.workers(),
          ResultRow.fairHitRatePct(upstream, report.completed()), window.hits(), window.misses(),
          ResultRow.meanMillis(window.fillSumSeconds(), window.fillCount()), window.fillCount(),
          ResultRow.meanMillis(window.evictionSumSeconds(), window.evictionCount()), window.evictionCount());
    }
  }

  private DnsperfReport dnsperf(ServerUnderTest server, Path queries, Duration duration, Path output)
      throws StudyException {
    LoadSettings load = load();
    List<String> cmd = List.of(tools.path("dnsperf"), "-s", "127.0.0.1", "-p", Integer.toString(server.port()),
        "-d", queries.toString(), "-c", Integer.toString(load.clients()), "-q", Integer.toString(load.outstanding()),
        "-T", Integer.toString(load.threads()), "-l", Long.toString(Math.max(1, duration.toSeconds())));
    StartedProcesses.Completed c = processes.run(cmd, output, duration.plus(DNSPERF_SLACK));
    if (c.exitCode() != 0) {
      throw new StudyException("dnsperf exited with status " + c.exitCode() + ": " + firstLine(c.output()));
    }
    return DnsperfReport.parse(c.output());
  }

  /** Where members keep their data; its device is the one the summary describes. */
  private Path dataPath() {
    return runDir.resolve("members");
  }

  private Duration estimate() {
    return MEMBER_OVERHEAD.plus(load().warmup()).plus(load().duration()).plus(SETTLE.multipliedBy(2));
  }

  /** Estimated wall time for the whole run, shown before it starts. */
  public Duration estimatedTotal() {
    long members = scenario.members().stream().filter(m -> !skipped.containsKey(m.name())).count();
    return estimate().multipliedBy(members);
  }

  private static void pause(Duration d) throws StudyException {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted", e);
    }
  }

  private static String abbreviated(String s) {
    String t = s.strip().replaceAll("\\s*\n\\s*", " | ");
    return t.length() <= 600 ? t : t.substring(0, 600) + " ...";
  }

  private static String firstLine(String s) {
    String t = s.strip();
    int nl = t.indexOf('\n');
    return nl < 0 ? t : t.substring(0, nl) + " ...";
  }
}
