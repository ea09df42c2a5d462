package io.shoal.study.measure;

/**
 * Cumulative cache counters read from a server's own statistics at one moment. Fields a server
 * does not report are null; the fill and eviction timings exist only for shoal.
 */
public record CacheCounters(
    Long hits, Long misses, Long fillCount, Double fillSumSeconds, Long evictionCount, Double evictionSumSeconds) {

  /** A server whose statistics say nothing about its cache. */
  public static final CacheCounters NONE = new CacheCounters(null, null, null, null, null, null);

  /** What happened between {@code before} and this reading. */
  public CacheCounters minus(CacheCounters before) {
    return new CacheCounters(
        delta(hits, before.hits), delta(misses, before.misses),
        delta(fillCount, before.fillCount), delta(fillSumSeconds, before.fillSumSeconds),
        delta(evictionCount, before.evictionCount), delta(evictionSumSeconds, before.evictionSumSeconds));
  }

  /** Two nodes' counters together (the counters of a member that runs several nodes). */
  public CacheCounters plus(CacheCounters o) {
    return new CacheCounters(
        sum(hits, o.hits), sum(misses, o.misses), sum(fillCount, o.fillCount), sum(fillSumSeconds, o.fillSumSeconds),
        sum(evictionCount, o.evictionCount), sum(evictionSumSeconds, o.evictionSumSeconds));
  }

  private static Long sum(Long a, Long b) {
    return a == null || b == null ? null : a + b;
  }

  private static Double sum(Double a, Double b) {
    return a == null || b == null ? null : a + b;
  }

  private static Long delta(Long after, Long before) {
    return after == null || before == null ? null : after - before;
  }

  private static Double delta(Double after, Double before) {
    return after == null || before == null ? null : after - before;
  }
}
