package io.shoal.study;

import java.time.Duration;

/**
 * The node-loss test of a clustered member: dnsperf against every node but {@code node}, which
 * is killed with SIGKILL {@code after} into the measured run (or {@code quickAfter} in a --quick
 * run), with per-second statistics.
 *
 * @param node index of the node to kill, from 0
 * @param queryTimeout dnsperf's -t: a query unanswered this long counts as lost
 */
public record KillPlan(int node, Duration after, Duration quickAfter, Duration queryTimeout) {

  /** When to kill in a run of this kind. */
  public Duration after(boolean quick) {
    return quick ? quickAfter : after;
  }
}
