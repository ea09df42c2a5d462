package io.shoal.upstream;

import io.shoal.wire.CacheKey;
import io.shoal.wire.ScannedAnswer;
import java.net.InetSocketAddress;
import java.nio.channels.SelectableChannel;
import java.util.concurrent.CompletableFuture;

/** One query in flight: its socket, what must match, when it gives up, and its result. */
abstract class Exchange {
  final InetSocketAddress server;
  final int id;
  final CacheKey key;
  final long deadlineNanos;
  final CompletableFuture<byte[]> result = new CompletableFuture<>();
  SelectableChannel channel;

  Exchange(InetSocketAddress server, int id, CacheKey key, long deadlineNanos) {
    this.server = server;
    this.id = id;
    this.key = key;
    this.deadlineNanos = deadlineNanos;
  }

  abstract int firstInterest();

  /**
   * The exchange is over: its socket is closed, or with {@code reuse} (a clean answer while the
   * node runs) may go back for another query.
   */
  abstract void end(UpstreamSockets sockets, boolean reuse);

  /**
   * Whether the first {@code length} bytes of {@code response} answer this query: its ID and its
   * question. Anything else, forged or late, does not end the wait.
   */
  final boolean answeredBy(byte[] response, int length) {
    return ScannedAnswer.answers(response, length, id, key);
  }
}
