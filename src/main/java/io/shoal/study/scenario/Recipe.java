package io.shoal.study.scenario;

import java.time.Duration;
import java.util.List;

/**
 * What a scenario holds constant for all its members: the upstream zone and TTL, the query file,
 * the cache capacity and policy, the shoal settings every member starts from, and the load.
 *
 * @param mapSizeBytes LMDB map per shard; chosen so the entry cap, not the map, limits the cache
 * @param upstreamWorkers knotd's UDP workers
 * @param jvmOptions options for each shoal member's JVM, the same for all so heaps compare
 * @param quick the load of a --quick smoke run
 * @param rounds how many times every member is measured, members taking turns (a --quick run
 *     measures once); results.csv holds each member's median round
 * @param policyList the domain list the run writes for members with {@code policy_list}, or null
 * @param signing how knotd signs the zone, or null for an unsigned zone (the studies before DNSSEC)
 * @param cpuQuota CPUs each shoal process may use ({@code cpu_quota}, a cgroup CPU quota per
 *     process as a Kubernetes CPU limit bounds a pod), or null for no quota
 * @param cpuPeriod the CFS period the quota is a share of ({@code cpu_period}; 100 ms, the kernel's and
 *     Kubernetes's default, unless set): a process over its quota waits for the next period, so
 *     the period bounds how long it is held
 * @param cpuQuotaAfterWarmup true if the quota applies from the measured run on
 *     ({@code cpu_quota_from = measured}): the nodes start and warm up held by their weight only,
 *     as a node that has served for hours has compiled its code; false: from the JVM's start
 * @param latencyPercentiles true if the measured dnsperf runs report every query ({@code -v}), so the
 *     study can give latency percentiles ({@code latency_percentiles}); false: the mean only
 * @param sideBySide true if every member is started and warmed up once and then measured in short
 *     turns, round after round, all of them running meanwhile ({@code turns = slices}); false: each
 *     round starts, warms up, measures and stops every member in turn ({@code turns = runs})
 */
public record Recipe(
    String zone,
    Duration stubTtl,
    QueryFile queries,
    int ingressWorkers,
    String fill,
    long maxEntries,
    String whenFull,
    int shardCount,
    long mapSizeBytes,
    Duration syncInterval,
    int upstreamWorkers,
    List<String> jvmOptions,
    LoadSettings load,
    LoadSettings quick,
    int rounds,
    PolicyList policyList,
    Signing signing,
    Double cpuQuota,
    Duration cpuPeriod,
    boolean cpuQuotaAfterWarmup,
    boolean latencyPercentiles,
    boolean sideBySide) {

  /** True if knotd signs the zone, dnsperf sets DO, and validating members get its trust anchor. */
  public boolean signed() {
    return signing != null;
  }
}
