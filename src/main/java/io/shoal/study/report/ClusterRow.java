package io.shoal.study.report;

import io.shoal.study.cluster.RemoteLookupLatency;
import io.shoal.study.cluster.RemoteLookups;
import io.shoal.study.measure.CacheCounters;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.ProcessCpu;
import java.util.List;

/**
 * One member's row of cluster.csv: the member's numbers summed over its nodes, with the upstream
 * queries knotd counted and the remote lookups of a clustered member. A one-node member has a row
 * too, as the reference the multi-node members are compared with. Values a member does not have
 * (remote lookups outside a cluster) are null and written as empty cells.
 *
 * @param fairHitRatePct 1 - upstream queries / completed queries (knotd's count, as for every member)
 * @param cacheHits the nodes' {@code shoal_cache_hits_total} added up, owner-side hits for peers included
 * @param cacheMisses the nodes' {@code shoal_cache_misses_total} added up, owner-side misses included
 * @param cacheHitRatePct {@link #cacheHitRatePct}: the share of client lookups some node's cache answered
 * @param remoteLookupOverheadMs what asking the owner adds to one query, from the idle probe
 * @param cpuSeconds user + system CPU time over the run, summed over the member's node processes
 * @param cpuMicrosPerQuery {@code cpuSeconds} per completed query, in microseconds
 * @param group the comparison group of the member (one workload's members), or null
 * @param cpuQuota the CPU quota of each node process, in CPUs, or null without one
 * @param p99LatencyMs the 99th percentile of every completed query's latency (dnsperf -v), or null
 * @param loadCpuSeconds user + system CPU time of the member's dnsperf processes over the measured run
 * @param remoteLookupP50Ms the bucket bound of the median owner lookup's round trip over the measured
 *     run, all nodes' histograms summed; null outside a cluster or without answered lookups, infinite
 *     past the last finite bucket
 * @param remoteLookupP90Ms the same for the 90th percentile
 * @param maxQpsPerNode the -Q each of a paced member's dnsperf processes ran with, or null: not paced,
 *     so its QPS is what the member could answer, not what it was offered
 * @param jitCpuSeconds the part of {@code cpuSeconds} the nodes' JIT compiler threads took, or null
 *     where not read: a node still compiling charges that to the queries it answers
 */
