package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.receptionist.Receptionist;
import akka.actor.typed.receptionist.ServiceKey;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import java.util.function.BiConsumer;

/**
 * This node's door for other nodes' lookups of the keys it owns. Registered with the
 * receptionist so every node can find it; hands each lookup to the local worker for the key,
 * where it coalesces with local misses for the same question.
 */
public final class OwnerEndpoint {
  /** The receptionist key under which every node's endpoint is listed. */
  public static final ServiceKey<PeerLookup> KEY = ServiceKey.create(PeerLookup.class, "shoal-owner");

  private OwnerEndpoint() {}

  /** @param resolve hands a validated query and the reply address to the local worker */
  public static Behavior<PeerLookup> create(BiConsumer<DnsQuery, ActorRef<PeerAnswer>> resolve) {
    return Behaviors.setup(ctx -> {
      ctx.getSystem().receptionist().tell(Receptionist.register(KEY, ctx.getSelf()));
      return Behaviors.receiveMessage(lookup -> {
        try {
          resolve.accept(DnsQuery.parse(lookup.query), lookup.replyTo);
        } catch (BadQuery e) {
          lookup.replyTo.tell(PeerAnswer.failed());
        }
        return Behaviors.same();
      });
    });
  }
}
