package io.shoal.study.report;

import io.shoal.study.cluster.RemoteLookupProbe;
import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.timeline.KillTimeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * summary.md of one run. Every result number in it is computed from the rows read back from
 * results.csv, so the summary can never disagree with the CSV.
 */
public final class StudySummary {

  /** What the summary reports besides the rows: the run's context. */
  public record Context(
      Scenario scenario,
      String startedAt,
      boolean quick,
      LoadSettings load,
      HostFacts host,
      Map<String, String> versions,
      Map<String, String> setups,
      Map<String, String> notRun,
      List<String> commands,
      List<ClusterRow> clusterRows,
      Map<String, String> probes,
      KillTimeline.Event kill,
      List<KillTimeline.Second> killSeconds,
      List<RoundRow> rounds) {}

  /** Below this a remote lookup counts as cheap on loopback (the cluster's design goal). */
  static final double OVERHEAD_GOAL_MS = 1.0;

  private StudySummary() {}

  /** The whole file. */
  public static String render(Context c, List<ResultRow> rows) {
    Scenario s = c.scenario();
    Recipe r = s.recipe();
    StringBuilder md = new StringBuilder();
    md.append("# Study `").append(s.name()).append("`\n\n").append(s.description()).append("\n\n");
    md.append("Run started ").append(c.startedAt()).append(".");
    if (c.quick()) {
      md.append(" **Quick smoke run** (--quick): each member ran ").append(c.load().duration().toSeconds())
          .append(" s with ").append(c.load().warmup().toSeconds())
          .append(" s of warm-up, so these numbers only show that the study works; do not quote them.");
    }
    md.append("\n\n## At a glance\n\n");
    for (String line : atAGlance(rows, s.baseline())) {
      md.append("- ").append(line).append('\n');
    }
    for (String line : clusterAtAGlance(c.clusterRows())) {
      md.append("- ").append(line).append('\n');
    }
    if (c.kill() != null && c.killSeconds() != null) {
      for (String line : killAtAGlance(c.kill(), c.killSeconds())) {
        md.append("- ").append(line).append('\n');
      }
    }
    for (String line : roundsAtAGlance(c.rounds(), s.baseline())) {
      md.append("- ").append(line).append('\n');
    }
    for (String member : c.notRun().keySet()) {
      md.append("- ").append(member).append(": no result (see \"Members without a row\").\n");
    }
    md.append("\nAbsolute numbers hold for this host only; quote the ratios, which were measured in one run ")
        .append("under the same conditions (see docs/performance-methodology.md).\n");

    md.append("\n## Results\n\n").append(table(rows));
    md.append("\n`hit_rate_pct` is 1 - (queries knotd received) / (queries dnsperf completed), the same for ")
        .append("every member (empty for a member that answers without knotd behind it); `cache_hits` and ")
        .append("`cache_misses` are the member's own statistics. `cpu_seconds` is the user + system CPU time ")
        .append("of the member's serving processes (see Members) from just before to just after the measured ")
        .append("dnsperf run, read from /proc/PID/stat, and `cpu_us_per_query` that time per completed query. ")
        .append("Charts: ");
    for (String f : StudyCharts.FILES) {
      md.append("[").append(f).append("](").append(f).append(") ");
    }
    md.append("\n");
    if (!c.rounds().isEmpty()) {
      md.append(roundsSection(c.rounds(), s.baseline()));
    }
    if (!c.clusterRows().isEmpty()) {
      md.append(clusterSection(c));
    }
    if (c.kill() != null && c.killSeconds() != null) {
      md.append(killSection(c.kill(), c.killSeconds()));
    }
    if (!c.notRun().isEmpty()) {
      md.append("\n## Members without a row\n\n");
      c.notRun().forEach((m, why) -> md.append("- **").append(m).append("**: ").append(why.replace("\n", " ")).append('\n'));
    }

    md.append("\n## Members\n\n");
    c.setups().forEach((m, setup) -> md.append("- **").append(m).append("**: ").append(setup).append('\n'));

    md.append("\n## Held constant\n\n");
    md.append("- upstream: knotd, zone `").append(r.zone()).append("` with a wildcard A record, TTL ")
        .append(r.stubTtl().toSeconds()).append(" s, UDP workers: ").append(r.upstreamWorkers()).append('\n');
    md.append("- queries: ").append(r.queries().lines()).append(" lines drawn uniformly with replacement from ")
        .append(r.queries().names()).append(" names, seed ").append(r.queries().seed()).append('\n');
    md.append("- cache: max_entries ").append(r.maxEntries()).append(", when_full ").append(r.whenFull())
        .append("; LMDB shard_count ").append(r.shardCount()).append(", map_size ").append(r.mapSizeBytes())
        .append(" B per shard, sync_interval ").append(r.syncInterval().toMillis()).append(" ms\n");
    md.append("- load: dnsperf -c ").append(c.load().clients()).append(" -q ").append(c.load().outstanding())
        .append(" -T ").append(c.load().threads()).append(" -l ").append(c.load().duration().toSeconds())
        .append(", after ").append(c.load().warmup().toSeconds()).append(" s of warm-up with the same flags\n");
    if (!c.clusterRows().isEmpty()) {
      md.append("- members of several nodes: one dnsperf per node, all at once, each with the flags above (the ")
          .append("whole window per node, so each node is driven as hard as a one-node member); node i replays ")
          .append("a query file drawn like the first with seed ").append(r.queries().seed()).append(" + i; ")
          .append("cache capacity is per node\n");
    }
    md.append("- shoal JVM options: ").append(String.join(" ", r.jvmOptions())).append('\n');

    appendProvenance(md, c.host(), c.versions(), c.commands());
    md.append("\nEach member's directory under `members/` holds its configuration, its log, the raw ")
        .append("dnsperf output and the statistics read before and after the measured run.\n");
    return md.toString();
  }

