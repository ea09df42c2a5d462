package io.shoal.metrics;

import kamon.Kamon;
import kamon.metric.Counter;
import kamon.tag.TagSet;

/**
 * The query logs' instruments: shoal_querylog_written_total{log} and
 * shoal_querylog_dropped_total{log}, where log is {@code dnstap} or {@code queries} (JSON lines).
 */
public final class QueryLogMetrics {
  public static final String DNSTAP = "dnstap";
  public static final String QUERIES = "queries";

  private final TagSet base;

  /** @param node the cluster node label, or null on a single node */
  public QueryLogMetrics(String node) {
    this.base = node == null ? TagSet.Empty() : TagSet.of("node", node);
  }

  /** Events written to {@code log}; taken once when the log starts, so a write only increments. */
  public Counter written(String log) {
    return Kamon.counter("shoal.querylog.written", "Query log events written (dnstap frames, JSON lines)")
        .withTags(base.withTag("log", log));
  }

  /** Events {@code log} lost: its queue was full, or the dnstap collector was away or failed. */
  public Counter dropped(String log) {
    return Kamon.counter("shoal.querylog.dropped",
            "Query log events dropped: queue full (a slow reader) or the dnstap collector away")
        .withTags(base.withTag("log", log));
  }
}
