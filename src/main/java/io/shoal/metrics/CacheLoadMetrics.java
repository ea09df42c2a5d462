package io.shoal.metrics;

import kamon.Kamon;
import kamon.metric.Counter;
import kamon.tag.TagSet;

/** What {@code shoal cache load} did with the answers it was sent, node-wide. */
public final class CacheLoadMetrics {
  private final LabelledCounters answers;
  private final Counter recordsDropped;

  /** With {@code node} non-null every series also carries a node label (cluster mode). */
  public CacheLoadMetrics(String node) {
    TagSet tags = node == null ? TagSet.Empty() : TagSet.of("node", node);
    this.answers = new LabelledCounters("shoal.cache.load.answers",
        "Answers of cache loads by outcome: filled, expired, not_kept, already_cached, no_room, not_stored,"
            + " unreadable, refused (records that do not belong to their key)", tags, "outcome");
    this.recordsDropped = Kamon.counter("shoal.cache.load.records.dropped",
        "Authority and additional records dropped from loaded answers because they do not belong to them")
        .withTags(tags);
  }

  /** {@code n} answers of a load ended as {@code outcome}: shoal_cache_load_answers_total{outcome}. */
  public void answers(String outcome, long n) {
    if (n > 0) {
      answers.counter(outcome).increment(n);
    }
  }

  /** {@code n} records dropped from loaded answers: shoal_cache_load_records_dropped_total. */
  public void recordsDropped(long n) {
    if (n > 0) {
      recordsDropped.increment(n);
    }
  }
}
