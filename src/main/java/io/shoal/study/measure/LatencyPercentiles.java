package io.shoal.study.measure;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Latency percentiles of a dnsperf run made with {@code -v}, which prints one line per completed
 * query ({@code > NOERROR name type 0.000123}, the latency in seconds) and one per query given up
 * ({@code > T name type}, not counted here). dnsperf 2.10 itself reports only the mean.
 *
 * <p>{@link #condense} turns such a run's output into the short one the study keeps: the per-query
 * lines (tens of MB) are dropped, the statistics block stays, and the percentiles are appended.
 */
public final class LatencyPercentiles {
  /** The latencies of every completed query, in seconds, sorted. */
  private final double[] sorted;

  private LatencyPercentiles(double[] sorted) {
    this.sorted = sorted;
  }

  /** Every completed query of several runs together (one per node): the percentiles over all of them. */
  public static LatencyPercentiles of(List<LatencyPercentiles> runs) {
    int n = runs.stream().mapToInt(r -> r.sorted.length).sum();
    double[] all = new double[n];
    int at = 0;
    for (LatencyPercentiles r : runs) {
      System.arraycopy(r.sorted, 0, all, at, r.sorted.length);
      at += r.sorted.length;
    }
    Arrays.sort(all);
    return new LatencyPercentiles(all);
  }

  /** How many completed queries the percentiles are over. */
  public int count() {
    return sorted.length;
  }

  /** The {@code p}-th percentile (0 < p <= 100) in milliseconds, nearest rank; null without queries. */
  public Double millis(double p) {
    if (sorted.length == 0) {
      return null;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] * 1000.0;
  }

  /** One line: the count and p50, p90, p99, p99.9 in milliseconds. */
  public String describe() {
    if (sorted.length == 0) {
      return "no completed query";
    }
    return String.format(Locale.ROOT, "%d completed queries: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms",
        sorted.length, millis(50), millis(90), millis(99), millis(99.9));
  }

  /**
   * Reads the per-query lines of {@code verbose}, writes everything else (the statistics block)
   * and the percentiles to {@code condensed}, deletes {@code verbose}, and returns the percentiles
   * with the condensed text.
   */
  public static Condensed condense(Path verbose, Path condensed) throws IOException {
    double[] lat = new double[1 << 16];
    int n = 0;
    StringBuilder kept = new StringBuilder();
    try (BufferedReader in = Files.newBufferedReader(verbose, StandardCharsets.UTF_8)) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (!line.startsWith("> ")) {
          kept.append(line).append('\n');
          continue;
        }
        Double seconds = latencyOf(line);
        if (seconds != null) {
          if (n == lat.length) {
            lat = Arrays.copyOf(lat, n * 2);
          }
          lat[n++] = seconds;
        }
      }
    }
    double[] sorted = Arrays.copyOf(lat, n);
    Arrays.sort(sorted);
    LatencyPercentiles p = new LatencyPercentiles(sorted);
    kept.append("# latency percentiles over the per-query lines of dnsperf -v (dropped): ").append(p.describe())
        .append('\n');
    Files.writeString(condensed, kept, StandardCharsets.UTF_8);
    Files.delete(verbose);
    return new Condensed(p, kept.toString());
  }

  /** A condensed run: its percentiles and the text kept. */
  public record Condensed(LatencyPercentiles percentiles, String text) {}

  /**
   * The latency in seconds of a per-query line of a completed query ({@code > RCODE name type
   * seconds}); null for a query given up ({@code > T name type}) or a line of another form.
   */
  static Double latencyOf(String line) {
    String[] f = line.split(" ");
    if (f.length != 5 || f[1].equals("T")) {
      return null;
    }
    try {
      return Double.parseDouble(f[4]);
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