  /** The sections every summary ends with: the host, the tools' versions and the commands run. */
  static void appendProvenance(StringBuilder md, HostFacts host, Map<String, String> versions,
      List<String> commands) {
    md.append("\n## Host\n\n");
    md.append("- CPU: ").append(host.cpuModel()).append('\n');
    md.append("- cores available: ").append(host.cores()).append('\n');
    md.append("- kernel: ").append(host.kernel()).append('\n');
    md.append("- data path storage: ").append(host.dataDisk()).append('\n');

    md.append("\n## Versions\n\n");
    versions.forEach((tool, v) -> md.append("- ").append(tool).append(": ").append(v).append('\n'));

    md.append("\n## Commands run\n\nIn order; `#` lines are steps done inside the study process.\n\n```\n");
    commands.forEach(cmd -> md.append(cmd).append('\n'));
    md.append("```\n");
  }

  /**
   * One sentence per member comparing it with the baseline member: its QPS as a percentage
   * change, both QPS values, both hit rates, and both fill means where the two have one.
   */
  public static List<String> atAGlance(List<ResultRow> rows, String baselineName) {
    List<String> out = new ArrayList<>();
    if (rows.isEmpty()) {
      out.add("No member produced a result.");
      return out;
    }
    Optional<ResultRow> named = rows.stream().filter(r -> r.member().equals(baselineName)).findFirst();
    ResultRow base = named.orElse(rows.get(0));
    if (named.isEmpty()) {
      out.add("The baseline member " + baselineName + " has no row; comparing with " + base.member() + " instead.");
    }
    out.add(base.member() + " (baseline): ~" + approx(base.achievedQps()) + " qps"
        + hitRate(base) + fill(base) + cpu(base) + ".");
    for (ResultRow r : rows) {
      if (r == base) {
        continue;
      }
      StringBuilder line = new StringBuilder(r.member()).append(' ');
      if (base.achievedQps() <= 0) {
        line.append("cannot be compared on QPS (the baseline completed nothing)");
      } else {
        double change = (r.achievedQps() - base.achievedQps()) / base.achievedQps() * 100.0;
        long pct = Math.round(Math.abs(change));
        if (pct == 0) {
          line.append("matches ").append(base.member()).append(" on QPS within 1%");
        } else if (change < 0) {
          line.append("costs about ").append(pct).append("% QPS versus ").append(base.member());
        } else if (change < 100) {
          line.append("is about ").append(pct).append("% faster than ").append(base.member());
        } else {
          // "1557% faster" reads badly; a multiple is what people say past double
          line.append("reaches about ").append(String.format(Locale.ROOT, "%.1f", r.achievedQps() / base.achievedQps()))
              .append("x the QPS of ").append(base.member());
        }
      }
      line.append(" (~").append(approx(r.achievedQps())).append(" vs ~").append(approx(base.achievedQps()))
          .append(" qps)");
      if (r.hitRatePct() != null && base.hitRatePct() != null) {
        line.append("; hit rate ").append(pct(r.hitRatePct())).append(" vs ").append(pct(base.hitRatePct()));
      }
      if (r.fillMeanMs() != null && base.fillMeanMs() != null) {
        line.append("; fill mean ").append(ms(r.fillMeanMs())).append(" vs ").append(ms(base.fillMeanMs()));
      }
      line.append(cpuAgainst(r.cpuMicrosPerQuery(), base.cpuMicrosPerQuery(), base.member()));
      out.add(line.append('.').toString());
    }
    for (ResultRow r : rows) {
      if (r.sent() > 0 && r.lost() * 1000 > r.sent()) {
        out.add(r.member() + " lost " + r.lost() + " of " + r.sent() + " queries ("
            + pct(100.0 * r.lost() / r.sent()) + "): its QPS understates what it answered in time.");
      }
    }
    return out;
  }

