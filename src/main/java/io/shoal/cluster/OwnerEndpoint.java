package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.receptionist.Receptionist;
import akka.actor.typed.receptionist.ServiceKey;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * How other nodes find this node's DNS listeners, where they ask it for the keys it owns.
 * Registered with the receptionist so every node can find it; {@link Membership} asks each
 * endpoint it finds once. Lookups themselves never pass through here: they are DNS queries.
 *
 * <p>A node's question where this one answers DNS is answered once this node's ring lists that node
 * (see {@link #listsAsker}).
 *
 * <p>A stopping node also asks each endpoint whether that node still looks up keys on it ({@link
 * StillOwner}), and stops reading only once none does ({@link ClusterNode#handOver}). The
 * receptionist key keeps its {@link WhereIsDns} type, so nodes of an older release still find
 * this one; such a node does not answer {@link StillOwner}, and the stopping node waits its limit.
 */
public final class OwnerEndpoint {
  /** The receptionist key under which every node's endpoint is listed. */
  public static final ServiceKey<WhereIsDns> KEY = ServiceKey.create(WhereIsDns.class, "shoal-owner");

  private OwnerEndpoint() {}

  /** A node asks where this one answers DNS. */
  public static final class WhereIsDns implements CborSerializable {
    public final ActorRef<DnsAt> replyTo;

    @JsonCreator
    public WhereIsDns(@JsonProperty("replyTo") ActorRef<DnsAt> replyTo) {
      this.replyTo = replyTo;
    }
  }

  /**
   * Where a node answers DNS. A host is empty when the listener is bound to every interface:
   * the asker then uses the host of the node's cluster address.
   */
  public static final class DnsAt implements CborSerializable {
    public final String udpHost;
    public final int udpPort;
    public final String tcpHost;
    public final int tcpPort;

    @JsonCreator
    public DnsAt(
        @JsonProperty("udpHost") String udpHost, @JsonProperty("udpPort") int udpPort,
        @JsonProperty("tcpHost") String tcpHost, @JsonProperty("tcpPort") int tcpPort) {
      this.udpHost = udpHost;
      this.udpPort = udpPort;
      this.tcpHost = tcpHost;
      this.tcpPort = tcpPort;
    }

    static DnsAt of(InetSocketAddress udp, InetSocketAddress tcp) {
      return new DnsAt(host(udp), udp.getPort(), host(tcp), tcp.getPort());
    }

    private static String host(InetSocketAddress a) {
      return a.getAddress() == null || a.getAddress().isAnyLocalAddress() ? "" : a.getAddress().getHostAddress();
    }

    /** The owner this describes; {@code clusterHost} stands in for a wildcard listener. */
    OwnerDirectory.Owner owner(String clusterHost) {
      return new OwnerDirectory.Owner(
          new InetSocketAddress(udpHost.isEmpty() ? clusterHost : udpHost, udpPort),
          new InetSocketAddress(tcpHost.isEmpty() ? clusterHost : tcpHost, tcpPort));
    }
  }

  /** A stopping node asks whether this node still looks up keys on {@code member} (its cluster address). */
  public static final class StillOwner implements CborSerializable {
    public final String member;
    public final ActorRef<Listed> replyTo;

    @JsonCreator
    public StillOwner(@JsonProperty("member") String member, @JsonProperty("replyTo") ActorRef<Listed> replyTo) {
      this.member = member;
      this.replyTo = replyTo;
    }
  }

  /** Whether the asked node's owner ring still sends lookups to the member in question. */
  public static final class Listed implements CborSerializable {
    public final boolean listed;

    @JsonCreator
    public Listed(@JsonProperty("listed") boolean listed) {
      this.listed = listed;
    }
  }

  /**
   * The longest a node's question where this one answers DNS waits for this node's ring to list
   * that node; below {@link Membership}'s wait for the answer, so the answer never comes too late.
   */
  static final Duration LISTED_WAIT = Duration.ofSeconds(2);

  private static final Duration RECHECK = Duration.ofMillis(100);

  /** Looks at the questions still waiting for this node's ring. */
  private enum Recheck { TICK }

  /**
   * @param udp, tcp where this node's DNS listeners are bound
   * @param directory this node's owner ring, for {@link StillOwner} and for when to answer {@link WhereIsDns}
   */
  public static Behavior<WhereIsDns> create(InetSocketAddress udp, InetSocketAddress tcp, OwnerDirectory directory) {
    DnsAt here = DnsAt.of(udp, tcp);
    return Behaviors.<Object>setup(ctx -> Behaviors.<Object>withTimers(timers -> {
      ctx.getSystem().receptionist().tell(Receptionist.register(KEY, ctx.getSelf().<WhereIsDns>narrow()));
      // Questions from nodes this node's ring does not list yet, and until when they may wait.
      Map<WhereIsDns, Long> waiting = new HashMap<>();
      return Behaviors.receiveMessage(message -> {
        if (message instanceof WhereIsDns ask) {
          if (listsAsker(directory, ask)) {
            ask.replyTo.tell(here);
          } else {
            waiting.put(ask, System.nanoTime() + LISTED_WAIT.toNanos());
            timers.startTimerAtFixedRate(Recheck.TICK, RECHECK);
          }
        } else if (message == Recheck.TICK) {
          long now = System.nanoTime();
          waiting.entrySet().removeIf(e -> {
            boolean answer = listsAsker(directory, e.getKey()) || now - e.getValue() >= 0;
            if (answer) {
              e.getKey().replyTo.tell(here);
            }
            return answer;
          });
          if (waiting.isEmpty()) {
            timers.cancel(Recheck.TICK);
          }
        } else if (message instanceof StillOwner still) {
          still.replyTo.tell(new Listed(directory.looksUpOn(still.member)));
        }
        return Behaviors.same();
      });
    })).narrow();
  }

  /**
   * Whether this node's ring lists the node that asks where it answers DNS (a question from this
   * node itself is always answered). Until it does, this node would take that node's lookups as
   * the owner of every key its ring places here, which is more than the asking node's ring places
   * here: it would fetch upstream names that the asking node, or another, still holds. So the
   * answer, and with it the asking node's lookups, wait for this node's ring, at most {@link
   * #LISTED_WAIT}; meanwhile the asking node looks those keys up where they were before.
   */
  private static boolean listsAsker(OwnerDirectory directory, WhereIsDns ask) {
    akka.actor.Address asker = ask.replyTo.path().address();
    return !asker.hasGlobalScope() || directory.lists(asker.toString());
  }
}
