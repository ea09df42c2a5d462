package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.receptionist.Receptionist;
import akka.actor.typed.receptionist.ServiceKey;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.net.InetSocketAddress;

/**
 * How other nodes find this node's DNS listeners, where they ask it for the keys it owns.
 * Registered with the receptionist so every node can find it; {@link Membership} asks each
 * endpoint it finds once. Lookups themselves never pass through here: they are DNS queries.
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

  /** @param udp, tcp where this node's DNS listeners are bound */
  public static Behavior<WhereIsDns> create(InetSocketAddress udp, InetSocketAddress tcp) {
    DnsAt here = DnsAt.of(udp, tcp);
    return Behaviors.setup(ctx -> {
      ctx.getSystem().receptionist().tell(Receptionist.register(KEY, ctx.getSelf()));
      return Behaviors.receiveMessage(ask -> {
        ask.replyTo.tell(here);
        return Behaviors.same();
      });
    });
  }
}
