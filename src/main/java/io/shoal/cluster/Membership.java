package io.shoal.cluster;

import akka.actor.Address;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
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
import io.shoal.metrics.ClusterMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the {@link OwnerDirectory} in step with the cluster: the ring holds every reachable
 * node that has registered its {@link OwnerEndpoint}, so ownership moves as soon as a member
 * joins, leaves or becomes unreachable, without a restart. Each new member's endpoint is asked
 * once where the member answers DNS, which is where its keys are looked up.
 */
public final class Membership extends AbstractBehavior<Membership.Command> {

  /** Messages to the membership tracker. */
  public interface Command {}

  private record ListingChanged(Receptionist.Listing listing) implements Command {}

  private record MembersChanged(ClusterEvent.MemberEvent event) implements Command {}

  /** A node's endpoint said where it answers DNS; {@code at} is null when it did not in time. */
  private record DnsAddressed(ActorRef<OwnerEndpoint.WhereIsDns> ref, OwnerEndpoint.DnsAt at) implements Command {}

  private record AskAgain(ActorRef<OwnerEndpoint.WhereIsDns> ref) implements Command {}

  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(3);

  private static final Logger log = LoggerFactory.getLogger(Membership.class);

  private final OwnerDirectory directory;
  private final Cluster cluster;
  private final ClusterMetrics metrics;
  private final ActorRef<WarmJoin.Command> warmJoin;
  private final java.util.Set<Address> up = new java.util.HashSet<>();
  /** The endpoints listed now, this node's included. */
  private Set<ActorRef<OwnerEndpoint.WhereIsDns>> listed = Set.of();
  /**
   * Where the other listed members answer DNS, as far as they said, by endpoint: a member that
   * comes back at the same address is a new endpoint, asked again.
   */
  private final Map<ActorRef<OwnerEndpoint.WhereIsDns>, OwnerDirectory.Owner> owners = new HashMap<>();

  /** @param warmJoin told of each member that enters the ring, to send it the answers it now owns */
  public static Behavior<Command> create(
      OwnerDirectory directory, ClusterMetrics metrics, ActorRef<WarmJoin.Command> warmJoin) {
    return Behaviors.setup(ctx -> new Membership(ctx, directory, metrics, warmJoin));
  }

  private Membership(
      ActorContext<Command> context, OwnerDirectory directory, ClusterMetrics metrics,
      ActorRef<WarmJoin.Command> warmJoin) {
    super(context);
    this.directory = directory;
    this.warmJoin = warmJoin;
    this.cluster = Cluster.get(context.getSystem());
    this.metrics = metrics;
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
        .onMessage(DnsAddressed.class, this::onDnsAddressed)
        .onMessage(AskAgain.class, this::onAskAgain)
        .build();
  }

  private Behavior<Command> onListing(ListingChanged changed) {
    listed = changed.listing().getServiceInstances(OwnerEndpoint.KEY);
    for (ActorRef<OwnerEndpoint.WhereIsDns> ref : listed) {
      if (!isSelf(ref) && !owners.containsKey(ref)) {
        askWhere(ref);
      }
    }
    publish();
    return Behaviors.same();
  }

  /** Asks a node's endpoint where it answers DNS (once; again after a failure while it is listed). */
  private void askWhere(ActorRef<OwnerEndpoint.WhereIsDns> ref) {
    getContext().ask(OwnerEndpoint.DnsAt.class, ref, ASK_TIMEOUT, OwnerEndpoint.WhereIsDns::new,
        (at, failure) -> new DnsAddressed(ref, at));
  }

  private Behavior<Command> onDnsAddressed(DnsAddressed answer) {
    if (!listed.contains(answer.ref())) {
      return Behaviors.same();
    }
    if (answer.at() == null) {
      getContext().scheduleOnce(ASK_TIMEOUT, getContext().getSelf(), new AskAgain(answer.ref()));
      return Behaviors.same();
    }
    String host = answer.ref().path().address().getHost().orElse("127.0.0.1");
    boolean entered = owners.put(answer.ref(), answer.at().owner(host)) == null;
    publish();
    if (entered) {
      // The ring now places keys on it, some of which this node holds: warm join sends them.
      akka.actor.ActorPath receiver = answer.ref().path().parent().child(WarmJoin.NAME);
      warmJoin.tell(new WarmJoin.NewOwner(memberOf(answer.ref()),
          ActorRefResolver.get(getContext().getSystem()).resolveActorRef(receiver.toSerializationFormat())));
    }
    return Behaviors.same();
  }

  private Behavior<Command> onAskAgain(AskAgain again) {
    if (listed.contains(again.ref()) && !owners.containsKey(again.ref())) {
      askWhere(again.ref());
    }
    return Behaviors.same();
  }

  /**
   * Rebuilds the ring from the listed endpoints: only reachable ones are listed, so an
   * unreachable node's keys are taken over at once.
   */
  private void publish() {
    owners.keySet().retainAll(listed);
    List<String> members = new ArrayList<>();
    Map<String, OwnerDirectory.Owner> reachable = new HashMap<>();
    for (ActorRef<OwnerEndpoint.WhereIsDns> ref : listed) {
      members.add(memberOf(ref));
      OwnerDirectory.Owner owner = owners.get(ref);
      if (owner != null) {
        reachable.put(memberOf(ref), owner);
      }
    }
    String self = cluster.selfMember().address().toString();
    directory.update(members, reachable, self);
    metrics.ownerRing(directory.size());
    log.info("owner ring: {} node(s) {}; DNS addresses known for {}", members.size(), members, reachable.keySet());
  }

  private boolean isSelf(ActorRef<?> ref) {
    return !ref.path().address().hasGlobalScope();
  }

  private String memberOf(ActorRef<?> ref) {
    Address a = ref.path().address();
    return (a.hasGlobalScope() ? a : cluster.selfMember().address()).toString();
  }

  private Behavior<Command> onMembers(MembersChanged changed) {
    // Counted from the events themselves: cluster.state() may not have caught up with them yet.
    ClusterEvent.MemberEvent e = changed.event();
    if (e.member().status() == MemberStatus.up()) {
      up.add(e.member().address());
    } else {
      up.remove(e.member().address());
    }
    metrics.membersUp(up.size());
    return Behaviors.same();
  }
}
