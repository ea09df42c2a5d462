package io.shoal.metrics;

import java.util.concurrent.ConcurrentHashMap;
import kamon.Kamon;
import kamon.metric.Counter;
import kamon.tag.TagSet;

/**
 * One counter per value of one label, made on first use and looked up without a lock after: the
 * shape of shoal_dropped_total{reason}, shoal_dnssec_answers_total{status},
 * shoal_stale_answers_total{reason} and the others.
 */
final class LabelledCounters {
  private final ConcurrentHashMap<String, Counter> byValue = new ConcurrentHashMap<>();
  private final String name;
  private final String description;
  private final TagSet base;
  private final String label;

  /** @param base the tags every series of {@code name} carries beside {@code label} */
  LabelledCounters(String name, String description, TagSet base, String label) {
    this.name = name;
    this.description = description;
    this.base = base;
    this.label = label;
  }

  Counter counter(String value) {
    Counter c = byValue.get(value);
    if (c == null) {
      c = byValue.computeIfAbsent(value, v -> Kamon.counter(name, description).withTags(base.withTag(label, v)));
    }
    return c;
  }
}
