package io.shoal.study.report;

import io.shoal.study.host.HostFacts;
import io.shoal.study.scenario.LoadSettings;
import io.shoal.study.scenario.RecursionPlan;
import io.shoal.study.scenario.Scenario;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * summary.md and the charts of a recursion run: each member's cold resolutions and warm hits
 * (QPS, CPU and authority queries per answer, p50/p99 latency, SERVFAILs) as medians over the
 * rounds with their spread, each as a ratio to the baseline's in the same round, and the cluster
 * part's authority queries against the independent nodes'.
 */
public final class RecursionSummary {
  /** The charts, each of results.csv's medians: cold CPU, cold authority queries, cold QPS, warm QPS. */
  static final List<StudyCharts.Bars<RecursionRow>> COLD = List.of(
      new StudyCharts.Bars<>("cold_cpu_per_resolution.png", "Cold resolutions: CPU per answer (lower is better)",
          "microseconds of user + system CPU per answered query", RecursionRow::cpuMicrosPerResolution, "0.0' us'"),
      new StudyCharts.Bars<>("cold_authority_queries.png",
          "Cold resolutions: queries the authorities received per answer (lower is better)",
          "authority queries per answered query", RecursionRow::authorityPerResolution, "0.00"),
      new StudyCharts.Bars<>("cold_qps.png", "Cold resolutions: answers a second (higher is better)",
          "answered queries per second (dnsperf)", RecursionRow::qps, "#,##0"),
      new StudyCharts.Bars<>("cold_p99.png", "Cold resolutions: 99th percentile latency (lower is better)",
          "milliseconds", RecursionRow::p99Ms, "0.00' ms'"));
  static final List<StudyCharts.Bars<RecursionRow>> WARM = List.of(
      new StudyCharts.Bars<>("warm_qps.png", "Warm hits: answers a second (higher is better)",
          "answered queries per second (dnsperf)", RecursionRow::qps, "#,##0"),
      new StudyCharts.Bars<>("warm_cpu_per_query.png", "Warm hits: CPU per answer (lower is better)",
          "microseconds of user + system CPU per answered query", RecursionRow::cpuMicrosPerResolution, "0.0' us'"));

  /**
   * What the summary reports besides the rows.
   *
   * @param coldNames the names each run resolved cold
   * @param warmUpNames the names each run resolved once before its cold pass
   * @param tree how the tree was built, one sentence
   * @param setups how each member ran, by member name
   * @param notRun runs that failed, with the reason
   */
  public record Context(Scenario scenario, String startedAt, boolean quick, LoadSettings load, int coldNames,
      int warmUpNames, String tree, Map<String, String> setups, Map<String, String> notRun, HostFacts host,
      Map<String, String> versions, List<String> commands) {}

  private RecursionSummary() {}

  /** Writes the charts of results.csv's rows into {@code dir}; returns their file names. */
  public static List<String> writeCharts(Path dir, List<RecursionRow> results, String subtitle) throws IOException {
    StudyCharts.writeBars(dir, phase(results, "cold"), RecursionRow::member, COLD, subtitle);
    StudyCharts.writeBars(dir, phase(results, "warm"), RecursionRow::member, WARM, subtitle);
    List<String> files = new ArrayList<>();
    COLD.forEach(c -> files.add(c.file()));
    WARM.forEach(c -> files.add(c.file()));
    return files;
  }

  static List<RecursionRow> phase(List<RecursionRow> rows, String phase) {
    return rows.stream().filter(r -> r.phase().equals(phase)).toList();
  }

  /** The figures compared with the baseline, by name, with how each is read off a row. */
  private record Figure(String name, Function<RecursionRow, Double> value, String format) {}

  private static final List<Figure> FIGURES = List.of(
      new Figure("CPU per answer", RecursionRow::cpuMicrosPerResolution, "%.1f us"),
      new Figure("authority queries per answer", RecursionRow::authorityPerResolution, "%.3f"),
      new Figure("QPS", RecursionRow::qps, "%,.0f"),
      new Figure("p50", RecursionRow::p50Ms, "%.2f ms"),
      new Figure("p99", RecursionRow::p99Ms, "%.2f ms"));

