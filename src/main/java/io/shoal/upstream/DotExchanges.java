package io.shoal.upstream;

import io.shoal.config.DotServerSettings;
import io.shoal.wire.CacheKey;
import java.util.concurrent.CompletableFuture;

/**
 * Queries to DNS-over-TLS upstream servers, on connections kept open between queries. As {@link
 * UpstreamSelector#tcp}: the future completes with the answer that carries the query's ID and
 * question, or fails with an {@link UpstreamException} (outcome {@code tls_verify} when the
 * server's certificate was refused, {@code tls_handshake} when the handshake failed otherwise).
 */
public interface DotExchanges {
  CompletableFuture<byte[]> exchange(DotServerSettings server, byte[] query, int id, CacheKey key, long deadlineNanos);

  /** For nodes whose groups list no tls:// server. */
  DotExchanges NONE = (server, query, id, key, deadline) -> CompletableFuture.failedFuture(
      new UpstreamException("error", "no DoT client for " + server.address()));
}
