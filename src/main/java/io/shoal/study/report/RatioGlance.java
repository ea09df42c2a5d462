package io.shoal.study.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A plain study's page in ratios: each member's QPS and CPU per query over the baseline's, as the
 * median of the rounds with their spread (each round against the baseline's run of the same
 * round), or from results.csv when the run had one round; and the takeaway sentence drawn from
 * them. Ratios are what a reader can carry to another host; absolute figures are not.
 */
final class RatioGlance {
  /** One member against the baseline: QPS and CPU ratios (medians), their spreads, and the rounds paired. */
  record Ratio(String member, double qps, double qpsLow, double qpsHigh, Double cpu, Double cpuLow, Double cpuHigh,
      int rounds) {}

  private RatioGlance() {}

  /** Every member but the baseline against it, in the order of {@code rows}; empty without a baseline row. */
  static List<Ratio> ratios(List<ResultRow> rows, List<RoundRow> rounds, String baseline) {
    List<Ratio> out = new ArrayList<>();
    ResultRow base = rows.stream().filter(r -> r.member().equals(baseline)).findFirst().orElse(null);
    if (base == null) {
      return out;
    }
    for (ResultRow r : rows) {
      if (r == base) {
        continue;
      }
      List<Double> qps = new ArrayList<>();
      List<Double> cpu = new ArrayList<>();
      if (rounds.isEmpty()) {
        if (base.achievedQps() > 0) {
          qps.add(r.achievedQps() / base.achievedQps());
        }
        if (r.cpuMicrosPerQuery() != null && base.cpuMicrosPerQuery() != null && base.cpuMicrosPerQuery() > 0) {
          cpu.add(r.cpuMicrosPerQuery() / base.cpuMicrosPerQuery());
        }
      } else {
        Map<Integer, ResultRow> baseByRound = new HashMap<>();
        rounds.stream().filter(x -> x.row().member().equals(baseline)).forEach(x -> baseByRound.put(x.round(), x.row()));
        for (RoundRow x : rounds) {
          ResultRow b = baseByRound.get(x.round());
          if (!x.row().member().equals(r.member()) || b == null) {
            continue;
          }
          if (b.achievedQps() > 0) {
            qps.add(x.row().achievedQps() / b.achievedQps());
          }
          if (x.row().cpuMicrosPerQuery() != null && b.cpuMicrosPerQuery() != null && b.cpuMicrosPerQuery() > 0) {
            cpu.add(x.row().cpuMicrosPerQuery() / b.cpuMicrosPerQuery());
          }
        }
      }
      if (qps.isEmpty()) {
        continue;
      }
      out.add(new Ratio(r.member(), RoundsSummary.median(qps), min(qps), max(qps),
          cpu.isEmpty() ? null : RoundsSummary.median(cpu), cpu.isEmpty() ? null : min(cpu),
          cpu.isEmpty() ? null : max(cpu), qps.size()));
    }
    return out;
  }

  /** The at-a-glance table: member, QPS and CPU per query over the baseline's, with the spreads. */
  static String table(List<Ratio> ratios, String baseline, Set<String> paced) {
    if (ratios.isEmpty()) {
      return "";
    }
    StringBuilder t = new StringBuilder("| member | QPS ÷ ").append(baseline).append(" | spread | CPU per query ÷ ")
        .append(baseline).append(" | spread |\n| --- | ---: | --- | ---: | --- |\n");
    for (Ratio r : ratios) {
      t.append("| ").append(r.member()).append(paced.contains(r.member()) ? " (paced: offered load)" : "").append(" | ")
          .append(x(r.qps())).append(" | ").append(spread(r.qpsLow(), r.qpsHigh(), r.rounds())).append(" | ")
          .append(r.cpu() == null ? "-" : x(r.cpu())).append(" | ")
          .append(r.cpu() == null ? "" : spread(r.cpuLow(), r.cpuHigh(), r.rounds())).append(" |\n");
    }
    return t.toString();
  }

  /**
   * One sentence: the member with the most QPS against the baseline (paced members left out: their
   * QPS is what they were offered) and its CPU per query, and the member with the least CPU per
   * query when that is another one.
   */
  static String takeaway(List<Ratio> ratios, String baseline, Set<String> paced) {
    List<Ratio> free = ratios.stream().filter(r -> !paced.contains(r.member())).toList();
    if (free.isEmpty()) {
      return "No member besides " + baseline + " has a row to compare with it.";
    }
    Ratio fastest = free.stream().max(java.util.Comparator.comparingDouble(Ratio::qps)).orElseThrow();
    StringBuilder s = new StringBuilder("Beside ").append(baseline).append(", ").append(fastest.member())
        .append(" answered the most: ").append(x(fastest.qps())).append(" its QPS")
        .append(fastest.rounds() > 1 ? " (median of " + fastest.rounds() + " rounds, " + x(fastest.qpsLow()) + " to "
            + x(fastest.qpsHigh()) + ")" : "");
    if (fastest.cpu() != null) {
      s.append(" at ").append(x(fastest.cpu())).append(" its CPU per query");
    }
    Ratio leanest = free.stream().filter(r -> r.cpu() != null)
        .min(java.util.Comparator.comparingDouble(Ratio::cpu)).orElse(null);
    if (leanest != null && leanest != fastest) {
      s.append("; ").append(leanest.member()).append(" spent the least CPU per query, ").append(x(leanest.cpu()))
          .append(" ").append(baseline).append("'s");
    }
    return s.append('.').toString();
  }

  private static String spread(double lo, double hi, int rounds) {
    return rounds < 2 ? "one run" : x(lo) + "–" + x(hi) + " (" + rounds + " rounds)";
  }

  private static String x(double v) {
    return String.format(Locale.ROOT, "%.2fx", v);
  }

  private static double min(List<Double> v) {
    return v.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
  }

  private static double max(List<Double> v) {
    return v.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
  }
}