  /**
   * The ratios of {@code value} of {@code member} over {@code baseline} in each round both ran
   * {@code phase}; empty when they share no round.
   */
  static List<Double> ratiosByRound(List<RecursionRow> rounds, String member, String baseline, String phase,
      Function<RecursionRow, Double> value) {
    List<Double> out = new ArrayList<>();
    for (RecursionRow r : phase(rounds, phase)) {
      if (!r.member().equals(member)) {
        continue;
      }
      for (RecursionRow b : phase(rounds, phase)) {
        if (b.member().equals(baseline) && b.round().equals(r.round())) {
          Double a = value.apply(r);
          Double v = value.apply(b);
          if (a != null && v != null && v > 0) {
            out.add(a / v);
          }
        }
      }
    }
    return out;
  }

  /** "median (min to max, N rounds)" of {@code values} in {@code format}; "?" when empty. */
  static String spread(List<Double> values, String format) {
    List<Double> v = values.stream().filter(Objects::nonNull).sorted().toList();
    if (v.isEmpty()) {
      return "?";
    }
    String median = String.format(Locale.ROOT, format, v.get((v.size() - 1) / 2));
    return v.size() == 1 ? median : median + " (" + String.format(Locale.ROOT, format, v.get(0)) + " to "
        + String.format(Locale.ROOT, format, v.get(v.size() - 1)) + ", " + v.size() + " rounds)";
  }

  static List<String> members(List<RecursionRow> rows, int nodes) {
    Set<String> names = new LinkedHashSet<>();
    rows.stream().filter(r -> r.nodes() == nodes).forEach(r -> names.add(r.member()));
    return List.copyOf(names);
  }

  /**
   * The at-a-glance lines from rounds.csv: for each one-process member but the baseline and each
   * phase, every figure as the median of its per-round ratios to the baseline with their spread;
   * the SERVFAILs of any run that had some; and the cluster part's authority queries over the
   * independent nodes'.
   */
  public static List<String> atAGlance(List<RecursionRow> rounds, String baseline) {
    List<String> out = new ArrayList<>();
    for (String phase : List.of("cold", "warm")) {
      for (String m : members(phase(rounds, phase), 1)) {
        if (m.equals(baseline)) {
          continue;
        }
        StringBuilder line = new StringBuilder(phase.equals("cold") ? "cold resolutions, " : "warm hits, ")
            .append(m).append(" over ").append(baseline).append(':');
        List<String> parts = new ArrayList<>();
        for (Figure f : FIGURES) {
          if (phase.equals("warm") && f.name().startsWith("authority")) {
            continue;
          }
          List<Double> ratios = ratiosByRound(rounds, m, baseline, phase, f.value());
          if (!ratios.isEmpty()) {
            parts.add(" " + f.name() + " " + spread(ratios, "%.2fx"));
          }
        }
        out.add(line.append(parts.isEmpty() ? " no round with both" : String.join(",", parts)).toString());
      }
    }
    for (RecursionRow r : rounds) {
      if (r.servfail() > 0 || r.otherErrors() > 0) {
        out.add(String.format(Locale.ROOT, "round %s, %s, %s: %,.0f SERVFAIL and %,.0f other errors of %,.0f answers",
            r.round(), r.member(), r.phase(), r.servfail(), r.otherErrors(), r.answered()));
      }
    }
    List<Double> cluster = clusterRatios(rounds);
    if (!cluster.isEmpty()) {
      out.add("cluster part: the cluster's authority queries over the independent nodes' for the same names "
          + spread(cluster, "%.2fx") + " (a third, 0.33x, is the goal)");
    }
    return out;
  }

  /** Per round: the cluster's authority queries over the independent nodes' (both sent the same names). */
  static List<Double> clusterRatios(List<RecursionRow> rounds) {
    List<Double> out = new ArrayList<>();
    for (RecursionRow c : rounds) {
      if (c.nodes() > 1 && c.member().contains("-cluster-")) {
        for (RecursionRow i : rounds) {
          if (i.nodes() == c.nodes() && i.member().contains("-independent-") && i.round().equals(c.round())
              && i.authorityQueries() > 0) {
            out.add(c.authorityQueries() / i.authorityQueries());
          }
        }
      }
    }
    return out;
  }

