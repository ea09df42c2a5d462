package io.shoal.metrics;

import kamon.Kamon;
import kamon.metric.Gauge;
import kamon.metric.Timer;
import kamon.tag.TagSet;

/** The instruments of recursive resolution: authority queries, resolutions, limits hit, state held. */
public final class RecursionMetrics {
  private final TagSet tags;
  private final LabelledCounters queries;
  private final LabelledCounters resolutions;
  private final LabelledCounters limits;
  private final LabelledCounters lame;
  private final Timer rtt;

  /** With {@code node} non-null every series also carries a node label (cluster mode). */
  public RecursionMetrics(String node) {
    this.tags = node == null ? TagSet.Empty() : TagSet.of("node", node);
    this.queries = new LabelledCounters("shoal.recursion.queries",
        "Queries sent to authoritative servers, by outcome", tags, "outcome");
    this.resolutions = new LabelledCounters("shoal.recursion.resolutions",
        "Questions resolved from the root or a stub zone, by result", tags, "result");
    this.limits = new LabelledCounters("shoal.recursion.limit.hits",
        "Resolutions stopped by a limit, by limit", tags, "limit");
    this.lame = new LabelledCounters("shoal.recursion.lame.servers",
        "Authority answers that marked a server lame for a zone, by reason", tags, "reason");
    this.rtt = Kamon.timer("shoal.recursion.rtt", "Round-trip times of authority queries that were answered")
        .withTags(tags);
  }

  /** shoal_recursion_rtt_seconds: the round trip of one answered authority query (lame answers too). */
  public void rtt(long nanos) {
    rtt.record(nanos);
  }

  /** shoal_recursion_queries_total{outcome}: ok, timeout, error, truncated, mismatch, malformed, lame. */
  public void query(String outcome) {
    queries.counter(outcome).increment();
  }

  /** shoal_recursion_resolutions_total{result}: noerror, nxdomain, servfail. */
  public void resolution(String result) {
    resolutions.counter(result).increment();
  }

  /** shoal_recursion_limit_hits_total{limit}: queries, referrals, cname_links, ns_names, glueless_depth, deadline. */
  public void limitHit(String limit) {
    limits.counter(limit).increment();
  }

  /** shoal_recursion_lame_servers_total{reason}: refused, servfail, rcode, upward_referral, not_authoritative. */
  public void lame(String reason) {
    lame.counter(reason).increment();
  }

  /** shoal_recursion_entries{upstream,kind}: zone cuts and server records held. */
  public Gauge entries(String upstream, String kind) {
    return Kamon.gauge("shoal.recursion.entries", "Zone cuts, name-server addresses and server records held")
        .withTags(tags.withTag("upstream", upstream).withTag("kind", kind));
  }
}
