package io.shoal.study;

/**
 * A clustered node's misses that it asked of the key's owner node, by outcome, from
 * {@code shoal_cluster_remote_lookups_total{outcome}}: {@code hit} (the owner had the answer),
 * {@code fetched} (the owner went upstream, or joined a fetch in flight), {@code failed} (the
 * owner's upstream failed) and {@code timeout} (the owner was silent; this node went upstream).
 */
public record RemoteLookups(long hit, long fetched, long timeout, long failed) {

  /** No remote lookups: a node outside a cluster. */
  public static final RemoteLookups NONE = new RemoteLookups(0, 0, 0, 0);

  private static final String METRIC = "shoal_cluster_remote_lookups_total";

  /** The cumulative counts in one scrape (0 for an outcome not seen yet). */
  public static RemoteLookups of(MetricsScrape s) {
    return new RemoteLookups(count(s, "hit"), count(s, "fetched"), count(s, "timeout"), count(s, "failed"));
  }

  private static long count(MetricsScrape s, String outcome) {
    return Math.round(s.sum(METRIC, "outcome", outcome));
  }

  public RemoteLookups plus(RemoteLookups o) {
    return new RemoteLookups(hit + o.hit, fetched + o.fetched, timeout + o.timeout, failed + o.failed);
  }

  public RemoteLookups minus(RemoteLookups o) {
    return new RemoteLookups(hit - o.hit, fetched - o.fetched, timeout - o.timeout, failed - o.failed);
  }

  /** Every remote lookup, whatever its outcome. */
  public long total() {
    return hit + fetched + timeout + failed;
  }

  /**
   * Lookups the owner answered, each of which the owner also counted in its own cache hits or
   * misses. A timed-out lookup may or may not have reached the owner, so it is left out.
   */
  public long answeredByOwner() {
    return hit + fetched + failed;
  }
}