  /** The rounds of each member, in the order the members ran. */
  private static Map<String, List<ResultRow>> byMember(List<RoundRow> rounds) {
    Map<String, List<ResultRow>> out = new java.util.LinkedHashMap<>();
    for (RoundRow r : rounds) {
      out.computeIfAbsent(r.row().member(), k -> new ArrayList<>()).add(r.row());
    }
    return out;
  }

  /** Each run's QPS over the baseline's in the same round; empty where a round has no baseline run. */
  static List<Double> ratiosByRound(List<RoundRow> rounds, String member, String baseline) {
    Map<Integer, Double> base = new java.util.HashMap<>();
    for (RoundRow r : rounds) {
      if (r.row().member().equals(baseline)) {
        base.put(r.round(), r.row().achievedQps());
      }
    }
    List<Double> out = new ArrayList<>();
    for (RoundRow r : rounds) {
      Double b = base.get(r.round());
      if (r.row().member().equals(member) && b != null && b > 0) {
        out.add(r.row().achievedQps() / b);
      }
    }
    return out;
  }

  static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /**
   * With several rounds, one sentence per member: the median over the rounds of its QPS against
   * the baseline's in the same round, with each round's ratio, and its hit rates against the
   * baseline's (medians). Pairing runs of one round keeps a drift of the host out of the ratio.
   */
  public static List<String> roundsAtAGlance(List<RoundRow> rounds, String baseline) {
    List<String> out = new ArrayList<>();
    if (rounds.isEmpty()) {
      return out;
    }
    Map<String, List<ResultRow>> members = byMember(rounds);
    List<ResultRow> base = members.get(baseline);
    if (base == null) {
      return out;
    }
    long roundCount = rounds.stream().mapToInt(RoundRow::round).distinct().count();
    out.add("Over " + roundCount + " rounds (members taking turns), each member's QPS against " + baseline
        + "'s in the same round, median of the rounds:");
    for (Map.Entry<String, List<ResultRow>> e : members.entrySet()) {
      if (e.getKey().equals(baseline)) {
        continue;
      }
      List<Double> ratios = ratiosByRound(rounds, e.getKey(), baseline);
      if (ratios.isEmpty()) {
        continue;
      }
      StringBuilder line = new StringBuilder(e.getKey()).append(": ")
          .append(String.format(Locale.ROOT, "%.2fx", median(ratios))).append(" (rounds: ");
      for (int i = 0; i < ratios.size(); i++) {
        line.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2fx", ratios.get(i)));
      }
      line.append(")");
      List<Double> hits = hitRates(e.getValue());
      List<Double> baseHits = hitRates(base);
      if (!hits.isEmpty() && !baseHits.isEmpty()) {
        line.append("; hit rate ").append(pct(median(hits))).append(" vs ").append(pct(median(baseHits)));
      }
      List<Double> cpu = cpuPerQuery(e.getValue());
      List<Double> baseCpu = cpuPerQuery(base);
      if (!cpu.isEmpty() && !baseCpu.isEmpty()) {
        line.append(cpuAgainst(median(cpu), median(baseCpu), baseline)).append(" (medians)");
      }
      out.add(line.append('.').toString());
    }
    return out;
  }

  private static List<Double> hitRates(List<ResultRow> rows) {
    return rows.stream().map(ResultRow::hitRatePct).filter(java.util.Objects::nonNull).toList();
  }

  private static List<Double> cpuPerQuery(List<ResultRow> rows) {
    return rows.stream().map(ResultRow::cpuMicrosPerQuery).filter(java.util.Objects::nonNull).toList();
  }

