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
  /**
   * One member against the baseline: its QPS and CPU-per-query ratios, one per round paired (or
   * the single run's); {@link #qps()} and {@link #cpu()} are their medians.
   */
  record Ratio(String member, List<Double> qpsRatios, List<Double> cpuRatios) {
    Ratio {
      qpsRatios = List.copyOf(qpsRatios);
      cpuRatios = List.copyOf(cpuRatios);
    }

    double qps() {
      return RoundsSummary.median(qpsRatios);
    }

    double qpsLow() {
      return quantile(qpsRatios, 0);
    }

    double qpsHigh() {
      return quantile(qpsRatios, 1);
    }

    /** The median CPU ratio, or null when the member's CPU was not read. */
    Double cpu() {
      return cpuRatios.isEmpty() ? null : RoundsSummary.median(cpuRatios);
    }

    int rounds() {
      return qpsRatios.size();
    }
  }

  /** From this many rounds on, the spread also gives the middle half of the rounds (the quartiles). */
  static final int QUARTILES_FROM = 8;

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
      out.add(new Ratio(r.member(), qps, cpu));
    }
    return out;
  }

  /**
   * The at-a-glance table: member, QPS and CPU per query over the baseline's, with the spreads; a
   * member in {@code repeats} is marked as the baseline again.
   */
  static String table(List<Ratio> ratios, String baseline, Set<String> paced, List<String> repeats) {
    if (ratios.isEmpty()) {
      return "";
    }
    StringBuilder t = new StringBuilder("| member | QPS ÷ ").append(baseline).append(" | spread | CPU per query ÷ ")
        .append(baseline).append(" | spread |\n| --- | ---: | --- | ---: | --- |\n");
    for (Ratio r : ratios) {
      t.append("| ").append(r.member()).append(paced.contains(r.member()) ? " (paced: offered load)" : "")
          .append(repeats.contains(r.member()) ? " (A/A: " + baseline + " again)" : "").append(" | ")
          .append(x(r.qps())).append(" | ").append(spread(r.qpsRatios())).append(" | ")
          .append(r.cpu() == null ? "-" : x(r.cpu())).append(" | ")
          .append(r.cpu() == null ? "" : spread(r.cpuRatios())).append(" |\n");
    }
    return t.toString();
  }

  /**
   * One sentence: the member with the most QPS against the baseline (paced members left out: their
   * QPS is what they were offered; A/A members too, being the baseline again) and its CPU per
   * query, and the member with the least CPU per query when that is another one; then what each
   * A/A member in {@code repeats} came out at, as the measure of the run's own spread.
   */
  static String takeaway(List<Ratio> ratios, String baseline, Set<String> paced, List<String> repeats) {
    StringBuilder aa = new StringBuilder();
    for (Ratio r : ratios) {
      if (repeats.contains(r.member())) {
        aa.append(" ").append(r.member()).append(", the baseline again (same build and configuration), came out at ")
            .append(x(r.qps())).append(" its QPS (").append(spread(r.qpsRatios())).append(")")
            .append(r.cpu() == null ? "" : " and " + x(r.cpu()) + " its CPU per query")
            .append(": differences of that order are the host's, not the members'.");
      }
    }
    return takeaway(ratios.stream().filter(r -> !repeats.contains(r.member())).toList(), baseline, paced) + aa;
  }

  private static String takeaway(List<Ratio> ratios, String baseline, Set<String> paced) {
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

  /**
   * Lowest to highest, with the rounds' count, and with many rounds the middle half of them too;
   * "one run" for fewer than two (the pages' and the hub's spread column).
   */
  static String spread(List<Double> ratios) {
    int n = ratios.size();
    if (n < 2) {
      return "one run";
    }
    return x(quantile(ratios, 0)) + "–" + x(quantile(ratios, 1)) + " (" + n + " rounds"
        + (n >= QUARTILES_FROM ? "; middle half " + x(quantile(ratios, 0.25)) + "–" + x(quantile(ratios, 0.75)) : "")
        + ")";
  }

  /** The {@code p} quantile of {@code values}, interpolated between the two nearest (0 the lowest, 1 the highest). */
  static double quantile(List<Double> values, double p) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    double at = p * (sorted.size() - 1);
    int below = (int) Math.floor(at);
    int above = Math.min(below + 1, sorted.size() - 1);
    return sorted.get(below) + (at - below) * (sorted.get(above) - sorted.get(below));
  }

  private static String x(double v) {
    return String.format(Locale.ROOT, "%.2fx", v);
  }
}
