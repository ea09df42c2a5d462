package io.shoal.querylog;

import io.shoal.upstream.Upstream;
import io.shoal.wire.DnsQuery;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.CompletionStage;

/**
 * An upstream group whose exchanges are logged as FORWARDER_QUERY and FORWARDER_RESPONSE. The
 * query logged is the question as the client asked it: the group sends it with an ID (and
 * possibly a transport) of its own choosing, per server and per try.
 */
final class LoggedUpstream implements Upstream {
  private final QueryLog log;
  private final Upstream inner;

  LoggedUpstream(QueryLog log, Upstream inner) {
    this.log = log;
    this.inner = inner;
  }

  @Override
  public CompletionStage<Outcome> forward(DnsQuery query) {
    long sent = log.now();
    byte[] packet = query.packet();
    log.offer(new QueryEvent(QueryEvent.Kind.FORWARDER_QUERY, null, null, packet, sent, null, 0, true, false, QueryEvent.Cache.MISS));
    return inner.forward(query).whenComplete((outcome, failure) -> {
      if (outcome instanceof Answered a) {
        log.offer(new QueryEvent(QueryEvent.Kind.FORWARDER_RESPONSE, null, server(a.server()), packet, sent,
            a.wire(), log.now(), true, false, QueryEvent.Cache.MISS));
      }
    });
  }

  /** The server's "host:port" or "[v6]:port" label as an address; null when it is not one (no lookup is made). */
  static InetSocketAddress server(String label) {
    if (label == null) {
      return null;
    }
    int colon = label.lastIndexOf(':');
    if (colon <= 0) {
      return null;
    }
    String host = label.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    if (!host.matches("[0-9a-fA-F:.]+")) {
      return null;
    }
    try {
      return new InetSocketAddress(InetAddress.getByName(host), Integer.parseInt(label.substring(colon + 1)));
    } catch (UnknownHostException | IllegalArgumentException e) {
      return null;
    }
  }
}
