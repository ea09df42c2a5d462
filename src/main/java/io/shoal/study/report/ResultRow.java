package io.shoal.study.report;

import io.shoal.study.measure.CacheCounters;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.ProcessCpu;
import java.util.List;
import java.util.Locale;

/**
 * One member's measured row of results.csv. Optional values (a peer has no fill timing, a
 * non-LMDB member no sync mode) are null and written as empty cells.
 *
 * @param cpuSeconds user + system CPU time of the member's serving processes over the measured run
 * @param cpuMicrosPerQuery {@code cpuSeconds} per completed query, in microseconds
 */
public record ResultRow(
    String member,
    String lmdbSync,
    String runtime,
    double achievedQps,
    double avgLatencyMs,
    long sent,
    long completed,
    long lost,
    int workers,
    Double hitRatePct,
    Long cacheHits,
    Long cacheMisses,
    Double fillMeanMs,
    Long fillSamples,
    Double evictionMeanMs,
    Long evictionSamples,
    Double cpuSeconds,
    Double cpuMicrosPerQuery) {

  /** The header of results.csv, in order. Changing it breaks every reader of published results. */
  public static final List<String> COLUMNS = List.of(
      "member", "lmdb_sync", "runtime", "achieved_qps", "avg_latency_ms", "sent", "completed", "lost",
      "workers", "hit_rate_pct", "cache_hits", "cache_misses", "fill_mean_ms", "fill_samples",
      "eviction_mean_ms", "eviction_samples", "cpu_seconds", "cpu_us_per_query");

  /** The value written for "not applicable" in the lmdb_sync and runtime columns. */
  public static final String NOT_APPLICABLE = "-";

  /**
   * A member's row from its measured run: dnsperf's report, the queries the study's knotd received
   * (null for a member that answers without it, whose hit rate is then empty), the member's own
   * counters over the run and its CPU seconds (null where not measured).
   */
  public static ResultRow of(String member, String lmdbSync, String runtime, int workers, DnsperfReport load,
      Long upstreamQueries, CacheCounters window, Double cpuSeconds) {
    return new ResultRow(member, lmdbSync, runtime, load.queriesPerSecond(), load.avgLatencyMillis(), load.sent(),
        load.completed(), load.lost(), workers,
        upstreamQueries == null ? null : fairHitRatePct(upstreamQueries, load.completed()), window.hits(),
        window.misses(), meanMillis(window.fillSumSeconds(), window.fillCount()), window.fillCount(),
        meanMillis(window.evictionSumSeconds(), window.evictionCount()), window.evictionCount(), cpuSeconds,
        ProcessCpu.microsPerQuery(cpuSeconds, load.completed()));
  }

  /**
   * The hit rate every member is judged by, whatever its own statistics say: the share of
   * completed queries that did not reach the upstream, as counted by the upstream itself.
   * Null when nothing completed. Clamped at 0: a server that sent more queries upstream than it
   * answered (retries, its own lookups) saved nothing, and a negative "hit rate" reads as nonsense.
   */
  public static Double fairHitRatePct(long upstreamQueries, long completed) {
    if (completed <= 0) {
      return null;
    }
    double rate = 100.0 * (1.0 - (double) upstreamQueries / completed);
    return Math.max(0.0, Math.min(100.0, rate));
  }

  /** Mean of a histogram window in milliseconds, from its sum (seconds) and count; null if empty. */
  public static Double meanMillis(Double sumSeconds, Long count) {
    if (sumSeconds == null || count == null || count <= 0) {
      return null;
    }
    return sumSeconds / count * 1000.0;
  }

  /** This row's cells in {@link #COLUMNS} order. */
  public List<String> cells() {
    return List.of(
        member, text(lmdbSync), text(runtime), fixed(achievedQps, 1), fixed(avgLatencyMs, 3),
        Long.toString(sent), Long.toString(completed), Long.toString(lost), Integer.toString(workers),
        fixed(hitRatePct, 2), whole(cacheHits), whole(cacheMisses),
        fixed(fillMeanMs, 4), whole(fillSamples), fixed(evictionMeanMs, 4), whole(evictionSamples),
        fixed(cpuSeconds, 2), fixed(cpuMicrosPerQuery, 2));
  }

  /** Reads a row back from its cells, the inverse of {@link #cells()}. */
  public static ResultRow fromCells(List<String> c) {
    if (c.size() != COLUMNS.size()) {
      throw new IllegalArgumentException(
          "a results row has " + COLUMNS.size() + " cells, this one " + c.size() + ": " + c);
    }
    return new ResultRow(
        c.get(0), orNull(c.get(1)), orNull(c.get(2)), Double.parseDouble(c.get(3)), Double.parseDouble(c.get(4)),
        Long.parseLong(c.get(5)), Long.parseLong(c.get(6)), Long.parseLong(c.get(7)), Integer.parseInt(c.get(8)),
        decimal(c.get(9)), longOrNull(c.get(10)), longOrNull(c.get(11)),
        decimal(c.get(12)), longOrNull(c.get(13)), decimal(c.get(14)), longOrNull(c.get(15)),
        decimal(c.get(16)), decimal(c.get(17)));
  }

  private static String text(String s) {
    return s == null ? NOT_APPLICABLE : s;
  }

  private static String orNull(String s) {
    return s.isEmpty() || s.equals(NOT_APPLICABLE) ? null : s;
  }

  /** A CSV cell: {@code v} with {@code decimals} places, empty when absent. */
  static String fixed(Double v, int decimals) {
    return v == null || v.isNaN() ? "" : String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  /** A CSV cell: a whole number, empty when absent. */
  static String whole(Long v) {
    return v == null ? "" : Long.toString(v);
  }

  /** Reads a cell written by {@link #fixed}: null when empty. */
  static Double decimal(String s) {
    return s.isEmpty() ? null : Double.valueOf(s);
  }

  /** Reads a cell written by {@link #whole}: null when empty. */
  static Long longOrNull(String s) {
    return s.isEmpty() ? null : Long.valueOf(s);
  }
}
