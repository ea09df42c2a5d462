package io.shoal.study.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * One phase of one run of a recursion study, as a row of rounds.csv (or, with round
 * {@value #MEDIAN}, of results.csv: each figure the median over the rounds): what the member's
 * clients saw (answers by rcode, QPS, latency) and what it cost (its CPU, the queries every
 * authority of the tree received), per answered query.
 *
 * @param round the round (1, 2, ...), or {@value #MEDIAN} in results.csv
 * @param member the member; the cluster part's are the cluster and the independent nodes
 * @param phase {@code cold} (each name asked once, never asked before) or {@code warm} (the same
 *     names again: hits)
 * @param nodes the shoal processes the queries went to at once (1 for a one-process member)
 * @param sent queries dnsperf sent, over every node
 * @param answered queries answered (any rcode)
 * @param servfail answers with SERVFAIL
 * @param otherErrors answers with any rcode but NOERROR and SERVFAIL
 * @param qps answered queries a second (summed over the nodes)
 * @param cpuSeconds user + system CPU time of the member's processes across the phase
 * @param authorityQueries queries the tree's authorities received during the phase, summed
 * @param p50Ms median latency of an answered query, in milliseconds; null if unread
 * @param p99Ms 99th percentile latency, in milliseconds; null if unread
 */
public record RecursionRow(String round, String member, String phase, int nodes, double sent, double answered,
    double servfail, double otherErrors, double qps, double cpuSeconds, double authorityQueries, Double p50Ms,
    Double p99Ms) {

  /** The round of a results.csv row: each figure is the median over the rounds. */
  public static final String MEDIAN = "median";

  /** The header of rounds.csv and results.csv, in order. Changing it breaks every reader of published results. */
  public static final List<String> COLUMNS = List.of(
      "round", "member", "phase", "nodes", "sent", "answered", "servfail", "other_errors", "servfail_rate", "qps",
      "cpu_seconds", "cpu_us_per_resolution", "authority_queries", "authority_queries_per_resolution", "p50_ms",
      "p99_ms");

  /** CPU microseconds per answered query; null when nothing was answered. */
  public Double cpuMicrosPerResolution() {
    return answered <= 0 ? null : cpuSeconds * 1e6 / answered;
  }

  /** Authority queries per answered query; null when nothing was answered. */
  public Double authorityPerResolution() {
    return answered <= 0 ? null : authorityQueries / answered;
  }

  /** The share of answers that were SERVFAIL; null when nothing was answered. */
  public Double servfailRate() {
    return answered <= 0 ? null : servfail / answered;
  }

  public List<String> cells() {
    return List.of(round, member, phase, Integer.toString(nodes), whole(sent), whole(answered), whole(servfail),
        whole(otherErrors), optional(servfailRate(), "%.5f"), String.format(Locale.ROOT, "%.1f", qps),
        String.format(Locale.ROOT, "%.3f", cpuSeconds), optional(cpuMicrosPerResolution(), "%.2f"),
        whole(authorityQueries), optional(authorityPerResolution(), "%.4f"), optional(p50Ms, "%.3f"),
        optional(p99Ms, "%.3f"));
  }

  /** Reads a row back from its cells, the inverse of {@link #cells()}; the per-resolution figures are derived. */
  public static RecursionRow fromCells(List<String> c) {
    if (c.size() != COLUMNS.size()) {
      throw new IllegalArgumentException("a recursion row has " + COLUMNS.size() + " cells: " + c);
    }
    return new RecursionRow(c.get(0), c.get(1), c.get(2), Integer.parseInt(c.get(3)), Double.parseDouble(c.get(4)),
        Double.parseDouble(c.get(5)), Double.parseDouble(c.get(6)), Double.parseDouble(c.get(7)),
        Double.parseDouble(c.get(9)), Double.parseDouble(c.get(10)), Double.parseDouble(c.get(12)),
        c.get(14).isEmpty() ? null : Double.valueOf(c.get(14)), c.get(15).isEmpty() ? null : Double.valueOf(c.get(15)));
  }

  /**
   * results.csv's rows: one per member and phase, in the order they first ran, each figure the
   * median of that member's and phase's rounds (the lower middle one for an even count).
   */
  public static List<RecursionRow> medians(List<RecursionRow> rounds) {
    Map<String, List<RecursionRow>> groups = new LinkedHashMap<>();
    for (RecursionRow r : rounds) {
      groups.computeIfAbsent(r.member + "\u0000" + r.phase, k -> new ArrayList<>()).add(r);
    }
    List<RecursionRow> out = new ArrayList<>();
    for (List<RecursionRow> g : groups.values()) {
      RecursionRow first = g.get(0);
      out.add(new RecursionRow(MEDIAN, first.member, first.phase, first.nodes, median(g, RecursionRow::sent),
          median(g, RecursionRow::answered), median(g, RecursionRow::servfail), median(g, RecursionRow::otherErrors),
          median(g, RecursionRow::qps), median(g, RecursionRow::cpuSeconds), median(g, RecursionRow::authorityQueries),
          medianOrNull(g, RecursionRow::p50Ms), medianOrNull(g, RecursionRow::p99Ms)));
    }
    return out;
  }

  /** The median of {@code value} over {@code rows} (the lower middle one for an even count). */
  public static double median(List<RecursionRow> rows, Function<RecursionRow, Double> value) {
    List<Double> v = rows.stream().map(value).filter(java.util.Objects::nonNull).sorted(Comparator.naturalOrder())
        .toList();
    if (v.isEmpty()) {
      throw new IllegalArgumentException("no value to take the median of");
    }
    return v.get((v.size() - 1) / 2);
  }

  private static Double medianOrNull(List<RecursionRow> rows, Function<RecursionRow, Double> value) {
    return rows.stream().map(value).anyMatch(java.util.Objects::nonNull) ? median(rows, value) : null;
  }

  private static String whole(double v) {
    return String.format(Locale.ROOT, "%.0f", v);
  }

  private static String optional(Double v, String format) {
    return v == null ? "" : String.format(Locale.ROOT, format, v);
  }
}
