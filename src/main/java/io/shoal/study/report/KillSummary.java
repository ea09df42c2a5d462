package io.shoal.study.report;

import io.shoal.study.timeline.KillTimeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The node-kill test in summary.md: the at-a-glance lines (the kill, the departure, the slow-down,
 * the failures) and the Node kill section, from kill_timeline.csv.
 */
final class KillSummary {
  private KillSummary() {}

  /** What the kill did, one sentence each, from the seconds read back from kill_timeline.csv. */
  static List<String> atAGlance(KillTimeline.Event kill, List<KillTimeline.Second> seconds) {
    List<String> out = new ArrayList<>();
    KillTimeline.Effect e = KillTimeline.effect(seconds);
    if (e.killSecond() == null) {
      out.add("Kill test: the timeline ends before the kill (" + kill.node() + " at "
          + String.format(Locale.ROOT, "%.1f", kill.atSeconds()) + " s); nothing to report.");
      return out;
    }
    StringBuilder first = new StringBuilder("Kill test: ").append(kill.node()).append(" of ").append(kill.member())
        .append(" killed with SIGKILL ").append(String.format(Locale.ROOT, "%.1f", kill.atSeconds()))
        .append(" s into the run (second ").append(e.killSecond()).append(")");
    if (e.preKillQps() != null) {
      first.append("; before it ~").append(StudySummary.approx(e.preKillQps())).append(" qps");
      if (e.preKillLatencyMs() != null) {
        first.append(" at ").append(StudySummary.ms(e.preKillLatencyMs())).append(" mean latency");
      }
    }
    out.add(first.append('.').toString());
    out.add("Kill test: " + departure(kill) + ".");
    if (e.preKillQps() == null) {
      out.add("Kill test: no whole second before the kill to compare with.");
    } else if (e.firstBelow() == null) {
      out.add("Kill test: QPS never fell below 90% of the pre-kill level.");
    } else if (e.recovered() == null) {
      out.add("Kill test: QPS fell below 90% of the pre-kill level in second " + e.firstBelow()
          + " and was not back within 10% by the end of the timeline (second " + e.lastSecond() + "): at least "
          + e.secondsBelow() + " s slowed down.");
    } else {
      out.add("Kill test: QPS fell below 90% of the pre-kill level in second " + e.firstBelow()
          + " and was back within 10% from second " + e.recovered() + ": " + e.secondsBelow() + " s slowed down.");
    }
    StringBuilder failures = new StringBuilder("Kill test: from the kill on, ").append(e.lostAfter())
        .append(" queries lost (unanswered after ").append(kill.queryTimeout().toSeconds()).append(" s) and ")
        .append(e.servfailAfter()).append(" SERVFAIL answers, in ").append(e.secondsWithFailures())
        .append(e.secondsWithFailures() == 1 ? " second" : " seconds");
    if (kill.servfailCounted() != null) {
      failures.append(" (the survivors counted ").append(kill.servfailCounted())
          .append(" SERVFAIL replies over the whole run)");
    }
    if (e.worstLatency() != null) {
      failures.append("; the slowest second (").append(e.worstLatency().second()).append(") averaged ")
          .append(StudySummary.ms(e.worstLatency().avgLatencyMs()));
    }
    out.add(failures.append('.').toString());
    return out;
  }

  /** When the cluster noticed the kill and when it let the node go, as a survivor saw it. */
  static String departure(KillTimeline.Event kill) {
    if (kill.minority()) {
      return downing(kill);
    }
    StringBuilder t = new StringBuilder();
    if (kill.unreachableAfterSeconds() == null) {
      t.append(kill.node()).append(" was never seen as unreachable");
    } else {
      t.append(kill.node()).append(" was marked unreachable ")
          .append(String.format(Locale.ROOT, "%.1f", kill.unreachableAfterSeconds()))
          .append(" s after the kill (from then on its names belong to the others)");
    }
    if (kill.removedAfterSeconds() == null) {
      t.append(" and was still a member when the study stopped watching");
    } else {
      t.append(" and left the cluster ").append(String.format(Locale.ROOT, "%.1f", kill.removedAfterSeconds()))
          .append(" s after it (downed by the Split Brain Resolver)");
    }
    return t.toString();
  }

  /** When the survivor, left a minority, saw the others go and when its own membership was downed. */
  private static String downing(KillTimeline.Event kill) {
    String survivor = String.join(" and ", kill.targets());
    StringBuilder t = new StringBuilder(survivor);
    if (kill.unreachableAfterSeconds() == null) {
      t.append(" never saw ").append(kill.node()).append(" as unreachable");
    } else {
      t.append(" marked ").append(kill.node()).append(" unreachable ")
          .append(String.format(Locale.ROOT, "%.1f", kill.unreachableAfterSeconds()))
          .append(" s after the kill (from then on it owns every name)");
    }
    if (kill.removedAfterSeconds() == null) {
      t.append(" and was not downed while the study watched");
    } else {
      t.append(", and, a minority, was downed by the Split Brain Resolver ")
          .append(String.format(Locale.ROOT, "%.1f", kill.removedAfterSeconds()))
          .append(" s after the kill: its membership started over while its DNS side went on answering");
    }
    return t.toString();
  }

  static String section(KillTimeline.Event kill, List<KillTimeline.Second> seconds) {
    StringBuilder md = new StringBuilder("\n## Node kill\n\n");
    md.append(String.format(Locale.ROOT, "%s (PID %s) of %s %s killed with SIGKILL %.1f s after dnsperf started. ",
        kill.node(), kill.pid(), kill.member(), kill.node().contains(" and ") ? "were" : "was", kill.atSeconds()));
    if (kill.minority()) {
      md.append(departure(kill)).append(". ");
    }
    md.append("dnsperf ran against ").append(String.join(" and ", kill.targets()))
        .append(" with per-second statistics (`-S 1 -v -t ").append(kill.queryTimeout().toSeconds())
        .append("`). Per second: `qps` is the answers received in that second, summed over the nodes; ")
        .append("`avg_latency_ms` their mean latency; `lost` the queries dnsperf gave up on in that second ")
        .append("(sent about ").append(kill.queryTimeout().toSeconds()).append(" s earlier); `servfail` the ")
        .append("SERVFAIL answers. `after_kill` is 1 from the second that holds the kill. Recovery is the ")
        .append("first second, after QPS first fell below 90% of the mean of the whole seconds before the kill ")
        .append("(the first second left out: dnsperf ramps up in it), with QPS back within 10% of that mean.\n\n");
    md.append("[").append(StudyCsv.KILL_TIMELINE.file()).append("](").append(StudyCsv.KILL_TIMELINE.file()).append(") ")
        .append("[").append(KillTimeline.PNG).append("](").append(KillTimeline.PNG).append(")\n\n");
    md.append("| ").append(String.join(" | ", KillTimeline.COLUMNS)).append(" |\n|");
    for (int i = 0; i < KillTimeline.COLUMNS.size(); i++) {
      md.append(" ---: |");
    }
    md.append('\n');
    for (KillTimeline.Second s : seconds) {
      md.append("| ").append(String.join(" | ", s.cells())).append(" |\n");
    }
    return md.toString();
  }
}
