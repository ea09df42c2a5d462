package io.shoal.study.run;

import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.LatencyPercentiles;
import io.shoal.study.measure.ProcessCpu;
import io.shoal.study.report.ClusterRow;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.ServerUnderTest;
import io.shoal.study.server.ShoalUnderTest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The measured dnsperf window of a plain study's member: dnsperf against its servers at once, with
 * the CPU time of the servers and of dnsperf itself read right around it, and the capacity columns
 * of cluster.csv that come from it.
 */
final class MeasuredLoad {
  private final Scenario scenario;
  private final Path runDir;
  private final StartedProcesses processes;
  private final Dnsperf dnsperf;
  /** The kernel's clock ticks per second, read once, for CPU time from /proc. */
  private long ticksPerSecond;

  MeasuredLoad(Scenario scenario, Path runDir, StartedProcesses processes, Dnsperf dnsperf) {
    this.scenario = scenario;
    this.runDir = runDir;
    this.processes = processes;
    this.dnsperf = dnsperf;
  }

  /** The kernel's clock ticks per second ({@code getconf CLK_TCK}), read on first use. */
  long ticksPerSecond() throws StudyException {
    if (ticksPerSecond == 0) {
      ticksPerSecond = ProcessCpu.ticksPerSecond(processes, runDir.resolve("clk_tck.txt"));
    }
    return ticksPerSecond;
  }

  /**
   * The measured run's dnsperf processes, one per node: their reports, the latency percentiles of
   * each run when the recipe asks for them (null otherwise), their own CPU time, and the CPU time of
   * the servers they loaded.
   */
  record LoadRun(List<DnsperfReport> reports, List<LatencyPercentiles> percentiles, double cpuSeconds,
      double serverCpuSeconds, double serverJitCpuSeconds) {}

  /**
   * The measured dnsperf runs against {@code ports} (of {@code servers}) at once, each with the
   * load's window into the matching output. The servers' CPU time (and, under a quota, their
   * groups' cpu.stat) is read right before and right after: the statistics are scraped outside, as
   * scraping costs the server CPU too. dnsperf's own CPU time is what this JVM's reaped children
   * used meanwhile: nothing else the study starts ends during the run. With
   * recipe.latency_percentiles each run has -v, and its per-query lines are condensed into
   * percentiles once the CPU has been read.
   */
  LoadRun run(List<? extends ServerUnderTest> servers, List<Integer> ports, List<Path> queries,
      LoadSettings load, List<Path> outputs, Path dir) throws StudyException, IOException {
    long ticks = ticksPerSecond(); // first use runs getconf, a child: not inside the window
    List<Long> pids = servers.stream().flatMap(s -> s.servingPids().stream()).toList();
    boolean verbose = scenario.recipe().latencyPercentiles();
    List<Path> written = verbose ? outputs.stream().map(o -> o.resolveSibling("dnsperf-verbose.txt")).toList()
        : outputs;
    quotaStats(servers, "quota-before.txt");
    ProcessCpu.Sample cpuBefore = ProcessCpu.sample(pids, dir.resolve("cpu-before.txt"));
    // Under a quota, the load generators get the nodes' weight too: on a busy host they must not be
    // what runs out (they have no quota: closed-loop, they use what the nodes' answers let them).
    io.shoal.study.host.CpuQuota loadGroup = scenario.recipe().cpuQuota() == null ? null
        : io.shoal.study.host.CpuQuota.weightOnly(dir.getFileName() + "-load");
    long before = ProcessCpu.reapedChildrenTicks(dir.resolve("load-cpu-before.txt"));
    List<String> texts;
    try {
      texts = dnsperf.awaitAll(dnsperf.launchAtOnce(ports, queries, load, load.duration(),
          verbose ? List.of("-v") : List.of(), written, loadGroup), load.duration());
    } finally {
      if (loadGroup != null) {
        loadGroup.remove();
      }
    }
    long after = ProcessCpu.reapedChildrenTicks(dir.resolve("load-cpu-after.txt"));
    ProcessCpu.Sample cpuAfter = ProcessCpu.sample(pids, dir.resolve("cpu-after.txt"));
    quotaStats(servers, "quota-after.txt");
    List<DnsperfReport> reports = new ArrayList<>();
    List<LatencyPercentiles> percentiles = verbose ? new ArrayList<>() : null;
    for (int i = 0; i < outputs.size(); i++) {
      if (verbose) {
        LatencyPercentiles.Condensed c = LatencyPercentiles.condense(written.get(i), outputs.get(i));
        reports.add(DnsperfReport.parse(c.text()));
        percentiles.add(c.percentiles());
      } else {
        reports.add(DnsperfReport.parse(texts.get(i)));
      }
    }
    return new LoadRun(reports, percentiles, (double) (after - before) / ticks,
        ProcessCpu.secondsBetween(cpuBefore, cpuAfter, ticks), ProcessCpu.compilerSecondsBetween(cpuBefore, cpuAfter, ticks));
  }

  /** Each quota-bound node's cpu.stat into {@code file} in its directory; nothing for nodes without a quota. */
  private static void quotaStats(List<? extends ServerUnderTest> servers, String file) throws IOException {
    for (ServerUnderTest s : servers) {
      if (s instanceof ShoalUnderTest shoal) {
        shoal.quotaStat(shoal.directory().resolve(file));
      }
    }
  }

  /**
   * What cluster.csv's capacity columns hold for member {@code m}: its group, quota, p99, load CPU
   * and the -Q it was paced at.
   */
  ClusterRow.Capacity capacity(Member m, LoadSettings load, LoadRun loadRun) {
    Double p99 = loadRun == null || loadRun.percentiles() == null ? null
        : LatencyPercentiles.of(loadRun.percentiles()).millis(99);
    return new ClusterRow.Capacity(m.group(), scenario.recipe().cpuQuota(), p99,
        loadRun == null ? null : loadRun.cpuSeconds(), load.maxQps(),
        loadRun == null ? null : loadRun.serverJitCpuSeconds());
  }
}
