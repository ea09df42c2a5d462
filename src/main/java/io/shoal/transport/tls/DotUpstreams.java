package io.shoal.transport.tls;

import akka.actor.typed.ActorSystem;
import io.shoal.config.DotServerSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.upstream.DotExchanges;
import io.shoal.upstream.UpstreamException;
import io.shoal.wire.CacheKey;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

/**
 * A node's connections to its DoT upstream servers: one {@link DotUpstream} per server entry,
 * opened on the first query it gets, closed by {@link #close} in the node's shutdown.
 */
public final class DotUpstreams implements DotExchanges, AutoCloseable {
  private final ActorSystem<?> system;
  private final ServerMetrics metrics;
  private final IntSupplier ids;
  private final ConcurrentHashMap<DotServerSettings, DotUpstream> servers = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** @param ids fresh 16-bit query IDs, for the rare ID already in flight on a connection */
  public DotUpstreams(ActorSystem<?> system, ServerMetrics metrics, IntSupplier ids) {
    this.system = system;
    this.metrics = metrics;
    this.ids = ids;
  }

  @Override
  public CompletableFuture<byte[]> exchange(
      DotServerSettings server, byte[] query, int id, CacheKey key, long deadlineNanos) {
    if (closed) {
      return CompletableFuture.failedFuture(new UpstreamException("error", "shutting down"));
    }
    return servers.computeIfAbsent(server, s -> new DotUpstream(system, s, metrics, ids))
        .exchange(query, id, key, deadlineNanos);
  }

  /** Closes every connection; queries still waiting fail. */
  @Override
  public void close() {
    closed = true;
    servers.values().forEach(DotUpstream::close);
  }
}
