package io.shoal.study.report;

import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.OutagePlan;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.timeline.OutageTimeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * summary.md of an upstream-outage run. Every result number in it is computed from the rows read
 * back from outage_phases.csv, so the summary can never disagree with the CSV.
 */
public final class OutageSummary {

  /** What the summary reports besides the phases: the run's context. */
  public record Context(Scenario scenario, String startedAt, boolean quick, LoadSettings load,
      Map<String, String> setups, Map<String, String> notRun, HostFacts host, Map<String, String> versions,
      List<String> commands) {}

  private OutageSummary() {}

  /** The whole file. */
  public static String render(Context c, List<OutageTimeline.Phase> phases, List<OutageTimeline.Second> seconds) {
    Scenario s = c.scenario();
    Recipe r = s.recipe();
    OutagePlan plan = s.outage();
    StringBuilder md = StudySummary.opening(s, c.startedAt(), c.quick() ? c.load().duration().toSeconds()
        + " s per member with a " + plan.length(true).toSeconds() + " s outage" : null);
    md.append("\n\n## At a glance\n\n");
    for (String line : atAGlance(s, phases, seconds)) {
      md.append("- ").append(line).append('\n');
    }
    for (String member : c.notRun().keySet()) {
      md.append("- ").append(member).append(": no result (see \"Members without a result\").\n");
    }

    md.append("\n## Phases\n\n| ").append(String.join(" | ", OutageTimeline.PHASE_COLUMNS)).append(" |\n|");
    for (int i = 0; i < OutageTimeline.PHASE_COLUMNS.size(); i++) {
      md.append(i < 2 ? " --- |" : " ---: |");
    }
    md.append('\n');
    for (OutageTimeline.Phase p : phases) {
      md.append("| ").append(String.join(" | ", p.cells())).append(" |\n");
    }
    md.append("\nknotd was stopped with SIGSTOP ").append(plan.after(c.quick()).toSeconds())
        .append(" s into each member's measured run and resumed with SIGCONT ")
        .append(plan.length(c.quick()).toSeconds()).append(" s later. A second is `during` if knotd was ")
        .append("stopped for any part of it. `completed` counts answers dnsperf received (any rcode), ")
        .append("`lost` the queries it gave up on after ").append(plan.queryTimeout().toSeconds())
        .append(" s (-t, a stub resolver's patience; a stale answer sent after `serve_stale.client_timeout` ")
        .append("still arrives in time), counted in the second it gave up. `stale` and `prefetches` are the ")
        .append("node's own counters (`shoal_stale_answers_total`, `shoal_prefetches_total`) read once a ")
        .append("second; shoal publishes them once a second, so they can trail dnsperf's seconds by one. ")
        .append("`stale_pct` is stale answers per completed answer. Stale answers and SERVFAILs go on until ")
        .append("shoal's next probe finds knotd back (within `max_backoff` of SIGCONT), so `after` can hold ")
        .append("some too. The first second is left out of `before` ")
        .append("(dnsperf ramps up in it). Per second: [outage_timeline.csv](outage_timeline.csv), chart ")
        .append("[").append(OutageTimeline.PNG).append("](").append(OutageTimeline.PNG).append(").\n");
    if (!c.notRun().isEmpty()) {
      md.append("\n## Members without a result\n\n");
      c.notRun().forEach((m, why) -> md.append("- **").append(m).append("**: ").append(why.replace("\n", " "))
          .append('\n'));
    }

    md.append("\n## Members\n\n");
    for (Member m : s.members()) {
      if (c.setups().containsKey(m.name())) {
        md.append("- **").append(m.name()).append("**: ").append(c.setups().get(m.name())).append(", ")
            .append(features(m)).append('\n');
      }
    }
    md.append("\n## Held constant\n\n");
    md.append("- upstream: knotd, zone `").append(r.zone()).append("` with a wildcard A record, TTL ")
        .append(r.stubTtl().toSeconds()).append(" s, one knotd for every member, run one after another\n");
    md.append("- fill: each of the ").append(r.queries().names()).append(" names asked once, evenly over ")
        .append(plan.fillSpread().toSeconds()).append(" s (dnsperf -n 1 -Q), so the answers expire spread ")
        .append("over the TTL; cache max_entries ").append(r.maxEntries())
        .append(", so expired answers stay in the cache to be served stale\n");
    md.append("- load: dnsperf -c ").append(c.load().clients()).append(" -q ").append(c.load().outstanding())
        .append(" -T ").append(c.load().threads()).append(" -l ").append(c.load().duration().toSeconds())
        .append(" -S 1 -v -t ").append(plan.queryTimeout().toSeconds()).append(" over ")
        .append(r.queries().lines()).append(" queries drawn uniformly from the names, after ")
        .append(c.load().warmup().toSeconds()).append(" s of warm-up\n");
    md.append("- shoal JVM options: ").append(String.join(" ", r.jvmOptions())).append('\n');
    md.append("\n## Host and versions\n\n");
    md.append("- CPU: ").append(c.host().cpuModel()).append(", ").append(c.host().cores())
        .append(" cores available; kernel ").append(c.host().kernel()).append('\n');
    c.versions().forEach((tool, v) -> md.append("- ").append(tool).append(": ").append(v).append('\n'));
    md.append("\n## Commands run\n\nIn order; `#` lines are steps done inside the study process.\n\n```\n");
    c.commands().forEach(cmd -> md.append(cmd).append('\n'));
    md.append("```\n").append(StudySummary.rawFiles("each member's directory under `members/` holds its "
        + "configuration, its log and every scrape's counters (`outage-scrapes.txt`); dnsperf's per-query output is "
        + "not kept, outage_timeline.csv holds what it said, second by second"));
    return md.toString();
  }

