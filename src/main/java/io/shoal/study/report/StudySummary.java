package io.shoal.study.report;

import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.Pace;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.scenario.StudyPage;
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

  private StudySummary() {}

  /**
   * A summary's first lines: its title, the scenario's description and when the run started;
   * for a quick run ({@code quickRan} not null: what each part ran, e.g. "each phase ran 3 s"),
   * the warning that its numbers are not to be quoted.
   */
  static StringBuilder opening(Scenario s, String startedAt, String quickRan) {
    StringBuilder md = new StringBuilder();
    StudyPage page = s.page() != null ? s.page() : StudyPage.of(s.description());
    md.append("# Study `").append(s.name()).append("`\n\n");
    md.append("**Question.** ").append(page.question()).append("\n\n");
    if (page.whenThisMatters() != null) {
      md.append("**When this matters.** ").append(page.whenThisMatters()).append("\n\n");
    }
    if (!page.question().equals(s.description())) {
      md.append("**Members.** ").append(s.description()).append("\n\n");
    }
    md.append("Reproduce: `bench/study ").append(s.name()).append("`. Method: docs/performance-methodology.md.\n\n");
    md.append("Run started ").append(startedAt).append(".");
    if (quickRan != null) {
      md.append(" **Quick smoke run** (--quick): ").append(quickRan)
          .append(", so these numbers only show that the study works; do not quote them.");
    }
    return md;
  }

  /** The whole file. */
  public static String render(Context c, List<ResultRow> rows) {
    Scenario s = c.scenario();
    Recipe r = s.recipe();
    StringBuilder md = opening(s, c.startedAt(), c.quick() ? "each member ran " + c.load().duration().toSeconds()
        + " s with " + c.load().warmup().toSeconds() + " s of warm-up" : null);
    // members of other groups (cluster_capacity's hit and churn) are compared within their group
    // in the cluster section, not with a baseline that ran another workload
    String group = s.members().stream().filter(m -> m.name().equals(s.baseline())).findFirst()
        .map(m -> m.group()).orElse(null);
    List<ResultRow> sameGroup = rows.stream().filter(row -> s.members().stream()
        .anyMatch(m -> m.name().equals(row.member()) && java.util.Objects.equals(m.group(), group))).toList();
    List<RatioGlance.Ratio> ratios = RatioGlance.ratios(sameGroup, c.rounds(), s.baseline());
    md.append("\n\n## Takeaway\n\n").append(RatioGlance.takeaway(ratios, s.baseline(), s.paces().keySet(), s.page().repeats()));
    if (sameGroup.size() < rows.size()) {
      md.append(" (Group ").append(group).append(" only; the cluster section compares each group within itself.)");
    }
    md.append("\n");
    md.append("\n## At a glance\n\n");
    String ratioTable = RatioGlance.table(ratios, s.baseline(), s.paces().keySet(), s.page().repeats());
    if (!ratioTable.isEmpty()) {
      md.append(ratioTable).append('\n');
    }
    for (String line : atAGlance(rows, s.baseline(), s.paces())) {
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

    md.append("\n## Evidence\n\n");
    for (String f : StudyCharts.FILES) {
      md.append("![").append(f).append("](").append(f).append(")\n");
    }
    md.append("\nData: [").append(StudyCsv.RESULTS.file()).append("](").append(StudyCsv.RESULTS.file()).append(")")
        .append(c.rounds().isEmpty() ? "" : ", [" + StudyCsv.ROUNDS.file() + "](" + StudyCsv.ROUNDS.file() + ")")
        .append(". Each member's median run:\n\n");
    md.append(table(rows));
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
      md.append(RoundsSummary.section(c.rounds(), s.baseline(), r.sideBySide()));
    }
    if (!c.clusterRows().isEmpty()) {
      md.append(ClusterSummary.section(c));
    }
    if (c.kill() != null && c.killSeconds() != null) {
      md.append(KillSummary.section(c.kill(), c.killSeconds()));
    }
    if (!c.notRun().isEmpty()) {
      md.append("\n## Members without a row\n\n");
      c.notRun().forEach((m, why) -> md.append("- **").append(m).append("**: ").append(why.replace("\n", " ")).append('\n'));
    }

    md.append("\n## What was varied: the members\n\n");
    c.setups().forEach((m, setup) -> md.append("- **").append(m).append("**: ").append(setup).append('\n'));

    md.append("\n## Held constant\n\n");
    md.append("- upstream: knotd, zone `").append(r.zone()).append(r.signed()
            ? "` with an A record for each queried name (no wildcard, whose NSEC proof a resolver with aggressive "
                + "NSEC would answer every other name from), TTL "
            : "` with a wildcard A record, TTL ")
        .append(r.stubTtl().toSeconds()).append(" s, UDP workers: ").append(r.upstreamWorkers()).append('\n');
    if (r.signed()) {
      md.append("- DNSSEC: knotd signs the zone (").append(r.signing().algorithm()).append(", NSEC, keys made at ")
          .append("start); validating members take its DS records (`keymgr ZONE ds`) as their trust anchor; every ")
          .append("dnsperf query sets DO (-D); each member's answer for n0 is checked with kdig +dnssec at its ")
          .append("start (a miss, then a hit) and after its measured run: signed, AD set exactly when it validates\n");
    }
    md.append("- queries: ").append(r.queries().lines()).append(" lines drawn uniformly with replacement from ")
        .append(r.queries().names()).append(" names, seed ").append(r.queries().seed()).append('\n');
    md.append("- cache: max_entries ").append(r.maxEntries()).append(", when_full ").append(r.whenFull())
        .append("; LMDB shard_count ").append(r.shardCount()).append(", map_size ").append(r.mapSizeBytes())
        .append(" B per shard, sync_interval ").append(r.syncInterval().toMillis()).append(" ms\n");
    md.append("- load: dnsperf -c ").append(c.load().clients()).append(" -q ").append(c.load().outstanding())
        .append(" -T ").append(c.load().threads()).append(" -l ").append(c.load().duration().toSeconds())
        .append(", after ").append(c.load().warmup().toSeconds()).append(" s of warm-up with the same flags")
        .append(r.sideBySide() ? " (once, at the member's start: every member then ran until the last round, idle "
            + "while the others were measured)\n" : "\n");
    if (!c.clusterRows().isEmpty()) {
      md.append("- members of several nodes: one dnsperf per node, all at once, each with the flags above (the ")
          .append("whole window per node, so each node is driven as hard as a one-node member); node i replays ")
          .append("a query file drawn like the first with seed ").append(r.queries().seed()).append(" + i; ")
          .append("cache capacity is per node\n");
    }
    appendJvmOptions(md, s);

    appendProvenance(md, c.host(), c.versions(), c.commands());
    md.append(rawFiles("each member's directory under `members/` holds its configuration, its log, the raw "
        + "dnsperf output and the statistics read before and after the measured run"));
    return md.toString();
  }

  /** The recipe's JVM options for every shoal member, then those a member adds to them. */
  static void appendJvmOptions(StringBuilder md, Scenario s) {
    md.append("- shoal JVM options: ").append(String.join(" ", s.recipe().jvmOptions())).append('\n');
    for (var m : s.members()) {
      if (!m.jvmOptions().isEmpty()) {
        md.append("- ").append(m.name()).append(" adds: ").append(String.join(" ", m.jvmOptions())).append('\n');
      }
    }
  }

  /**
   * The paragraph that ends a page: where the run's raw files are (one archive, which the runner
   * packs when the run ends) and what {@code inside} them, a clause.
   */
  static String rawFiles(String inside) {
    return "\nThe raw files are packed in [raw.tar.xz](raw.tar.xz) (`tar -xJf raw.tar.xz` unpacks them into the "
        + "run directory): " + inside + "; `knotd/` holds the upstream's configuration and log. The paths under "
        + "Commands run are as they were during the run.\n";
  }

  /**
   * With several rounds, one sentence per member: the median over the rounds of its QPS against
   * the baseline's in the same round (see {@link RoundsSummary}).
   */
  public static List<String> roundsAtAGlance(List<RoundRow> rounds, String baseline) {
    return RoundsSummary.atAGlance(rounds, baseline);
  }

  /** Each run's QPS over the baseline's in the same round; empty where a round has no baseline run. */
  static List<Double> ratiosByRound(List<RoundRow> rounds, String member, String baseline) {
    return RoundsSummary.ratiosByRound(rounds, member, baseline);
  }

  /** What a cluster scenario is for, one sentence each, from cluster.csv (see {@link ClusterSummary}). */
  public static List<String> clusterAtAGlance(List<ClusterRow> rows) {
    return ClusterSummary.atAGlance(rows);
  }

  /** What the kill did, one sentence each, from kill_timeline.csv (see {@link KillSummary}). */
  public static List<String> killAtAGlance(KillTimeline.Event kill, List<KillTimeline.Second> seconds) {
    return KillSummary.atAGlance(kill, seconds);
  }

  /** When the cluster noticed the kill and when it let the node go, as a survivor saw it. */
  static String departure(KillTimeline.Event kill) {
    return KillSummary.departure(kill);
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
   * change, both QPS values, both hit rates, and both fill means where the two have one. A paced
   * member's QPS is what it was offered ({@code paces}, by member), which the sentence says.
   */
  public static List<String> atAGlance(List<ResultRow> rows, String baselineName, Map<String, Pace> paces) {
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
          .append(" qps");
      Pace pace = paces.get(r.member());
      if (pace != null) {
        line.append("; ").append(pacedNote(pace));
      }
      line.append(")");
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

  /**
   * What a paced member's QPS is: "paced at 0.8x churn-cluster-3's QPS, the load it was offered, not a
   * capacity figure".
   */
  static String pacedNote(Pace pace) {
    return "paced at " + pace.share() + "x " + pace.of() + "'s QPS, " + OFFERED_NOT_CAPACITY;
  }

  /** What a paced member's QPS is, in every line that quotes it. */
  static final String OFFERED_NOT_CAPACITY = "the load it was offered, not a capacity figure";

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

  static String pct(double v) {
    return String.format(Locale.ROOT, "%.1f%%", v);
  }

  static String ms(double v) {
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
