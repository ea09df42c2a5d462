package io.shoal.ingress;

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

  /** The query gets no reply. A datagram socket has nothing to do; a stream frees the query's slot. */
  default void drop() {}

  /**
   * A worker now owes {@code query} its reply. A path that holds something while it waits (a
   * stream's pipeline slot) bounds the wait at {@code guardMillis}, after which it answers SERVFAIL:
   * longer than any upstream deadline, it only fires if a worker lost the query (restarted).
   */
  default void owed(DnsQuery query, long guardMillis) {}
}