  /**
   * One sentence per member on the outage (answers, stale share, SERVFAIL and lost, prefetches, the
   * seconds shoal had knotd marked down), then each member against the baseline: how many queries
   * failed during the outage with one and the other.
   */
  public static List<String> atAGlance(Scenario s, List<OutageTimeline.Phase> phases,
      List<OutageTimeline.Second> seconds) {
    List<String> out = new ArrayList<>();
    for (Member m : s.members()) {
      Optional<OutageTimeline.Phase> during = phase(phases, m.name(), "during");
      if (during.isEmpty()) {
        continue;
      }
      OutageTimeline.Phase d = during.get();
      long servfailAll = phases.stream().filter(p -> p.member().equals(m.name()))
          .mapToLong(OutageTimeline.Phase::servfail).sum();
      long prefetches = phases.stream().filter(p -> p.member().equals(m.name()))
          .mapToLong(OutageTimeline.Phase::prefetches).sum();
      out.add(String.format(Locale.ROOT, "%s (%s): in the %d s that overlapped the outage %,d answers (%s/s), %,d of them "
          + "stale (%s), %,d SERVFAIL, %,d lost; over the run %,d SERVFAIL and %,d prefetches.",
          m.name(), features(m), d.seconds(), d.completed(), StudySummary.approx(d.qps()), d.stale(),
          d.stalePct() == null ? "-" : String.format(Locale.ROOT, "%.1f%%", d.stalePct()), d.servfail(), d.lost(),
          servfailAll, prefetches) + markedDown(m.name(), seconds));
    }
    Optional<OutageTimeline.Phase> base = phase(phases, s.baseline(), "during");
    for (Member m : s.members()) {
      Optional<OutageTimeline.Phase> other = phase(phases, m.name(), "during");
      if (base.isEmpty() || other.isEmpty() || m.name().equals(s.baseline())) {
        continue;
      }
      out.add(String.format(Locale.ROOT, "Queries without an answer (SERVFAIL or lost) during the outage: %,d for "
          + "%s against %,d for %s.", other.get().failed(), m.name(), base.get().failed(), s.baseline()));
    }
    if (out.isEmpty()) {
      out.add("No member produced a result.");
    }
    return out;
  }

  /** When the node had knotd marked down (shoal_upstream_up 0), from the timeline; empty if never. */
  static String markedDown(String member, List<OutageTimeline.Second> seconds) {
    List<Integer> down = seconds.stream()
        .filter(x -> x.member().equals(member) && Integer.valueOf(0).equals(x.upstreamUp()))
        .map(OutageTimeline.Second::second).toList();
    if (down.isEmpty()) {
      return " knotd was never marked down.";
    }
    List<Integer> outage = seconds.stream().filter(x -> x.member().equals(member) && x.outage())
        .map(OutageTimeline.Second::second).toList();
    String window = outage.isEmpty() ? "" : String.format(Locale.ROOT, "; knotd was stopped in seconds %d to %d",
        outage.get(0), outage.get(outage.size() - 1));
    return String.format(Locale.ROOT, " shoal had knotd marked down for %d s (seconds %d to %d%s).",
        down.size(), down.get(0), down.get(down.size() - 1), window);
  }

  /** Serve-stale and prefetch as the member runs them (both on unless its config turns them off). */
  public static String features(Member m) {
    return "serve-stale " + onOff(m, "serve_stale.enabled") + ", prefetch " + onOff(m, "prefetch.enabled");
  }

  private static String onOff(Member m, String key) {
    return !m.config().hasPath(key) || m.config().getBoolean(key) ? "on" : "off";
  }

  private static Optional<OutageTimeline.Phase> phase(List<OutageTimeline.Phase> phases, String member, String p) {
    return phases.stream().filter(x -> x.member().equals(member) && x.phase().equals(p)).findFirst();
  }
}
