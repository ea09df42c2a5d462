package io.shoal.metrics;

import java.util.concurrent.ConcurrentHashMap;
import kamon.Kamon;
import kamon.metric.Gauge;
import kamon.tag.TagSet;

/** The instruments of DNSSEC validation: answers by security status, failures by reason. */
public final class DnssecMetrics {
  public static final String SECURE = "secure";
  public static final String INSECURE = "insecure";
  public static final String BOGUS = "bogus";
  /** Validation could not finish (a key query failed, or the validator gave up). */
  public static final String INDETERMINATE = "indeterminate";
  /** A denial answered from a cached proof: the name does not exist. */
  public static final String NXDOMAIN = "nxdomain";
  /** A denial answered from a cached proof: the name exists, the type does not. */
  public static final String NODATA = "nodata";

  private final TagSet tags;
  private final LabelledCounters answers;
  private final LabelledCounters failures;
  private final LabelledCounters synthesized;
  private final ConcurrentHashMap<String, Gauge> denialRanges = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Gauge> denialBytes = new ConcurrentHashMap<>();

  /** With {@code node} non-null every series also carries a node label (cluster mode). */
  public DnssecMetrics(String node) {
    this.tags = node == null ? TagSet.Empty() : TagSet.of("node", node);
    this.answers = new LabelledCounters("shoal.dnssec.answers",
        "Upstream answers validated, by DNSSEC security status", tags, "status");
    this.failures = new LabelledCounters("shoal.dnssec.validation.failures",
        "Bogus answers, by the extended DNS error that says why", tags, "reason");
    this.synthesized = new LabelledCounters("shoal.dnssec.synthesized",
        "Misses answered NXDOMAIN or NODATA from cached DNSSEC denial proofs, without asking upstream", tags, "type");
  }

  /** shoal_dnssec_answers_total{status}: one validated upstream answer. */
  public void answer(String status) {
    answers.counter(status).increment();
  }

  /** shoal_dnssec_validation_failures_total{reason}: a bogus answer, by its extended DNS error. */
  public void failure(String reason) {
    failures.counter(reason).increment();
  }

  /** shoal_dnssec_synthesized_total{type}: a miss answered from a cached NSEC/NSEC3 proof (RFC 8198). */
  public void synthesized(String type) {
    synthesized.counter(type).increment();
  }

  /**
   * shoal_dnssec_denial_ranges{upstream} and shoal_dnssec_denial_bytes{upstream}: the NSEC/NSEC3
   * ranges an upstream group's proof store holds, and the wire bytes of their records.
   */
  public void denials(String upstream, int ranges, long bytes) {
    denialRanges.computeIfAbsent(upstream, u -> Kamon.gauge("shoal.dnssec.denial.ranges",
        "NSEC/NSEC3 ranges kept from secure denials").withTags(tags.withTag("upstream", u))).update(ranges);
    denialBytes.computeIfAbsent(upstream, u -> Kamon.gauge("shoal.dnssec.denial.bytes",
        "Wire bytes of the records of the NSEC/NSEC3 ranges kept from secure denials")
        .withTags(tags.withTag("upstream", u))).update(bytes);
  }
}
