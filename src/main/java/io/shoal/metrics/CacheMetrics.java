package io.shoal.metrics;

import java.util.concurrent.ConcurrentHashMap;
import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Gauge;
import kamon.metric.Timer;
import kamon.tag.TagSet;

/** The instruments of one answer cache, tagged with its name and backend. */
public final class CacheMetrics {
  private final TagSet tags;
  private final Counter hits;
  private final Counter misses;
  private final Timer fill;
  private final Timer eviction;
  private final LabelledCounters fillFailures;
  private final ConcurrentHashMap<Integer, Gauge> entries = new ConcurrentHashMap<>();
  private final String cache;
  private final Counter fillsDropped;
  private final Counter prefetches;
  private final LabelledCounters staleAnswers;

  public CacheMetrics(String cache, String backend) {
    this(cache, backend, null);
  }

  /** With {@code node} non-null every series also carries a node label (cluster mode). */
  public CacheMetrics(String cache, String backend, String node) {
    this.cache = cache;
    TagSet t = TagSet.of("cache", cache).withTag("backend", backend);
    this.tags = node == null ? t : t.withTag("node", node);
    this.hits = Kamon.counter("shoal.cache.hits", "Queries answered from the cache").withTags(tags);
    this.misses = Kamon.counter("shoal.cache.misses", "Queries not in the cache (or expired)").withTags(tags);
    this.fill = Kamon.timer("shoal.cache.fill", "Time to store one answer").withTags(tags);
    this.eviction = Kamon.timer("shoal.cache.eviction", "Time to evict one entry to make room").withTags(tags);
    this.fillsDropped = Kamon.counter("shoal.dropped", ServerMetrics.DROPPED_DESCRIPTION)
        .withTag("reason", ServerMetrics.FILL_QUEUE_FULL);
    this.prefetches = Kamon.counter("shoal.prefetches", "Names fetched again before they expire because they were asked for")
        .withTags(tags);
    this.fillFailures = new LabelledCounters("shoal.cache.fill.failures",
        "Write-through fills not stored (failed) or not committed in time (timeout); answered anyway", tags, "reason");
    this.staleAnswers = new LabelledCounters("shoal.stale.answers",
        "Expired answers served because the upstreams failed or were too slow (RFC 8767)", tags, "reason");
  }

  /** A hit near its answer's expiry sent the name upstream again: shoal_prefetches_total. */
  public void prefetch() {
    prefetches.increment();
  }

  /**
   * An expired answer served: shoal_stale_answers_total{reason}, {@code upstream_failed} (every
   * upstream failed or is down) or {@code client_timeout} (the upstream is still being asked).
   */
  public void staleAnswer(String reason) {
    staleAnswers.counter(reason).increment();
  }

  /** The instruments of shard {@code shard} of this cache's LMDB backend. */
  public LmdbShardMetrics lmdbShard(int shard) {
    return new LmdbShardMetrics(cache, shard);
  }

  /** A fill that could not be queued (its shard is behind): served, not stored. */
  public void fillDropped() {
    fillsDropped.increment();
  }

  public void hit() {
    hits.increment();
  }

  public void miss() {
    misses.increment();
  }

  public void fillNanos(long nanos) {
    fill.record(nanos);
  }

  /**
   * Counts a write-through fill that was not stored ({@code failed}) or not committed in time
   * ({@code timeout}); its answer went out anyway.
   */
  public void fillFailed(String reason) {
    fillFailures.counter(reason).increment();
  }

  public void evictionNanos(long nanos) {
    eviction.record(nanos);
  }

  /** Sets shoal_cache_entries for one shard (the memory backend is shard 0). */
  public void entries(int shard, long count) {
    entries
        .computeIfAbsent(shard, s -> Kamon.gauge("shoal.cache.entries", "Entries held")
            .withTags(tags.withTag("shard", String.valueOf(s))))
        .update(count);
  }
}