  /** The table of one phase's rows: every figure of each member, median over the rounds and spread. */
  static String table(List<RecursionRow> rounds, String phase) {
    StringBuilder md = new StringBuilder("| member | nodes | answered | SERVFAIL | QPS | CPU us per answer "
        + "| authority queries per answer | p50 ms | p99 ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    List<RecursionRow> rows = phase(rounds, phase);
    Set<String> names = new LinkedHashSet<>();
    rows.forEach(r -> names.add(r.member()));
    for (String m : names) {
      List<RecursionRow> of = rows.stream().filter(r -> r.member().equals(m)).toList();
      md.append("| ").append(m).append(" | ").append(of.get(0).nodes()).append(" | ")
          .append(spread(values(of, RecursionRow::answered), "%,.0f")).append(" | ")
          .append(spread(values(of, RecursionRow::servfail), "%,.0f")).append(" | ")
          .append(spread(values(of, RecursionRow::qps), "%,.0f")).append(" | ")
          .append(spread(values(of, RecursionRow::cpuMicrosPerResolution), "%.1f")).append(" | ")
          .append(spread(values(of, RecursionRow::authorityPerResolution), "%.3f")).append(" | ")
          .append(spread(values(of, RecursionRow::p50Ms), "%.2f")).append(" | ")
          .append(spread(values(of, RecursionRow::p99Ms), "%.2f")).append(" |\n");
    }
    return md.toString();
  }

  private static List<Double> values(List<RecursionRow> rows, Function<RecursionRow, Double> f) {
    return rows.stream().map(f).filter(Objects::nonNull).toList();
  }

  /**
   * The takeaway: whether each shoal member met the goal (CPU per cold answer and authority queries
   * per cold answer at most the baseline's, by the median of the per-round ratios), and the
   * cluster part's ratio.
   */
  static List<String> takeaway(List<RecursionRow> rounds, String baseline) {
    List<String> out = new ArrayList<>();
    for (String m : members(phase(rounds, "cold"), 1)) {
      if (m.equals(baseline)) {
        continue;
      }
      List<String> verdicts = new ArrayList<>();
      for (Figure f : FIGURES.subList(0, 2)) {
        List<Double> r = ratiosByRound(rounds, m, baseline, "cold", f.value());
        if (!r.isEmpty()) {
          double median = r.stream().sorted().toList().get((r.size() - 1) / 2);
          verdicts.add(f.name() + " " + String.format(Locale.ROOT, "%.2fx", median) + " "
              + (median <= 1.0 ? "(at most " + baseline + "'s)" : "(above " + baseline + "'s)"));
        }
      }
      out.add(m + ", cold: " + (verdicts.isEmpty() ? "no round beside " + baseline : String.join(", ", verdicts)) + ".");
    }
    return out;
  }

  /** The whole file. */
  public static String render(Context c, List<RecursionRow> results, List<RecursionRow> rounds) {
    Scenario s = c.scenario();
    RecursionPlan p = s.recursion();
    String baseline = s.baseline();
    StringBuilder md = StudySummary.opening(s, c.startedAt(), c.quick() ? c.coldNames()
        + " cold names and " + c.load().duration().toSeconds() + " s of warm hits, one round" : null);
    md.append("\n\n");
    c.notRun().forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
    md.append("\n## At a glance\n\nEach ratio is the member's figure over ").append(baseline)
        .append("'s in the same round: the median over the rounds, then the lowest to the highest.\n\n");
    atAGlance(rounds, baseline).forEach(l -> md.append("- ").append(l).append('\n'));
    md.append("\n## Takeaway\n\n");
    takeaway(rounds, baseline).forEach(l -> md.append("- ").append(l).append('\n'));
    md.append("\nThe goal: CPU per cold resolution and authority queries per resolution at most ").append(baseline)
        .append("'s; a cluster of ").append(p.clusterNodes()).append(" sends the authorities a third of what as many ")
        .append("independent nodes send for the same names.\n");

    md.append("\n## What was varied, what was held constant\n\n");
    md.append("Varied: the resolver (one process each), and for the cluster part whether ").append(p.clusterNodes())
        .append(" shoal nodes form one cluster or run independently. Held constant:\n\n");
    md.append("- the tree: ").append(c.tree()).append("; every name a resolver is asked exists (no wildcard, so no ")
        .append("aggressive use of NSEC records can answer it)\n");
    md.append("- each run: a fresh process; first one name per zone (`ns.zN.example.`), so the root, the TLD and each ")
        .append("zone's cut and keys are cached; then a warm-up, not measured: ")
        .append(String.format(Locale.ROOT, "%,d", RecursionPlan.earlyWarmUpNames(c.warmUpNames())))
        .append(" other names resolved once and asked again for ").append(c.load().warmup().toSeconds())
        .append(" s, then up to ").append(String.format(Locale.ROOT, "%,d",
            c.warmUpNames() - RecursionPlan.earlyWarmUpNames(c.warmUpNames())))
        .append(" more resolved once, in ").append(RecursionPlan.WARM_UP_PARTS)
        .append(" parts, until a part cost the JVM's compiler threads under ")
        .append(Math.round(100 * RecursionPlan.WARM_UP_SETTLED_SHARE)).append("% of its CPU, then a wait (at most ")
        .append(RecursionPlan.COMPILER_WAIT.toSeconds()).append(" s) until they are idle (a JVM compiles its resolution path only as ")
        .append("new names keep coming; the others pay nothing for it); ")
        .append("then **cold**: ").append(String.format(Locale.ROOT, "%,d", c.coldNames()))
        .append(" names nobody asked before (each member and round has names of its own), each once, spread over ")
        .append("the zones: dnsperf -n 1 -c 1 -q ").append(p.coldOutstanding()).append(" -l ")
        .append(p.coldLimit().toSeconds()).append(" -D; then **warm**: the same names again, dnsperf -c ")
        .append(c.load().clients()).append(" -q ").append(c.load().outstanding()).append(" -T ")
        .append(c.load().threads()).append(" -l ").append(c.load().duration().toSeconds()).append(" -D\n");
    md.append("- measured per phase: CPU = the member's user + system time from /proc/PID/stat right around dnsperf, ")
        .append("over its answered queries; authority queries = the sum over every knotd of the tree of mod-stats' ")
        .append("query counter (knotc stats), read before the phase and 2 s after it, over the answered queries; ")
        .append("latency percentiles over dnsperf -v's per-query lines; rcodes from dnsperf's statistics\n");
    md.append("- the cluster part: ").append(p.clusterNodes()).append(" nodes, each sent the same cold names at once ")
        .append("(one dnsperf per node), figures summed over the nodes\n");
    c.setups().forEach((k, v) -> md.append("- member ").append(k).append(": ").append(v).append('\n'));
    md.append("- shoal JVM options: ").append(String.join(" ", s.recipe().jvmOptions())).append('\n');

    md.append("\n## Evidence\n\nEvery chart shows results.csv's medians; the tables give each figure's median ")
        .append("over the rounds with the lowest and highest beside it, from [rounds.csv](rounds.csv). Data: ")
        .append("[results.csv](results.csv), [rounds.csv](rounds.csv).\n\n");
    for (StudyCharts.Bars<RecursionRow> chart : COLD) {
      md.append("![").append(chart.title()).append("](").append(chart.file()).append(")\n\n");
    }
    md.append("### Cold resolutions ([rounds.csv](rounds.csv), phase cold)\n\n").append(table(rounds, "cold"));
    md.append('\n');
    for (StudyCharts.Bars<RecursionRow> chart : WARM) {
      md.append("![").append(chart.title()).append("](").append(chart.file()).append(")\n\n");
    }
    md.append("### Warm hits ([rounds.csv](rounds.csv), phase warm)\n\n").append(table(rounds, "warm"));
    StudySummary.appendProvenance(md, c.host(), c.versions(), c.commands());
    md.append(StudySummary.rawFiles("each run's directory under `members/MEMBER/round-N/` holds its configuration, "
        + "log, dnsperf's output, the CPU and authority readings around each phase; `tree/` holds each authority's "
        + "configuration and log, `queries/` the name files"));
    return md.toString();
  }
}
