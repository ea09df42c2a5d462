package io.shoal.study.run;

import io.shoal.study.cluster.ClusterFormation;
import io.shoal.study.cluster.ShoalNodes;
import io.shoal.study.host.Pause;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.scenario.KillPlan;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.server.ShoalUnderTest;
import io.shoal.study.timeline.KillTimeline;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The node-kill test of a clustered member: dnsperf against the surviving nodes while the victims
 * are killed a set time into the run, and the cluster watched as it lets them go.
 */
final class KillTest {
  /**
   * How long after a kill the study waits for the cluster to remove the node: the failure
   * detector's few seconds, the Split Brain Resolver's stable-after (20 s), and room for a busy host.
   */
  private static final Duration DEPARTURE_LIMIT = Duration.ofSeconds(90);

  /**
   * What one kill test saw: the dnsperf runs' outputs, the kill as the timeline places it, and the
   * runs' seconds merged.
   */
  record Outcome(List<String> outputs, KillTimeline.Event event, List<KillTimeline.Second> seconds) {}

  private final Dnsperf dnsperf;
  private final StartedProcesses processes;
  private final PrintStream out;
  private final boolean quick;

  KillTest(Dnsperf dnsperf, StartedProcesses processes, PrintStream out, boolean quick) {
    this.dnsperf = dnsperf;
    this.processes = processes;
    this.out = out;
    this.quick = quick;
  }

  /**
   * dnsperf with per-second statistics against the surviving nodes ({@code targets}, replaying
   * {@code queries}); the victims are killed with SIGKILL together a set time into the run.
   */
  Outcome run(Member m, List<ShoalUnderTest> victims, List<ShoalUnderTest> targets, ShoalNodes group,
      List<Path> queries, LoadSettings load, Path dir) throws StudyException, IOException {
    KillPlan plan = m.kill();
    List<String> extra = List.of("-S", "1", "-v", "-t", Long.toString(plan.queryTimeout().toSeconds()));
    List<StartedProcesses.Running> running = dnsperf.launchAtOnce(MemberMeasurement.ports(targets), queries, load,
        load.duration(), extra, MemberMeasurement.outputs(targets, "dnsperf-kill.txt"));
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
    List<KillTimeline.Second> seconds = KillTimeline.merge(outputs, killedAt, 1.0);
    KillTimeline.Event event = new KillTimeline.Event(m.name(), plan.nodes().stream().map(ShoalNodes::nodeName)
        .collect(Collectors.joining(" and ")), pids,
        KillTimeline.killAtSeconds(outputs.get(0), killedAt, 1.0),
        targets.stream().map(n -> ShoalNodes.nodeName(group.nodes().indexOf(n))).toList(), plan.queryTimeout(),
        departure.unreachableAfterSeconds(), departure.removedAfterSeconds(), null, minority);
    if (departure.removedAfterSeconds() == null) {
      out.println("study: note: " + (minority ? targets.get(0).label() + " was not downed" : names
          + (victims.size() == 1 ? " was" : " were") + " still listed") + " " + DEPARTURE_LIMIT.toSeconds()
          + " s after the kill");
    }
    return new Outcome(outputs, event, seconds);
  }

  private static String tenths(Double seconds) {
    return seconds == null ? "null" : String.format(java.util.Locale.ROOT, "%.1f", seconds);
  }
}
