package io.shoal.cluster;

import akka.actor.Address;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.receptionist.Receptionist;
import akka.cluster.ClusterEvent;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Subscribe;
import java.util.HashMap;
import java.util.Map;
import kamon.Kamon;
import kamon.metric.Gauge;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the {@link OwnerDirectory} in step with the cluster: the ring holds every reachable
 * node that has registered its {@link OwnerEndpoint}, so ownership moves as soon as a member
 * joins, leaves or becomes unreachable, without a restart.
 */
public final class Membership extends AbstractBehavior<Membership.Command> {

  /** Messages to the membership tracker. */
  public interface Command {}

  private record ListingChanged(Receptionist.Listing listing) implements Command {}

  private record MembersChanged(ClusterEvent.MemberEvent event) implements Command {}

  private static final Logger log = LoggerFactory.getLogger(Membership.class);

  private final OwnerDirectory directory;
  private final Cluster cluster;
  private final Gauge members;
  private final java.util.Set<Address> up = new java.util.HashSet<>();

  public static Behavior<Command> create(OwnerDirectory directory, String nodeLabel) {
    return Behaviors.setup(ctx -> new Membership(ctx, directory, nodeLabel));
  }

  private Membership(ActorContext<Command> context, OwnerDirectory directory, String nodeLabel) {
    super(context);
    this.directory = directory;
    this.cluster = Cluster.get(context.getSystem());
    this.members = Kamon.gauge("shoal.cluster.members", "Cluster members that are Up").withTag("node", nodeLabel);
    ActorRef<Receptionist.Listing> listings = context.messageAdapter(Receptionist.Listing.class, ListingChanged::new);
    context.getSystem().receptionist().tell(Receptionist.subscribe(OwnerEndpoint.KEY, listings));
    ActorRef<ClusterEvent.MemberEvent> memberEvents =
        context.messageAdapter(ClusterEvent.MemberEvent.class, MembersChanged::new);
    cluster.subscriptions().tell(Subscribe.create(memberEvents, ClusterEvent.MemberEvent.class));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(ListingChanged.class, this::onListing)
        .onMessage(MembersChanged.class, this::onMembers)
        .build();
  }

  private Behavior<Command> onListing(ListingChanged changed) {
    Address self = cluster.selfMember().address();
    Map<String, ActorRef<PeerLookup>> owners = new HashMap<>();
    // Only reachable endpoints: an unreachable node's keys are taken over at once.
    for (ActorRef<PeerLookup> ref : changed.listing().getServiceInstances(OwnerEndpoint.KEY)) {
      Address a = ref.path().address();
      owners.put((a.hasGlobalScope() ? a : self).toString(), ref);
    }
    directory.update(owners, self.toString());
    log.info("owner ring: {} node(s) {}", owners.size(), owners.keySet());
    return this;
  }

  private Behavior<Command> onMembers(MembersChanged changed) {
    // Counted from the events themselves: cluster.state() may not have caught up with them yet.
    ClusterEvent.MemberEvent e = changed.event();
    if (e.member().status() == MemberStatus.up()) {
      up.add(e.member().address());
    } else {
      up.remove(e.member().address());
    }
    members.update(up.size());
    return this;
  }
}
