package io.shoal.metrics;

import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Gauge;
import kamon.tag.TagSet;

/** The instruments of a node's cluster membership, labelled with the node. */
public final class ClusterMetrics {
  private final Counter rejoins;
  private final Gauge members;
  private final Gauge owners;
  private final Counter warmSent;
  private final Counter warmReceived;
  private final Counter warmReleased;

  public ClusterMetrics(String node) {
    this.rejoins = Kamon.counter("shoal.cluster.rejoins",
        "Times this node's cluster membership was started again after it was downed or could not join")
        .withTag("node", node);
    this.members = Kamon.gauge("shoal.cluster.members", "Cluster members that are Up").withTag("node", node);
    this.owners = Kamon.gauge("shoal.cluster.owners",
        "Members whose keys this node looks up at their owner, itself included").withTag("node", node);
    kamon.metric.Metric.Counter warm = Kamon.counter("shoal.cluster.warm_join.answers",
        "Answers sent to the node that now owns them, taken in from the node that held them, or released by the"
            + " node that sent them to their joining owner, by warm join");
    this.warmSent = warm.withTags(TagSet.builder().add("node", node).add("direction", "sent").build());
    this.warmReceived = warm.withTags(TagSet.builder().add("node", node).add("direction", "received").build());
    this.warmReleased = warm.withTags(TagSet.builder().add("node", node).add("direction", "released").build());
  }

  /** Warm join sent {@code n} answers to their new owner: shoal_cluster_warm_join_answers_total{direction="sent"}. */
  public void warmJoinSent(long n) {
    warmSent.increment(n);
  }

  /** Warm join stored {@code n} answers this node now owns: {direction="received"}. */
  public void warmJoinReceived(long n) {
    warmReceived.increment(n);
  }

  /**
   * Warm join removed {@code n} answers from this node's own caches after their new owner, a
   * member that joined, stored them: {direction="released"}.
   */
  public void warmJoinReleased(long n) {
    warmReleased.increment(n);
  }

  /** The membership started again after it was downed or could not join: shoal_cluster_rejoins_total. */
  public void rejoined() {
    rejoins.increment();
  }

  /** Cluster members that are Up now: shoal_cluster_members. */
  public void membersUp(int up) {
    members.update(up);
  }

  /** Nodes in the owner ring now, this one included: shoal_cluster_owners. */
  public void ownerRing(int nodes) {
    owners.update(nodes);
  }
}