  /** "; CPU per query 0.28x memory's (3.5 vs 12.5 us)", or nothing when either is missing. */
  static String cpuAgainst(Double us, Double baseUs, String baseline) {
    if (us == null || baseUs == null) {
      return "";
    }
    String ratio = baseUs > 0 ? String.format(Locale.ROOT, "%.2fx %s's ", us / baseUs, baseline) : "";
    return "; CPU per query " + ratio + "(" + micros(us) + " vs " + micros(baseUs) + ")";
  }

  private static String micros(double us) {
    return String.format(Locale.ROOT, "%.1f us", us);
  }

  private static String roundsSection(List<RoundRow> rounds, String baseline) {
    Map<String, List<ResultRow>> members = byMember(rounds);
    int roundCount = rounds.stream().mapToInt(RoundRow::round).max().orElse(0);
    StringBuilder md = new StringBuilder("\n## Rounds\n\n");
    md.append("Every member was measured ").append(roundCount).append(" times, members taking turns (round 1 ")
        .append("ran every member once, then round 2, ...). The table above and results.csv hold each member's ")
        .append("median run by QPS; [").append(StudyCsv.ROUNDS.file()).append("](").append(StudyCsv.ROUNDS.file())
        .append(") holds every run. Against ").append(baseline).append(" means against ").append(baseline)
        .append("'s run of the same round.\n\n| member |");
    for (int i = 1; i <= roundCount; i++) {
      md.append(" qps round ").append(i).append(" |");
    }
    md.append(" against ").append(baseline).append(", each round | median |\n| --- |");
    md.append(" ---: |".repeat(roundCount)).append(" --- | ---: |\n");
    for (Map.Entry<String, List<ResultRow>> e : members.entrySet()) {
      md.append("| ").append(e.getKey()).append(" |");
      for (RoundRow r : rounds) {
        if (r.row().member().equals(e.getKey())) {
          md.append(' ').append(String.format(Locale.ROOT, "%.1f", r.row().achievedQps())).append(" |");
        }
      }
      md.append(" |".repeat(Math.max(0, roundCount - e.getValue().size())));
      List<Double> ratios = ratiosByRound(rounds, e.getKey(), baseline);
      md.append(' ');
      for (int i = 0; i < ratios.size(); i++) {
        md.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2fx", ratios.get(i)));
      }
      md.append(" | ").append(ratios.isEmpty() ? "-" : String.format(Locale.ROOT, "%.2fx", median(ratios)))
          .append(" |\n");
    }
    return md.toString();
  }

