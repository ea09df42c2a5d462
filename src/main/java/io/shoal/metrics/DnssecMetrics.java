package io.shoal.metrics;

import java.util.concurrent.ConcurrentHashMap;
import kamon.Kamon;
import kamon.metric.Counter;
import kamon.tag.TagSet;

/** The instruments of DNSSEC validation: answers by security status, failures by reason. */
public final class DnssecMetrics {
  public static final String SECURE = "secure";
  public static final String INSECURE = "insecure";
  public static final String BOGUS = "bogus";
  /** Validation could not finish (a key query failed, or the validator gave up). */
  public static final String INDETERMINATE = "indeterminate";

  private final TagSet tags;
  private final ConcurrentHashMap<String, Counter> answers = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> failures = new ConcurrentHashMap<>();

  /** With {@code node} non-null every series also carries a node label (cluster mode). */
  public DnssecMetrics(String node) {
    this.tags = node == null ? TagSet.Empty() : TagSet.of("node", node);
  }

  /** shoal_dnssec_answers_total{status}: one validated upstream answer. */
  public void answer(String status) {
    answers.computeIfAbsent(status, s -> Kamon.counter("shoal.dnssec.answers",
        "Upstream answers validated, by DNSSEC security status").withTags(tags.withTag("status", s))).increment();
  }

  /** shoal_dnssec_validation_failures_total{reason}: a bogus answer, by its extended DNS error. */
  public void failure(String reason) {
    failures.computeIfAbsent(reason, r -> Kamon.counter("shoal.dnssec.validation.failures",
        "Bogus answers, by the extended DNS error that says why").withTags(tags.withTag("reason", r))).increment();
  }
}
