package io.shoal.study.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The rounds of a run measured several times in summary.md: the at-a-glance line of each member
 * against the baseline's run of the same round, and the Rounds section, from rounds.csv.
 */
final class RoundsSummary {
  private RoundsSummary() {}

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
  static List<String> atAGlance(List<RoundRow> rounds, String baseline) {
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
        line.append("; hit rate ").append(StudySummary.pct(median(hits))).append(" vs ").append(StudySummary.pct(median(baseHits)));
      }
      List<Double> cpu = cpuPerQuery(e.getValue());
      List<Double> baseCpu = cpuPerQuery(base);
      if (!cpu.isEmpty() && !baseCpu.isEmpty()) {
        line.append(StudySummary.cpuAgainst(median(cpu), median(baseCpu), baseline)).append(" (medians)");
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

  /**
   * The Rounds section: how the runs were taken, each member's QPS per round and its ratios to the
   * baseline's; {@code sideBySide} when the members ran all along and each round measured each of
   * them for a short window (recipe.turns = slices).
   */
  static String section(List<RoundRow> rounds, String baseline, boolean sideBySide) {
    Map<String, List<ResultRow>> members = byMember(rounds);
    int roundCount = rounds.stream().mapToInt(RoundRow::round).max().orElse(0);
    StringBuilder md = new StringBuilder("\n## Rounds\n\n");
    md.append("Every member was measured ").append(roundCount).append(" times, members taking turns ")
        .append(sideBySide ? "side by side (every member was started and warmed up once and ran all along; each "
            + "round measured each of them once, in an order drawn anew for the round). "
            : "(round 1 ran every member once, then round 2, ...). ")
        .append("The table above and results.csv hold each member's ")
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
}