  /**
   * What a cluster scenario is for, one sentence each, from cluster.csv: upstream queries of each
   * cluster against the independent nodes of the same count, aggregate QPS of each multi-node
   * member against the one-node member, and the cost of a remote lookup. Empty without rows.
   */
  public static List<String> clusterAtAGlance(List<ClusterRow> rows) {
    List<String> out = new ArrayList<>();
    Optional<ClusterRow> single = rows.stream().filter(r -> r.nodes() == 1 && !r.cluster()).findFirst();
    for (ClusterRow c : rows) {
      if (!c.cluster()) {
        continue;
      }
      Optional<ClusterRow> independent = rows.stream()
          .filter(r -> !r.cluster() && r.nodes() == c.nodes()).findFirst();
      if (independent.isEmpty()) {
        continue;
      }
      ClusterRow o = independent.get();
      StringBuilder line = new StringBuilder(c.member()).append(" sent ");
      double perC = perThousand(c);
      double perO = perThousand(o);
      if (c.completed() <= 0 || o.completed() <= 0) {
        line.append(c.upstreamQueries()).append(" queries upstream vs ").append(o.upstreamQueries())
            .append(" for ").append(o.member()).append(" (no ratio: a member completed nothing)");
      } else if (perC <= 0) {
        line.append("no query upstream vs ").append(String.format(Locale.ROOT, "%.1f", perO))
            .append(" per 1,000 answered for ").append(o.member());
      } else {
        line.append(String.format(Locale.ROOT, "%.1f", perC)).append(" upstream queries per 1,000 answered vs ")
            .append(String.format(Locale.ROOT, "%.1f", perO)).append(" for ").append(o.member()).append(": ");
        double fewer = perO / perC;
        if (fewer >= 1) {
          line.append(String.format(Locale.ROOT, "%.1f", fewer)).append("x fewer");
        } else {
          line.append(String.format(Locale.ROOT, "%.1f", 1 / fewer)).append("x more");
        }
        line.append(" (goal: about ").append(c.nodes()).append("x fewer, the node count)");
      }
      line.append("; ").append(c.upstreamQueries()).append(" vs ").append(o.upstreamQueries())
          .append(" upstream queries in all");
      if (c.fairHitRatePct() != null && o.fairHitRatePct() != null) {
        line.append(", hit rate ").append(pct(c.fairHitRatePct())).append(" vs ").append(pct(o.fairHitRatePct()));
      }
      out.add(line.append('.').toString());
    }
    if (single.isPresent() && single.get().achievedQps() > 0) {
      ClusterRow one = single.get();
      for (ClusterRow r : rows) {
        if (r.nodes() > 1) {
          out.add(r.member() + " (" + r.nodes() + " nodes" + (r.cluster() ? ", cluster" : "") + ") reaches "
              + String.format(Locale.ROOT, "%.2f", r.achievedQps() / one.achievedQps()) + "x the QPS of "
              + one.member() + " (1 node): ~" + approx(r.achievedQps()) + " vs ~" + approx(one.achievedQps())
              + " qps.");
        }
      }
    }
    for (ClusterRow r : rows) {
      if (r.remoteLookupOverheadMs() != null) {
        double ms = r.remoteLookupOverheadMs();
        if (ms < 0) {
          // a negative cost is noise: the host slowed the repeat passes more than the owner slowed the first
          out.add(r.member() + ": the remote-lookup probe measured no overhead (" + ms(ms) + ": the first passes "
              + "were faster than the all-local repeat passes, so this host's noise outweighs the cost of asking "
              + "the owner; see \"Remote-lookup overhead\").");
        } else {
          out.add(r.member() + ": asking the owner node adds about " + ms(ms) + " to a query ("
              + (ms < OVERHEAD_GOAL_MS ? "under" : "over") + " the " + ms(OVERHEAD_GOAL_MS)
              + " goal on loopback; idle probe, see \"Remote-lookup overhead\").");
        }
      }
      if (r.remoteLookupsTimeout() != null && r.remoteLookupsTimeout() > 0) {
        out.add(r.member() + ": " + r.remoteLookupsTimeout() + " remote lookups timed out (the owner did not answer "
            + "within owner_timeout; the node went upstream itself).");
      }
      if (r.remoteLookupsRefused() != null && r.remoteLookupsRefused() > 0) {
        out.add(r.member() + ": " + r.remoteLookupsRefused() + " remote lookups were refused (the owner's "
            + "access_control does not allow the other nodes; the node went upstream itself).");
      }
    }
    return out;
  }

  private static double perThousand(ClusterRow r) {
    return r.completed() <= 0 ? 0 : 1000.0 * r.upstreamQueries() / r.completed();
  }