public record ClusterRow(
    String member,
    int nodes,
    boolean cluster,
    double achievedQps,
    double avgLatencyMs,
    long sent,
    long completed,
    long lost,
    long upstreamQueries,
    Double fairHitRatePct,
    Long cacheHits,
    Long cacheMisses,
    Double cacheHitRatePct,
    Long remoteLookupsAnswered,
    Long remoteLookupsTimeout,
    Long remoteLookupsFailed,
    Long remoteLookupsRefused,
    Double remoteLookupOverheadMs,
    Double cpuSeconds,
    Double cpuMicrosPerQuery,
    String group,
    Double cpuQuota,
    Double p99LatencyMs,
    Double loadCpuSeconds,
    Double remoteLookupP50Ms,
    Double remoteLookupP90Ms,
    Integer maxQpsPerNode,
    Double jitCpuSeconds) {

  /**
   * What a capacity study adds to a row, with the -Q of a paced member and the JIT compiler's part
   * of the nodes' CPU; every part may be null.
   */
  public record Capacity(String group, Double cpuQuota, Double p99LatencyMs, Double loadCpuSeconds,
      Integer maxQpsPerNode, Double jitCpuSeconds) {
    public static final Capacity NONE = new Capacity(null, null, null, null, null, null);
  }

  /** The header, in order. */
  public static final List<String> COLUMNS = List.of(
      "member", "nodes", "cluster", "achieved_qps", "avg_latency_ms", "sent", "completed", "lost",
      "upstream_queries", "fair_hit_rate_pct", "cache_hits", "cache_misses", "cache_hit_rate_pct",
      "remote_lookups_answered", "remote_lookups_timeout", "remote_lookups_failed", "remote_lookups_refused",
      "remote_lookup_overhead_ms", "cpu_seconds", "cpu_us_per_query", "group", "cpu_quota", "p99_latency_ms",
      "load_cpu_seconds", "remote_lookup_p50_ms", "remote_lookup_p90_ms", "max_qps_per_node", "jit_cpu_seconds");

  /**
   * A row from a member's measured numbers; {@code remote} is ignored outside a cluster;
   * {@code cpuSeconds} is null where it was not measured (the kill test).
   */
  public static ClusterRow of(String member, int nodes, boolean cluster, DnsperfReport load, long upstream,
      CacheCounters counters, RemoteLookups remote, Double overheadMs, Double cpuSeconds) {
    return of(member, nodes, cluster, load, upstream, counters, remote, RemoteLookupLatency.NONE, overheadMs,
        cpuSeconds, Capacity.NONE);
  }

  /** A row with the owner lookups' latency ({@code latency}, ignored outside a cluster) and a capacity study's columns. */
  public static ClusterRow of(String member, int nodes, boolean cluster, DnsperfReport load, long upstream,
      CacheCounters counters, RemoteLookups remote, RemoteLookupLatency latency, Double overheadMs, Double cpuSeconds,
      Capacity capacity) {
    return new ClusterRow(member, nodes, cluster, load.queriesPerSecond(), load.avgLatencyMillis(), load.sent(),
        load.completed(), load.lost(), upstream, ResultRow.fairHitRatePct(upstream, load.completed()),
        counters.hits(), counters.misses(),
        cacheHitRatePct(counters.hits(), counters.misses(), cluster ? remote : RemoteLookups.NONE),
        cluster ? remote.answered() : null, cluster ? remote.timeout() : null, cluster ? remote.failed() : null,
        cluster ? remote.refused() : null, overheadMs, cpuSeconds,
        ProcessCpu.microsPerQuery(cpuSeconds, load.completed()), capacity.group(), capacity.cpuQuota(),
        capacity.p99LatencyMs(), capacity.loadCpuSeconds(), cluster ? latency.p50Ms() : null,
        cluster ? latency.p90Ms() : null, capacity.maxQpsPerNode(), capacity.jitCpuSeconds());
  }

  /**
   * The cluster-wide cache hit rate from the nodes' own counters. Summed counters count a remote
   * lookup twice: a miss on the node the client asked, then a hit (or miss) on the owner. A client
   * query some node's cache answered is a local hit or an owner hit, so the hits sum is right as
   * it stands; the owner-side lookups are taken out of the denominator, which leaves one lookup per
   * client query. Coalesced misses (a query that joined a fetch in flight) count as misses here,
   * but as hits in the fair rate, since they sent nothing upstream; a timed-out remote lookup is a
   * miss in both, but may have cost two upstream queries (the asking node's and the owner's), which
   * only the fair rate sees. Null without counters.
   */
  public static Double cacheHitRatePct(Long hits, Long misses, RemoteLookups remote) {
    if (hits == null || misses == null) {
      return null;
    }
    long clientLookups = hits + misses - remote.answeredByOwner();
    if (clientLookups <= 0) {
      return null;
    }
    return Math.max(0.0, Math.min(100.0, 100.0 * hits / clientLookups));
  }

  /** The remote lookups of the row, or none outside a cluster. */
  public RemoteLookups remoteLookups() {
    return remoteLookupsAnswered == null ? RemoteLookups.NONE
        : new RemoteLookups(remoteLookupsAnswered, remoteLookupsTimeout, remoteLookupsFailed, remoteLookupsRefused);
  }

  /** This row's cells in {@link #COLUMNS} order. */
  public List<String> cells() {
    return List.of(
        member, Integer.toString(nodes), cluster ? "on" : "off", ResultRow.fixed(achievedQps, 1), ResultRow.fixed(avgLatencyMs, 3),
        Long.toString(sent), Long.toString(completed), Long.toString(lost), Long.toString(upstreamQueries),
        ResultRow.fixed(fairHitRatePct, 2), ResultRow.whole(cacheHits), ResultRow.whole(cacheMisses), ResultRow.fixed(cacheHitRatePct, 2),
        ResultRow.whole(remoteLookupsAnswered), ResultRow.whole(remoteLookupsTimeout), ResultRow.whole(remoteLookupsFailed), ResultRow.whole(remoteLookupsRefused),
        ResultRow.fixed(remoteLookupOverheadMs, 4), ResultRow.fixed(cpuSeconds, 2),
        ResultRow.fixed(cpuMicrosPerQuery, 2), group == null ? "" : group, ResultRow.fixed(cpuQuota, 2),
        ResultRow.fixed(p99LatencyMs, 3), ResultRow.fixed(loadCpuSeconds, 2), ResultRow.fixed(remoteLookupP50Ms, 3),
        ResultRow.fixed(remoteLookupP90Ms, 3), maxQpsPerNode == null ? "" : Integer.toString(maxQpsPerNode),
        ResultRow.fixed(jitCpuSeconds, 2));
  }

  /** Reads a row back from its cells, the inverse of {@link #cells()}. */
  public static ClusterRow fromCells(List<String> c) {
    if (c.size() != COLUMNS.size()) {
      throw new IllegalArgumentException("a cluster.csv row has " + COLUMNS.size() + " cells, this one " + c.size()
          + ": " + c);
    }
    return new ClusterRow(
        c.get(0), Integer.parseInt(c.get(1)), c.get(2).equals("on"), Double.parseDouble(c.get(3)),
        Double.parseDouble(c.get(4)), Long.parseLong(c.get(5)), Long.parseLong(c.get(6)), Long.parseLong(c.get(7)),
        Long.parseLong(c.get(8)), ResultRow.decimal(c.get(9)), ResultRow.longOrNull(c.get(10)), ResultRow.longOrNull(c.get(11)),
        ResultRow.decimal(c.get(12)), ResultRow.longOrNull(c.get(13)), ResultRow.longOrNull(c.get(14)), ResultRow.longOrNull(c.get(15)),
        ResultRow.longOrNull(c.get(16)), ResultRow.decimal(c.get(17)), ResultRow.decimal(c.get(18)),
        ResultRow.decimal(c.get(19)), c.get(20).isEmpty() ? null : c.get(20), ResultRow.decimal(c.get(21)),
        ResultRow.decimal(c.get(22)), ResultRow.decimal(c.get(23)), ResultRow.decimal(c.get(24)),
        ResultRow.decimal(c.get(25)), c.get(26).isEmpty() ? null : Integer.valueOf(c.get(26)),
        ResultRow.decimal(c.get(27)));
  }
}
