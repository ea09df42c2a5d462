package io.shoal.transport.tls;

import akka.actor.typed.ActorSystem;
import io.shoal.config.DotServerSettings;
import io.shoal.config.TlsSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.upstream.DotExchanges;
import io.shoal.upstream.UpstreamException;
import io.shoal.wire.CacheKey;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's connections to its DoT upstream servers: one {@link DotUpstream} per server entry,
 * opened on the first query it gets, closed by {@link #close} in the node's shutdown. Their TLS is
 * {@code shoal.tls.provider}'s, as the listeners' (Conscrypt where it loads, for {@code auto}),
 * said in the log and in shoal_upstream_tls_provider{provider} when the first server is asked.
 */
public final class DotUpstreams implements DotExchanges, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DotUpstreams.class);
  private final ActorSystem<?> system;
  private final ServerMetrics metrics;
  private final IntSupplier ids;
  private final TlsSettings.Provider setting;
  private volatile TlsImplementation tls;
  private final ConcurrentHashMap<DotServerSettings, DotUpstream> servers = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * @param ids fresh 16-bit query IDs, for the rare ID already in flight on a connection
   * @param provider {@code shoal.tls.provider}
   */
  public DotUpstreams(ActorSystem<?> system, ServerMetrics metrics, IntSupplier ids, TlsSettings.Provider provider) {
    this.system = system;
    this.metrics = metrics;
    this.ids = ids;
    this.setting = provider;
  }

  /** The implementation, chosen (and told) when the first DoT upstream is asked: nodes without one load nothing. */
  private TlsImplementation tls() {
    TlsImplementation t = tls;
    if (t == null) {
      synchronized (this) {
        t = tls;
        if (t == null) {
          t = TlsImplementation.choose(setting);
          metrics.upstreamTlsProvider(t.label());
          log.info("DoT upstream connections: TLS by {}", t.note());
          tls = t;
        }
      }
    }
    return t;
  }

  @Override
  public CompletableFuture<byte[]> exchange(
      DotServerSettings server, byte[] query, int id, CacheKey key, long deadlineNanos) {
    if (closed) {
      return CompletableFuture.failedFuture(new UpstreamException("error", "shutting down"));
    }
    return servers.computeIfAbsent(server, s -> new DotUpstream(system, s, metrics, ids, tls()))
        .exchange(query, id, key, deadlineNanos);
  }

  /** Closes every connection; queries still waiting fail. */
  @Override
  public void close() {
    closed = true;
    servers.values().forEach(DotUpstream::close);
  }
}