  /** What the kill did, one sentence each, from the seconds read back from kill_timeline.csv. */
  public static List<String> killAtAGlance(KillTimeline.Event kill, List<KillTimeline.Second> seconds) {
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
      first.append("; before it ~").append(approx(e.preKillQps())).append(" qps");
      if (e.preKillLatencyMs() != null) {
        first.append(" at ").append(ms(e.preKillLatencyMs())).append(" mean latency");
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
          .append(ms(e.worstLatency().avgLatencyMs()));
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

  private static String clusterSection(Context c) {
    StringBuilder md = new StringBuilder("\n## Cluster\n\n");
    md.append("From `").append(StudyCsv.CLUSTER.file()).append("`: each member summed over its nodes.\n\n");
    md.append("| ").append(String.join(" | ", ClusterRow.COLUMNS)).append(" |\n|");
    for (int i = 0; i < ClusterRow.COLUMNS.size(); i++) {
      md.append(i < 3 ? " --- |" : " ---: |");
    }
    md.append('\n');
    for (ClusterRow r : c.clusterRows()) {
      md.append("| ").append(String.join(" | ", r.cells())).append(" |\n");
    }
    md.append("""

        - `achieved_qps`, `sent`, `completed`, `lost` are the nodes' dnsperf runs added up; `avg_latency_ms` \
        is the mean over every completed query (each node's mean weighted by its completed queries).
        - `upstream_queries` is what knotd received during the measured run, and `fair_hit_rate_pct` is \
        1 - upstream_queries / completed: the same measure as for every other member. In a cluster a \
        non-owner's miss that the owner answers from its cache sends nothing upstream, so it counts as a hit \
        here.
        - `cache_hits` and `cache_misses` are the nodes' own counters added up. They count such a remote \
        lookup twice: a miss on the node the client asked, then a hit (or a miss) on the owner. \
        `cache_hit_rate_pct` = cache_hits / (cache_hits + cache_misses - remote lookups the owner \
        answered): the owner-side lookups are taken out, which leaves one lookup per client query, and a \
        client query counts as a hit if any node's cache answered it. Coalesced misses (queries that joined a \
        fetch already in flight: a miss in the counters, nothing sent upstream) make it lower than the fair \
        rate; timed-out remote lookups make it higher (the asking node went upstream itself, and the owner may \
        have fetched the same name too).
        - `remote_lookups_*` are `shoal_cluster_remote_lookups_total` by outcome over the measured run: \
        `answered` (the owner answered, from its cache or upstream), `timeout` (no usable reply within \
        `owner_timeout`; the node went upstream itself), `failed` (the owner answered SERVFAIL), `refused` (the \
        owner's access control refused the asking node, which went upstream itself).
        - `cpu_seconds` is the user + system CPU time of all the member's node processes over the measured \
        run (from /proc/PID/stat, summed), and `cpu_us_per_query` that time per completed query.
        """);
    int mostNodes = c.clusterRows().stream().mapToInt(ClusterRow::nodes).max().orElse(1);
    md.append("\nAggregate QPS can only grow with the node count where the host has a core for each node, ")
        .append("its dnsperf and knotd; this host has ").append(c.host().cores()).append(" for up to ")
        .append(mostNodes).append(" nodes, ").append(mostNodes).append(" dnsperf processes and knotd. ")
        .append("Upstream queries and hit rates do not depend on the cores.\n");
    md.append("\nCharts: ");
    for (String f : StudyCharts.CLUSTER_FILES) {
      md.append("[").append(f).append("](").append(f).append(") ");
    }
    md.append("\n");
    if (!c.probes().isEmpty()) {
      md.append("\n### Remote-lookup overhead\n\n");
      md.append("""
          Measured after the member's run, with no other load, one query at a time (dnsperf -c 1 -q 1), \
          on %d names that are not in the query file, in %d batches. Per batch: node-0 is asked once for \
          each name, so each is then in its owner's cache; node-1 is asked for each once (first pass: its \
          own names are local hits, the others remote lookups), then once more (repeat pass: all local \
          hits). node-1's `shoal_cluster_remote_lookups_total` over the probe counts the first passes' \
          remote lookups. Overhead = (first-pass mean - repeat-pass mean) x first-pass queries / remote \
          lookups: the extra latency per remote lookup, measured on the same node, names and client a moment \
          apart, so the JVM's and the client's own costs cancel. On a busy host the noise can be larger than \
          the overhead, and the difference can even come out negative.

          """.formatted(RemoteLookupProbe.NAMES, RemoteLookupProbe.BATCHES));
      c.probes().forEach((m, d) -> md.append("- **").append(m).append("**: ").append(d).append('\n'));
    }
    return md.toString();
  }

  private static String killSection(KillTimeline.Event kill, List<KillTimeline.Second> seconds) {
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

  private static String hitRate(ResultRow r) {
    return r.hitRatePct() == null ? "" : ", hit rate " + pct(r.hitRatePct());
  }

  private static String cpu(ResultRow r) {
    return r.cpuMicrosPerQuery() == null ? "" : ", CPU " + micros(r.cpuMicrosPerQuery()) + " per query";
  }

  private static String fill(ResultRow r) {
    return r.fillMeanMs() == null ? "" : ", fill mean " + ms(r.fillMeanMs());
  }

  /** A rate rounded to three significant digits, with thousands separators: ~12,300. */
  static String approx(double v) {
    if (v >= 1000) {
      double scale = Math.pow(10, Math.floor(Math.log10(v)) - 2);
      return String.format(Locale.ROOT, "%,d", Math.round(Math.round(v / scale) * scale));
    }
    if (v >= 10) {
      return Long.toString(Math.round(v));
    }
    return String.format(Locale.ROOT, "%.1f", v);
  }

  private static String pct(double v) {
    return String.format(Locale.ROOT, "%.1f%%", v);
  }

  private static String ms(double v) {
    return String.format(Locale.ROOT, v < 0.1 ? "%.4f ms" : "%.3f ms", v);
  }

  private static String table(List<ResultRow> rows) {
    StringBuilder t = new StringBuilder("| ").append(String.join(" | ", ResultRow.COLUMNS)).append(" |\n|");
    for (int i = 0; i < ResultRow.COLUMNS.size(); i++) {
      t.append(i < 3 ? " --- |" : " ---: |");
    }
    t.append('\n');
    for (ResultRow r : rows) {
      t.append("| ").append(String.join(" | ", r.cells())).append(" |\n");
    }
    return t.toString();
  }
}
