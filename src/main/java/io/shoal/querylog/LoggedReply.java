package io.shoal.querylog;

import io.shoal.ingress.Protocol;
import io.shoal.ingress.ReplyPath;
import io.shoal.wire.DnsQuery;
import java.net.InetSocketAddress;

/** A query's reply path that logs the reply (CLIENT_RESPONSE, and the JSON line when sampled) as it goes out. */
final class LoggedReply implements ReplyPath {
  private final QueryLog log;
  private final ReplyPath inner;
  private final byte[] query;
  private final InetSocketAddress client;
  private final Protocol protocol;
  private final long queryNanos;
  private final boolean json;
  /** Set when a worker takes the query: its reply then comes from upstream (a cache miss). */
  private volatile boolean owed;
  /** Set (on the reading thread, just before the send) for an answer from the cache. */
  private boolean cached;

  LoggedReply(
      QueryLog log, ReplyPath inner, byte[] query, InetSocketAddress client, Protocol protocol, long queryNanos,
      boolean json) {
    this.log = log;
    this.inner = inner;
    this.query = query;
    this.client = client;
    this.protocol = protocol;
    this.queryNanos = queryNanos;
    this.json = json;
  }

  @Override
  public void send(byte[] wire, InetSocketAddress to) {
    long now = log.now();
    inner.send(wire, to);
    log.offer(new QueryEvent(QueryEvent.Kind.CLIENT_RESPONSE, protocol, client, query, queryNanos, wire, now,
        log.dnstap(), json, cache()));
  }

  @Override
  public void sendCached(byte[] wire, InetSocketAddress to) {
    cached = true;
    send(wire, to);
  }

  private QueryEvent.Cache cache() {
    return owed ? QueryEvent.Cache.MISS : cached ? QueryEvent.Cache.HIT : QueryEvent.Cache.NONE;
  }

  @Override
  public void drop() {
    inner.drop();
    if (json) {
      // dnstap has no message for a reply not sent; the JSON line says the query got none.
      log.offer(new QueryEvent(QueryEvent.Kind.CLIENT_RESPONSE, protocol, client, query, queryNanos, null, log.now(),
          false, true, cache()));
    }
  }

  @Override
  public void owed(DnsQuery q, long guardMillis) {
    owed = true;
    inner.owed(q, guardMillis);
  }
}
