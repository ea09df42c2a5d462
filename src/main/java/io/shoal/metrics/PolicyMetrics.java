package io.shoal.metrics;

import kamon.Kamon;
import kamon.metric.Counter;
import kamon.tag.TagSet;

/** The response policy's instruments: shoal_policy_hits_total{list,action}. */
public final class PolicyMetrics {
  private final TagSet base;

  /** Instruments of a single node: no node label. */
  public PolicyMetrics() {
    this(TagSet.Empty());
  }

  /** Instruments of a cluster node, every series labelled {@code node}. */
  public PolicyMetrics(String node) {
    this(node == null ? TagSet.Empty() : TagSet.of("node", node));
  }

  private PolicyMetrics(TagSet base) {
    this.base = base;
  }

  /**
   * The counter of queries that {@code list} (an RPZ file or domain list, by file name) answered
   * with {@code action}; taken once per list and action when a table is built, so a hit only
   * increments.
   */
  public Counter hits(String list, String action) {
    return Kamon.counter("shoal.policy.hits", "Queries a response policy (RPZ file or domain list) matched, by action")
        .withTags(base.withTag("list", list).withTag("action", action));
  }
}
