package io.shoal.ingress;

import io.shoal.access.AccessControl;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.ingress.Stage.Verdict;
import io.shoal.loop.LoopDetector;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ReplyPolicy;
import java.net.InetSocketAddress;
import java.util.Optional;

/** The stages that come before any answer: who asks, and is it a query shoal answers at all. */
final class ScreeningStages {
  private ScreeningStages() {}

  /**
   * Is it an owner node's reply to a lookup this node sent from a listening UDP socket? Taken (it
   * gets no reply, and is not logged as a query). Cluster mode only.
   */
  static final class OwnerReplies extends Stage.BeforeParse {
    private final OwnerDirectory owners;

    OwnerReplies(OwnerDirectory owners) {
      super("owner_replies");
      this.owners = owners;
    }

    @Override
    Verdict decide(byte[] packet, InetSocketAddress client, Protocol protocol, ReplyPath reply) {
      return packet.length >= 12 && (packet[2] & 0x80) != 0 && protocol == Protocol.UDP
          && owners.listenerReply(packet, client) ? Verdict.DROPPED : Verdict.PASS;
    }
  }

  /** Does access control serve this client? REFUSED or dropped when not. */
  static final class Access extends Stage.BeforeParse {
    private final AccessControl access;

    Access(AccessControl access) {
      super("access_control");
      this.access = access;
    }

    @Override
    Verdict decide(byte[] packet, InetSocketAddress client, Protocol protocol, ReplyPath reply) {
      Optional<byte[]> turnedAway = access.turnAway(packet, client.getAddress());
      if (turnedAway == null) {
        return Verdict.PASS;
      }
      return turnedAway.isPresent() ? Stage.answer(reply, turnedAway.get(), client) : Stage.drop(reply);
    }
  }

  /**
   * Is it a query shoal answers? A bad one gets FORMERR, NOTIMP or REFUSED, or is dropped (counted);
   * chaos-class questions about the server are answered here. The one step that is not a {@link
   * Stage}: it turns the packet into the query the stages after it decide on.
   */
  static final class Parse {
    private final ReplyPolicy replies;
    private final ServerMetrics metrics;

    Parse(ReplyPolicy replies, ServerMetrics metrics) {
      this.replies = replies;
      this.metrics = metrics;
    }

    /** The query in {@code packet}; null when it got its reply (or none) here. */
    DnsQuery parse(byte[] packet, InetSocketAddress client, ReplyPath reply) {
      try {
        return DnsQuery.parse(packet, replies);
      } catch (BadQuery bad) {
        if (bad.dropped()) {
          metrics.dropped(bad.reason());
          reply.drop();
        } else {
          reply.send(bad.reply(), client);
        }
        return null;
      }
    }

    @Override
    public String toString() {
      return "parse";
    }
  }

  /** Is it one of this node's forwarding-loop probes come back? SERVFAIL (and the loop is reported). */
  static final class Loops extends Stage {
    private final LoopDetector loops;

    Loops(LoopDetector loops) {
      super("loop_probes");
      this.loops = loops;
    }

    @Override
    Verdict decide(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath reply, ReplyPath arrivedOn) {
      return loops.cameBack(query) ? answer(reply, query.servfail(), client) : Verdict.PASS;
    }
  }
}
