package io.shoal.study.cluster;

import io.shoal.study.measure.MetricsScrape;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How long answered owner lookups took between two sets of scrapes, from the round-trip histogram
 * the asking nodes keep ({@link #ROUND_TRIP}). A histogram holds counts per bucket, not the
 * latencies, so each quantile is the upper bound of the bucket it falls in: "at most this".
 *
 * @param p50Ms the bound of the median, in milliseconds; null when no lookup was answered
 * @param p90Ms the bound of the 90th percentile, in milliseconds; null when no lookup was answered
 */
public record RemoteLookupLatency(Double p50Ms, Double p90Ms) {

  /** No answered owner lookups: a member outside a cluster, or one whose nodes owned every name asked. */
  public static final RemoteLookupLatency NONE = new RemoteLookupLatency(null, null);

  /** The round-trip timer of answered owner lookups, in seconds, as Prometheus shows it. */
  static final String ROUND_TRIP = "shoal_cluster_remote_lookup_seconds";

  /**
   * The latency of what the nodes recorded between {@code before} and {@code after} (one scrape
   * per node each, in the same order), with every node's histogram summed: a cluster's owner
   * lookups as a whole, whichever node asked.
   */
  public static RemoteLookupLatency between(List<MetricsScrape> before, List<MetricsScrape> after) {
    TreeMap<Double, Double> was = summed(before);
    TreeMap<Double, Double> is = summed(after);
    return new RemoteLookupLatency(quantileBoundMillis(was, is, 0.5), quantileBoundMillis(was, is, 0.9));
  }

  private static TreeMap<Double, Double> summed(List<MetricsScrape> scrapes) {
    TreeMap<Double, Double> sum = new TreeMap<>();
    for (MetricsScrape s : scrapes) {
      s.buckets(ROUND_TRIP).forEach((le, n) -> sum.merge(le, n, Double::sum));
    }
    return sum;
  }

  /**
   * The upper bound, in milliseconds, of the bucket that holds the {@code q} quantile of what was
   * recorded between two scrapes' cumulative buckets; null when nothing was recorded.
   */
  static Double quantileBoundMillis(TreeMap<Double, Double> before, TreeMap<Double, Double> after, double q) {
    double total = after.getOrDefault(Double.POSITIVE_INFINITY, 0.0) - before.getOrDefault(Double.POSITIVE_INFINITY, 0.0);
    if (total <= 0) {
      return null;
    }
    for (Map.Entry<Double, Double> e : after.entrySet()) {
      double n = e.getValue() - before.getOrDefault(e.getKey(), 0.0);
      if (n >= q * total) {
        return e.getKey() * 1000;
      }
    }
    return Double.POSITIVE_INFINITY;
  }
}
