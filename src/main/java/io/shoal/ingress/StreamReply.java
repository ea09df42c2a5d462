package io.shoal.ingress;

import io.shoal.wire.DnsQuery;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/** The reply path of one query read from a stream: a future its pipeline slot waits on. */
final class StreamReply implements ReplyPath {
  private final CompletableFuture<Optional<byte[]>> future = new CompletableFuture<>();

  @Override
  public void send(byte[] wire, InetSocketAddress client) {
    future.complete(Optional.of(wire));
  }

  @Override
  public void drop() {
    future.complete(Optional.empty());
  }

  @Override
  public void owed(DnsQuery query, long guardMillis) {
    future.completeOnTimeout(Optional.of(query.servfail()), guardMillis, TimeUnit.MILLISECONDS);
  }

  CompletionStage<Optional<byte[]>> future() {
    return future;
  }
}
