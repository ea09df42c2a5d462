package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.pubsub.Topic;
import akka.cluster.typed.Cluster;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.shoal.dnssec.DenialProofs;

/**
 * Shares the DNSSEC denial proofs this node validates with every other node (RFC 8198 across the
 * cluster): each new NSEC/NSEC3 range is published once on a cluster topic, and every node keeps
 * the ranges the others publish, so a miss any node gets is denied where it arrived, with no hop.
 * See docs/cluster-internals.md, "Shared denial proofs", for why proofs go to every node rather than to the
 * owner of their zone.
 */
public final class DenialSharing {
  private DenialSharing() {}

  /** Messages to the sharing actor. */
  public interface Command {}

  /**
   * A proof one node validated: the authority section of a secure denial (SOA, NSEC/NSEC3 and
   * their RRSIGs) in wire form, the upstream group that gave it, and when its TTLs began.
   */
  public static final class Proof implements Command, CborSerializable {
    /** The publishing node's cluster address: it keeps its own proofs already. */
    public final String origin;
    public final String upstream;
    public final byte[] authority;
    public final long learnedAtMillis;

    @JsonCreator
    public Proof(
        @JsonProperty("origin") String origin, @JsonProperty("upstream") String upstream,
        @JsonProperty("authority") byte[] authority, @JsonProperty("learnedAtMillis") long learnedAtMillis) {
      this.origin = origin;
      this.upstream = upstream;
      this.authority = authority;
      this.learnedAtMillis = learnedAtMillis;
    }
  }

  /** This node learned a proof: publish it. */
  private record Publish(Proof proof) implements Command {}

  /** The topic's name: one per cluster. */
  static final String TOPIC = "shoal-denial-proofs";

  /**
   * Subscribes to the cluster's proofs and has {@code proofs} tell this node's new ones to the
   * topic, for as long as this actor (the membership incarnation) lives.
   */
  public static Behavior<Command> create(DenialProofs proofs) {
    return Behaviors.setup(ctx -> {
      String self = Cluster.get(ctx.getSystem()).selfMember().uniqueAddress().toString();
      ActorRef<Topic.Command<Proof>> topic = ctx.spawn(Topic.create(Proof.class, TOPIC), "denial-topic");
      topic.tell(Topic.subscribe(ctx.getSelf().narrow()));
      ActorRef<Command> me = ctx.getSelf();
      proofs.tellTo((upstream, authority, at) -> me.tell(new Publish(new Proof(self, upstream, authority, at))));
      return Behaviors.receive(Command.class)
          .onMessage(Publish.class, p -> {
            topic.tell(Topic.publish(p.proof()));
            return Behaviors.same();
          })
          .onMessage(Proof.class, p -> {
            if (!self.equals(p.origin)) {
              proofs.fromPeer(p.upstream, p.authority, p.learnedAtMillis);
            }
            return Behaviors.same();
          })
          .onSignal(akka.actor.typed.PostStop.class, s -> {
            proofs.tellTo(null);
            return Behaviors.same();
          })
          .build();
    });
  }
}
