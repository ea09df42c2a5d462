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
 * @param cache where its reply came from, as far as the cache is concerned
 */
record QueryEvent(
    Kind kind, Protocol protocol, InetSocketAddress peer, byte[] query, long queryNanos, byte[] response,
    long responseNanos, boolean dnstap, boolean json, Cache cache) {

  /** The JSON line's {@code cache}: answered from the cache, by a worker (upstream), or by neither. */
  enum Cache {
    /** from the cache (in a cluster, the near cache's copy too) */
    HIT,
    /** by a worker: fetched upstream, coalesced with another client's fetch, or served stale */
    MISS,
    /** where it came in, without the cache: local data, the response policy, a refusal or an error */
    NONE;

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

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
