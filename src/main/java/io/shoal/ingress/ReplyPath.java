package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.DnsQuery;
import java.net.InetSocketAddress;

/**
 * Where a query's reply goes: the UDP socket it came in on, or its stream (TCP, TLS, HTTPS). Called
 * on whichever thread has the reply (the socket's reader for a hit, a worker for a miss), so an
 * implementation is thread-safe and does not block for long.
 */
public interface ReplyPath {
  void send(byte[] wire, InetSocketAddress client);

  /** {@link #send} of an answer from the cache: the same, except to a path that logs hits apart. */
  default void sendCached(byte[] wire, InetSocketAddress client) {
    send(wire, client);
  }

  /**
   * Sends {@code hit}, rendered for {@code query} at {@code nowMillis} within {@code sizeLimit}:
   * the same as {@link #sendCached} of {@link CachedAnswer#render}, which is what it does unless a
   * path can render into a buffer of its own (a UDP socket's reading thread).
   */
  default void sendHit(CachedAnswer hit, DnsQuery query, long nowMillis, int sizeLimit, InetSocketAddress client) {
    sendCached(hit.render(query, nowMillis, sizeLimit), client);
  }

  /** The query gets no reply. A datagram socket has nothing to do; a stream frees the query's slot. */
  default void drop() {}

  /**
   * A worker now owes {@code query} its reply. A path that holds something while it waits (a
   * stream's pipeline slot) bounds the wait at {@code guardMillis}, after which it answers SERVFAIL:
   * longer than any upstream deadline, it only fires if a worker lost the query (restarted).
   */
  default void owed(DnsQuery query, long guardMillis) {}
}
