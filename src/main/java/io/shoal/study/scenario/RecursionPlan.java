package io.shoal.study.scenario;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Set;

/**
 * The recursion test of a scenario: every member resolves from the root of a DNS tree of its own
 * on loopback ({@code zones} signed zones under one TLD), in turn, round after round. Each run
 * first asks one name per zone (the zone cuts and keys get cached), then each of
 * {@code coldNames} names never asked before once (cold resolutions: one authority exchange and
 * its validation each), then the same names again for the recipe's duration (warm hits). Every
 * member and round asks names of its own, so no run finds another's answers anywhere.
 *
 * @param zones how many signed zones hold the names
 * @param coldNames names each run resolves cold (and then asks warm)
 * @param warmUpNames names every run resolves before its cold pass, the same names for every run
 *     (each run is a fresh process), until its JIT compilers settle, so a JVM has compiled its
 *     resolution path before it is measured
 * @param quickColdNames the cold and the warm-up names of a --quick run
 * @param coldOutstanding dnsperf -q of the cold pass: the resolutions in flight at once
 * @param coldLimit the longest a cold pass may take (dnsperf -l): it stops there, answered or not
 * @param clusterNodes nodes of the cluster part (one cluster, then as many independent nodes, all
 *     sent the same cold names); 0 for no cluster part
 */
public record RecursionPlan(int zones, int coldNames, int warmUpNames, int quickColdNames, int coldOutstanding, Duration coldLimit,
    int clusterNodes) {

  private static final Set<String> KEYS = Set.of(
      "zones", "cold_names", "warm_up_names", "quick_cold_names", "cold_outstanding", "cold_limit", "cluster_nodes");
  /** The most names one run asks cold: every one is a record in a zone knotd signs at start. */
  static final int MAX_COLD_NAMES = 200_000;
  /** The parts the warm-up names after the warm-up's hits are asked in, at most. */
  public static final int WARM_UP_PARTS = 24;
  /** The JIT compilers' share of a warm-up part's CPU below which the warm-up ends. */
  public static final double WARM_UP_SETTLED_SHARE = 0.05;
  /** The longest wait for a server's JIT compilers to go idle after the warm-up. */
  public static final Duration COMPILER_WAIT = Duration.ofSeconds(20);

  /** Of {@code warmUpNames}, those asked before the warm-up's hits (an eighth); the rest come in parts after them. */
  public static int earlyWarmUpNames(int warmUpNames) {
    return Math.max(1, warmUpNames / 8);
  }

  /** Cold names of this run. */
  public int coldNames(boolean quick) {
    return quick ? quickColdNames : coldNames;
  }

  /** Warm-up names of this run. */
  public int warmUpNames(boolean quick) {
    return quick ? quickColdNames : warmUpNames;
  }

  /**
   * The runs that each need names of their own: every one-process member in every round, and in
   * each round of the cluster part the cluster and the independent nodes (which share theirs).
   */
  public int runsNeedingNames(int members, int rounds) {
    return rounds * (members + (clusterNodes > 0 ? 2 : 0));
  }

  /** Reads a scenario's {@code recursion} block; the error names the key at fault. */
  static RecursionPlan from(Config c) {
    ScenarioReader.allowOnly(c, "recursion.", KEYS);
    int zones = c.hasPath("zones") ? c.getInt("zones") : 4;
    if (zones < 1 || zones > 20) {
      throw new IllegalArgumentException("recursion.zones: the signed zones the names are spread over, 1 to 20; is "
          + zones);
    }
    int cold = c.hasPath("cold_names") ? c.getInt("cold_names") : 5000;
    int quick = c.hasPath("quick_cold_names") ? c.getInt("quick_cold_names") : 200;
    int warmUp = c.hasPath("warm_up_names") ? c.getInt("warm_up_names") : cold;
    for (int n : new int[] {cold, quick, warmUp}) {
      if (n < zones || n > MAX_COLD_NAMES) {
        throw new IllegalArgumentException("recursion.cold_names, warm_up_names and quick_cold_names: from the number "
            + "of zones (" + zones + ") to " + MAX_COLD_NAMES + "; are " + cold + ", " + warmUp + " and " + quick);
      }
    }
    int outstanding = c.hasPath("cold_outstanding") ? c.getInt("cold_outstanding") : 100;
    if (outstanding < 1 || outstanding > ScenarioReader.MAX_OUTSTANDING) {
      throw new IllegalArgumentException("recursion.cold_outstanding: dnsperf -q of the cold pass, from 1 to "
          + ScenarioReader.MAX_OUTSTANDING + "; is " + outstanding);
    }
    Duration limit = c.hasPath("cold_limit") ? c.getDuration("cold_limit") : Duration.ofSeconds(60);
    if (limit.toSeconds() < 1) {
      throw new IllegalArgumentException("recursion.cold_limit: at least 1s; is " + limit);
    }
    int nodes = c.hasPath("cluster_nodes") ? c.getInt("cluster_nodes") : 0;
    if (nodes == 1 || nodes < 0 || nodes > 5) {
      throw new IllegalArgumentException("recursion.cluster_nodes: 0 (no cluster part) or 2 to 5; is " + nodes);
    }
    return new RecursionPlan(zones, cold, warmUp, quick, outstanding, limit, nodes);
  }
}
