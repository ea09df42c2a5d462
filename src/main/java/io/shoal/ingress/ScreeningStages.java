package io.shoal.ingress;

import io.shoal.access.AccessControl;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.loop.LoopDetector;
import io.shoal.metrics.ServerMetrics;
import io.shoal.querylog.QueryLog;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ReplyPolicy;
import java.util.Optional;

/** The stages that come before any answer: who asks, and is it a query shoal answers at all. */
final class ScreeningStages {
  private ScreeningStages() {}

  /**
   * Is it an owner node's reply to a lookup this node sent from a listening UDP socket? Taken (no
   * reply to it). Cluster mode only.
   */
  static final class OwnerReplies extends Stage {
    private final OwnerDirectory owners;

    OwnerReplies(OwnerDirectory owners) {
      super("owner_replies");
      this.owners = owners;
    }

    @Override
    Verdict decide(QueryContext q) {
      byte[] packet = q.packet;
      return packet.length >= 12 && (packet[2] & 0x80) != 0 && q.protocol == Protocol.UDP
          && owners.listenerReply(packet, q.client) ? Verdict.DROPPED : Verdict.PASS;
    }
  }

  /** Never answers: watches the query's reply for the query logs. Only when a log is on. */
  static final class QueryLogging extends Stage {
    private final QueryLog log;

    QueryLogging(QueryLog log) {
      super("query_log");
      this.log = log;
    }

    @Override
    Verdict decide(QueryContext q) {
      q.reply = log.watch(q.packet, q.client, q.protocol, q.reply);
      return Verdict.PASS;
    }
  }

  /** Does access control serve this client? REFUSED or dropped when not. */
  static final class Access extends Stage {
    private final AccessControl access;

    Access(AccessControl access) {
      super("access_control");
      this.access = access;
    }

    @Override
    Verdict decide(QueryContext q) {
      Optional<byte[]> turnedAway = access.turnAway(q.packet, q.client.getAddress());
      if (turnedAway == null) {
        return Verdict.PASS;
      }
      return turnedAway.isPresent() ? q.answer(turnedAway.get()) : q.drop();
    }
  }

  /**
   * Is it a query shoal answers? A bad one gets FORMERR, NOTIMP or REFUSED, or is dropped (counted);
   * chaos-class questions about the server are answered here.
   */
  static final class Parse extends Stage {
    private final ReplyPolicy replies;
    private final ServerMetrics metrics;

    Parse(ReplyPolicy replies, ServerMetrics metrics) {
      super("parse");
      this.replies = replies;
      this.metrics = metrics;
    }

    @Override
    Verdict decide(QueryContext q) {
      try {
        q.query = DnsQuery.parse(q.packet, replies);
        return Verdict.PASS;
      } catch (BadQuery bad) {
        if (bad.dropped()) {
          metrics.dropped(bad.reason());
          return q.drop();
        }
        return q.answer(bad.reply());
      }
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
    Verdict decide(QueryContext q) {
      return loops.cameBack(q.query) ? q.answer(q.query.servfail()) : Verdict.PASS;
    }
  }
}
