package io.shoal.study.run;

import io.shoal.study.host.HostFacts;
import io.shoal.study.host.JavaLauncher;
import io.shoal.study.host.Pause;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.host.ToolVersions;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.JvmHeap;
import io.shoal.study.measure.ProcessCpu;
import io.shoal.study.measure.ResidentSet;
import io.shoal.study.report.CacheMemoryRow;
import io.shoal.study.report.CacheMemorySummary;
import io.shoal.study.report.StudyCharts;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.scenario.CacheMemoryPlan;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import io.shoal.study.scenario.QueryFile;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.KnotUpstream;
import io.shoal.study.server.ServerUnderTest;
import io.shoal.study.server.ShoalUnderTest;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A cache_memory scenario: for each size, each member in turn as a fresh process against one
 * knotd, read idle, filled with that many names, read again (shoal: also after a full
 * collection), then asked warm hits over the same names; then cache_memory.csv, its chart and
 * summary.md.
 */
final class CacheMemoryStudy {
  /** How often an idle member's resident set is read while it settles. */
  private static final Duration RSS_EVERY = Duration.ofSeconds(1);
  /** Two readings this close (relative) count as settled: a JVM's resident set creeps for a while. */
  private static final double SETTLED = 0.01;
  /** How often the fill's progress is read and printed. */
  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);
  /** How often a filled member's count of answers is read until it has them all. */
  private static final Duration ENTRIES_POLL = Duration.ofMillis(500);

  private final RunSettings run;
  private final Dnsperf dnsperf;
  private long ticksPerSecond;

  CacheMemoryStudy(RunSettings run, Dnsperf dnsperf) {
    this.run = run;
    this.dnsperf = dnsperf;
  }

  /** Roughly how long one member takes over every size of the run, for the time-left estimate. */
  static Duration estimate(Scenario scenario, LoadSettings load, boolean quick) {
    CacheMemoryPlan plan = scenario.cacheMemory();
    Duration total = Duration.ZERO;
    for (int size : plan.sizes(quick)) {
      total = total.plus(RunEstimate.MEMBER_OVERHEAD).plus(Duration.ofSeconds(10))
          .plus(Duration.ofSeconds(size / plan.fillQps())).plus(load.warmup()).plus(load.duration())
          .plus(plan.quiet().multipliedBy(2));
    }
    return total;
  }

  /**
   * Runs every size, members taking turns, against the same knotd; returns 0 if every member
   * produced a row at every size, 1 otherwise (the rows that were measured are written).
   */
  int run(String startedAt) throws IOException, StudyException {
    Scenario scenario = run.scenario();
    Recipe recipe = scenario.recipe();
    CacheMemoryPlan plan = scenario.cacheMemory();
    Path runDir = run.runDir();
    PrintStream out = run.out();
    List<Integer> sizes = plan.sizes(run.quick());
    List<Member> members = run.members();
    if (members.stream().anyMatch(m -> m.kind() == MemberKind.SHOAL)
        && !Files.isExecutable(Path.of(JavaLauncher.jcmd()))) {
      throw new StudyException("no jcmd at " + JavaLauncher.jcmd() + ": the study collects shoal's heap with the "
          + "jcmd of the JDK it runs on (install the full JDK, not only the runtime)");
    }
    List<CacheMemoryRow> rows = new ArrayList<>();
    Map<String, String> setups = new LinkedHashMap<>();
    Map<String, String> notRun = new LinkedHashMap<>(run.skipped());
    Path queries = runDir.resolve("queries");
    Files.createDirectories(queries);
    out.println("study: starting knotd");
    try (KnotUpstream knot = KnotUpstream.start(runDir.resolve("knotd"), recipe, run.root(), run.tools(),
        run.processes())) {
      ticksPerSecond = ProcessCpu.ticksPerSecond(run.processes(), runDir.resolve("clk_tck.txt"));
      for (int s = 0; s < sizes.size(); s++) {
        int size = sizes.get(s);
        QueryFile names = new QueryFile(recipe.zone(), size, recipe.queries().lines(), recipe.queries().seed());
        Path fill = queries.resolve("fill-" + size + ".txt");
        Path hits = queries.resolve("hits-" + size + ".txt");
        out.println(String.format(Locale.ROOT, "study: size %d of %d: %,d names; writing the fill and hit files",
            s + 1, sizes.size(), size));
        names.writeEachNameOnce(fill);
        names.write(hits);
        for (int i = 0; i < members.size(); i++) {
          Member m = members.get(i);
          Path dir = runDir.resolve("members").resolve(m.name()).resolve("size-" + size);
          out.println(String.format(Locale.ROOT, "study: size %,d, member %d of %d: %s", size, i + 1, members.size(),
              m.name()));
          try {
            CacheMemoryRow row = measure(m, size, fill, hits, dir, knot, setups);
            rows.add(row);
            out.println(String.format(Locale.ROOT, "study: %s at %,d: %,d cached, %s B per answer (%s after GC), "
                + "%.1f us CPU per warm hit", m.name(), size, row.entries(), oneDecimal(row.bytesPerEntry()),
                oneDecimal(row.bytesPerEntryAfterGc()), row.cpuMicrosPerQuery() == null ? Double.NaN
                    : row.cpuMicrosPerQuery()));
          } catch (StudyException | IOException | RuntimeException e) {
            String why = e.getMessage() == null ? e.toString() : e.getMessage();
            out.println("study: member " + m.name() + " at " + size + " failed: " + why);
            notRun.put(m.name() + " at " + size, "failed: " + StudyRun.abbreviated(why) + " (see "
                + runDir.relativize(dir) + "/)");
          }
        }
      }
    }
    Path csv = StudyCsv.CACHE_MEMORY.write(runDir, rows);
    List<CacheMemoryRow> written = StudyCsv.CACHE_MEMORY.read(csv);
    StudyCharts.writeCacheMemory(runDir.resolve(CacheMemorySummary.PNG), written, run.subtitle(startedAt));
    StartedProcesses processes = run.processes();
    CacheMemorySummary.Context context = new CacheMemorySummary.Context(scenario, startedAt, run.quick(), run.load(),
        sizes, setups, notRun, HostFacts.probe(run.dataPath()),
        ToolVersions.probe(run.tools(), run.shoalJar(), processes, runDir.resolve("versions")), processes.commands());
    Files.writeString(runDir.resolve("summary.md"), CacheMemorySummary.render(context, written),
        StandardCharsets.UTF_8);
    out.println("study: wrote " + csv + ", " + CacheMemorySummary.PNG + " and summary.md");
    for (String line : CacheMemorySummary.atAGlance(written, scenario.baseline())) {
      out.println("  " + line);
    }
    return notRun.isEmpty() ? 0 : 1;
  }

  /** One member at one size, in a fresh process: its row. */
  private CacheMemoryRow measure(Member m, int size, Path fill, Path hits, Path dir, KnotUpstream knot,
      Map<String, String> setups) throws IOException, StudyException {
    Files.createDirectories(dir);
    CacheMemoryPlan plan = run.scenario().cacheMemory();
    LoadSettings load = run.load();
    StartedProcesses processes = run.processes();
    PrintStream out = run.out();
    try (ServerUnderTest server = ServerUnderTest.of(m, run.scenario().recipe(), dir, knot.address(), processes,
        run.tools(), run.jarOf(m), null)) {
      setups.putIfAbsent(m.name(), server.setupNote() + run.ownJarNote(m) + "; resident set and CPU time read from "
          + server.servingProcesses());
      server.start();
      long pid = server.pid();
      boolean jvm = server instanceof ShoalUnderTest;
      StringBuilder readings = new StringBuilder("# VmRSS of pid " + pid + " in KiB, as read\n");
      long idle = settledRss(pid, plan.idleLimit(), readings, "idle");
      Long heapIdle = null;
      if (jvm) {
        JvmHeap.collect(pid, processes, dir.resolve("jcmd-gc-idle.txt"));
        idle = plan.quiet().isZero() ? settledRss(pid, plan.idleLimit(), readings, "idle after a full GC")
            : quietRss(pid, plan.quiet(), readings, "idle after a full GC and the quiet time");
        heapIdle = JvmHeap.usedKib(pid, processes, dir.resolve("jcmd-heap-idle.txt"));
      }
      long before = require(server.cachedAnswers(dir.resolve("entries-idle.txt")), m);

      DnsperfReport filled = fill(server, size, fill, dir, before);
      long entries = awaitEntries(server, size, before, plan.entriesLimit(), dir) - before;
      long rssFilled = rss(pid, readings, "filled");
      long rssAfterGc = rssFilled;
      Long heapFilled = null;
      if (jvm) {
        JvmHeap.collect(pid, processes, dir.resolve("jcmd-gc-filled.txt"));
        rssAfterGc = rss(pid, readings, "filled, after a full GC");
        heapFilled = JvmHeap.usedKib(pid, processes, dir.resolve("jcmd-heap-filled.txt"));
      }
      Long rssQuiet = jvm && !plan.quiet().isZero()
          ? quietRss(pid, plan.quiet(), readings, "filled, after a full GC and the quiet time") : null;
      Files.writeString(dir.resolve("rss.txt"), readings, StandardCharsets.UTF_8);
      if (entries < size || filled.lost() > 0) {
        out.println(String.format(Locale.ROOT, "study: note: %s holds %,d of the %,d names (%d fill queries lost)",
            m.name(), entries, size, filled.lost()));
      }

      if (!load.warmup().isZero()) {
        dnsperf.run(server.queryPort(), hits, load, load.warmup(), dir.resolve("dnsperf-warmup.txt"));
      }
      // CPU is read right around dnsperf, after every other reading: those cost the server CPU too
      ProcessCpu.Sample cpuBefore = ProcessCpu.sample(server.servingPids(), dir.resolve("cpu-before.txt"));
      DnsperfReport hit = dnsperf.run(server.queryPort(), hits, load, load.duration(), dir.resolve("dnsperf-hits.txt"));
      ProcessCpu.Sample cpuAfter = ProcessCpu.sample(server.servingPids(), dir.resolve("cpu-after.txt"));
      double cpuSeconds = ProcessCpu.secondsBetween(cpuBefore, cpuAfter, ticksPerSecond);
      int status = server.stop();
      if (jvm && status != 0) {
        out.println("study: note: " + m.name() + " exited with status " + status + " on SIGTERM (expected 0)");
      }
      return new CacheMemoryRow(m.name(), size, entries, idle, rssFilled, rssAfterGc, hit.queriesPerSecond(),
          ProcessCpu.microsPerQuery(cpuSeconds, hit.completed()), heapIdle, heapFilled, filled.lost(), rssQuiet);
    }
  }

  /**
   * The fill: one dnsperf pass asking each name once at the plan's rate, the member's count of
   * answers printed every few seconds while it runs.
   */
  private DnsperfReport fill(ServerUnderTest server, int size, Path fill, Path dir, long before)
      throws StudyException, IOException {
    CacheMemoryPlan plan = run.scenario().cacheMemory();
    Duration expected = Duration.ofMillis(1000L * size / plan.fillQps()).plusSeconds(1);
    run.out().println(String.format(Locale.ROOT, "study: %s: filling %,d names at %,d queries a second (about %d s)",
        server.label(), size, plan.fillQps(), expected.toSeconds()));
    StartedProcesses.Running pass = dnsperf.launchPass(server.queryPort(), fill, plan.fillQps(),
        plan.fillOutstanding(), dir.resolve("dnsperf-fill.txt"));
    long start = System.nanoTime();
    // bounded by the pass's own limit: awaitPass kills a dnsperf that outlives it
    long deadline = start + expected.plus(Duration.ofSeconds(60)).toNanos();
    try {
      while (System.nanoTime() < deadline
          && !pass.process().waitFor(PROGRESS_EVERY.toMillis(), TimeUnit.MILLISECONDS)) {
        long elapsed = Duration.ofNanos(System.nanoTime() - start).toSeconds();
        try {
          Long now = server.cachedAnswers(dir.resolve("entries-progress.txt"));
          run.out().println(String.format(Locale.ROOT, "study: %s: %,d of %,d cached after %d s", server.label(),
              now == null ? 0 : now - before, size, elapsed));
        } catch (StudyException | IOException e) {
          // progress only: a member too busy to report now is read again once the pass ends
          run.out().println(String.format(Locale.ROOT, "study: %s: filling, %d s (count not read: %s)",
              server.label(), elapsed, e.getMessage()));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted while filling " + server.label(), e);
    }
    return dnsperf.awaitPass(pass, expected);
  }

  /**
   * Waits until the member says it holds {@code size} answers more than before the fill, at most
   * {@code limit}; returns its last count (write-behind fills land after their answers go out).
   */
  private static long awaitEntries(ServerUnderTest server, int size, long before, Duration limit, Path dir)
      throws StudyException, IOException {
    long deadline = System.nanoTime() + limit.toNanos();
    long count = require(server.cachedAnswers(dir.resolve("entries-filled.txt")), null);
    while (count - before < size && System.nanoTime() < deadline) {
      Pause.sleep(ENTRIES_POLL);
      count = require(server.cachedAnswers(dir.resolve("entries-filled.txt")), null);
    }
    return count;
  }

  private static long require(Long count, Member m) throws StudyException {
    if (count == null) {
      throw new StudyException((m == null ? "the member" : m.name()) + " does not report its cached answers");
    }
    return count;
  }

  /**
   * The resident set once it stops growing: read every second until two readings are within 1%,
   * at most {@code limit}; the last reading.
   */
  private static long settledRss(long pid, Duration limit, StringBuilder readings, String what)
      throws StudyException {
    long deadline = System.nanoTime() + limit.toNanos();
    long last = rss(pid, readings, what);
    while (System.nanoTime() < deadline) {
      Pause.sleep(RSS_EVERY);
      long now = rss(pid, readings, what);
      boolean settled = Math.abs(now - last) <= SETTLED * last;
      last = now;
      if (settled) {
        break;
      }
    }
    return last;
  }

  /** The resident set after {@code quiet} without queries: what the process gave back on its own meanwhile. */
  private static long quietRss(long pid, Duration quiet, StringBuilder readings, String what) throws StudyException {
    Pause.sleep(quiet);
    return rss(pid, readings, what);
  }

  private static long rss(long pid, StringBuilder readings, String what) throws StudyException {
    long kib = ResidentSet.kib(pid);
    if (kib < 0) {
      throw new StudyException("cannot read VmRSS of pid " + pid + " (" + what + "): the process is gone");
    }
    readings.append(what).append(": ").append(kib).append('\n');
    return kib;
  }

  private static String oneDecimal(Double v) {
    return v == null ? "?" : String.format(Locale.ROOT, "%.1f", v);
  }
}
