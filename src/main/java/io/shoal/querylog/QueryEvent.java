package io.shoal.querylog;

import io.shoal.ingress.Protocol;
import java.net.InetSocketAddress;

/**
 * One thing to log, as it goes into the queue: made on the query path, so it only holds
 * references (the wire arrays are not copied: the path never writes to them after sending).
 *
 * @param kind the dnstap message type
 * @param peer the client (CLIENT_*) or the upstream server (FORWARDER_RESPONSE); null when unknown
 * @param query the query as received (CLIENT_*) or as forwarded (FORWARDER_*)
 * @param queryNanos wall time of the query, epoch nanoseconds
 * @param response the reply; null for a query, or for a query that got none
 * @param responseNanos wall time of the reply, epoch nanoseconds; 0 when there is none
 * @param dnstap whether the dnstap log takes it
 * @param json whether the JSON query log takes it (sampled)
 * @param hit whether it was answered at the front door (cache, local data, policy) rather than by a worker
 */
record QueryEvent(
    Kind kind, Protocol protocol, InetSocketAddress peer, byte[] query, long queryNanos, byte[] response,
    long responseNanos, boolean dnstap, boolean json, boolean hit) {

  /** The dnstap Message.Type values shoal sends. */
  enum Kind {
    CLIENT_QUERY(5),
    CLIENT_RESPONSE(6),
    FORWARDER_QUERY(7),
    FORWARDER_RESPONSE(8);

    final int code;

    Kind(int code) {
      this.code = code;
    }

    boolean response() {
      return this == CLIENT_RESPONSE || this == FORWARDER_RESPONSE;
    }

    boolean client() {
      return this == CLIENT_QUERY || this == CLIENT_RESPONSE;
    }
  }
}
