package io.shoal.study.scenario;

import java.time.Duration;
import java.util.List;

/**
 * The node-loss test of a clustered member: dnsperf against every node but {@code nodes}, which
 * are killed with SIGKILL together {@code after} into the measured run (or {@code quickAfter} in a
 * --quick run), with per-second statistics.
 *
 * @param nodes indexes of the nodes to kill, from 0; at least one node is left
 * @param queryTimeout dnsperf's -t: a query unanswered this long counts as lost
 */
public record KillPlan(List<Integer> nodes, Duration after, Duration quickAfter, Duration queryTimeout) {

  public KillPlan {
    nodes = List.copyOf(nodes);
  }

  /** When to kill in a run of this kind. */
  public Duration after(boolean quick) {
    return quick ? quickAfter : after;
  }

  /** Whether the nodes left are no majority of {@code clusterSize}: the Split Brain Resolver downs them. */
  public boolean leavesMinority(int clusterSize) {
    return 2 * (clusterSize - nodes.size()) <= clusterSize;
  }
}
