package io.shoal.study.cluster;

import io.shoal.study.measure.MetricsScrape;

/**
 * A clustered node's misses that it asked of the key's owner node, by outcome, from
 * {@code shoal_cluster_remote_lookups_total{outcome}}: {@code answered} (the owner answered, from
 * its cache or upstream), {@code failed} (the owner answered SERVFAIL: its upstreams failed),
 * {@code timeout} (no usable reply in time; this node went upstream) and {@code refused} (the
 * owner's access control refused the asking node; this node went upstream).
 */
public record RemoteLookups(long answered, long timeout, long failed, long refused) {

  /** No remote lookups: a node outside a cluster. */
  public static final RemoteLookups NONE = new RemoteLookups(0, 0, 0, 0);

  private static final String METRIC = "shoal_cluster_remote_lookups_total";

  /** The cumulative counts in one scrape (0 for an outcome not seen yet). */
  public static RemoteLookups of(MetricsScrape s) {
    return new RemoteLookups(count(s, "answered"), count(s, "timeout"), count(s, "failed"), count(s, "refused"));
  }

  private static long count(MetricsScrape s, String outcome) {
    return Math.round(s.sum(METRIC, "outcome", outcome));
  }

  public RemoteLookups plus(RemoteLookups o) {
    return new RemoteLookups(answered + o.answered, timeout + o.timeout, failed + o.failed, refused + o.refused);
  }

  public RemoteLookups minus(RemoteLookups o) {
    return new RemoteLookups(answered - o.answered, timeout - o.timeout, failed - o.failed, refused - o.refused);
  }

  /** Every remote lookup, whatever its outcome. */
  public long total() {
    return answered + timeout + failed + refused;
  }

  /**
   * Lookups the owner answered, each of which the owner also counted in its own cache hits or
   * misses. A timed-out lookup may or may not have reached the owner, and a refused one never
   * reached its cache, so they are left out.
   */
  public long answeredByOwner() {
    return answered + failed;
  }
}
