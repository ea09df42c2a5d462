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
  /** A denial whose NSEC3 records have more iterations than {@code max_nsec3_iterations}. */
  public static final String NSEC3_ITERATIONS = "nsec3_iterations";
  /** An RRset with more failed signature checks than {@code max_signature_checks} (KeyTrap). */
  public static final String SIGNATURE_CHECKS = "signature_checks";

  private final TagSet tags;
  private final LabelledCounters answers;
  private final LabelledCounters failures;
  private final LabelledCounters synthesized;
  private final LabelledCounters limitHits;
  private final ConcurrentHashMap<String, Gauge> denialRanges = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Gauge> providers = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, kamon.metric.Counter> checks = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Gauge> upstreamDnssec = new ConcurrentHashMap<>();
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
    this.limitHits = new LabelledCounters("shoal.dnssec.limit.hits",
        "Validations cut short by a limit of shoal.dnssec (the answer insecure or bogus), by limit", tags, "limit");
  }

  /** shoal_dnssec_limit_hits_total{limit}: a validation cut short by {@code max_nsec3_iterations} or the like. */
  public void limitHit(String limit) {
    limitHits.counter(limit).increment();
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

  /**
   * shoal_dnssec_signature_provider{provider,algorithm} = 1: {@code provider} ("conscrypt" or
   * "jdk") checks the signatures of DNSSEC algorithm {@code algorithm} (its mnemonic, lower case).
   */
  public void signatureProvider(String provider, String algorithm) {
    providers.computeIfAbsent(provider + "/" + algorithm, k -> Kamon.gauge("shoal.dnssec.signature.provider",
        "1 for the provider that checks the signatures of each DNSSEC algorithm")
        .withTags(tags.withTag("provider", provider).withTag("algorithm", algorithm))).update(1);
  }

  /**
   * shoal_dnssec_signature_checks_total{algorithm,provider,result}: one signature check; result
   * valid, invalid, or remembered (the same signature over the same data with the same key was
   * checked before, and its verdict is reused without cryptography).
   */
  public void signatureCheck(String algorithm, String provider, String result) {
    String k = algorithm + "/" + provider + "/" + result;
    kamon.metric.Counter c = checks.get(k);
    if (c == null) {
      c = checks.computeIfAbsent(k, x -> Kamon.counter("shoal.dnssec.signature.checks",
          "DNSSEC signature checks, by algorithm, provider and result")
          .withTags(tags.withTag("algorithm", algorithm).withTag("provider", provider).withTag("result", result)));
    }
    c.increment();
  }

  /**
   * shoal_dnssec_upstream_capable{upstream}: 1 while upstream group {@code upstream} hands over
   * DNSSEC records (the root's DNSKEY with its RRSIG when asked with DO), 0 while it does not.
   */
  public void upstreamCapable(String upstream, boolean capable) {
    upstreamDnssec.computeIfAbsent(upstream, u -> Kamon.gauge("shoal.dnssec.upstream.capable",
        "1 while the upstream group returns DNSSEC records, 0 while it strips or refuses them")
        .withTags(tags.withTag("upstream", u))).update(capable ? 1 : 0);
  }
}
