package io.shoal.transport;

import akka.Done;
import akka.actor.typed.ActorSystem;
import akka.stream.javadsl.Tcp;
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** DNS over TCP (RFC 7766) with Akka Streams Tcp; each connection is run by {@link StreamConnections}. */
public final class TcpTransport {
  private static final Logger log = LoggerFactory.getLogger(TcpTransport.class);

  private final Tcp.ServerBinding binding;

  private TcpTransport(Tcp.ServerBinding binding) {
    this.binding = binding;
  }

  /** Binds {@code address}; the stage fails with the bind error (e.g. address in use). */
  public static CompletionStage<TcpTransport> bind(
      ActorSystem<?> system, InetSocketAddress address, TcpSettings limits, Ingress ingress, ServerMetrics metrics) {
    long fileLimit = OpenFiles.limit();
    int cap = limits.connectionCap(fileLimit, Runtime.getRuntime().maxMemory());
    log.info("TCP: at most {} connections open ({}; open-file limit {}, heap {} MB), a first query must arrive "
            + "within {} ms, each query within {} ms, {} queries per connection, backlog {}",
        cap, limits.maxConnections() == TcpSettings.AUTO ? "auto" : "configured", fileLimit,
        Runtime.getRuntime().maxMemory() >> 20, limits.firstQueryTimeout().toMillis(),
        limits.idleTimeout().toMillis(), limits.maxQueries() == 0 ? "unlimited" : limits.maxQueries(),
        limits.backlog());
    StreamConnections connections = new StreamConnections(system, Protocol.TCP, limits, cap, ingress, metrics);
    return StreamConnections.listen(system, address, limits.backlog(), connections::accept)
        .thenApply(TcpTransport::new);
  }

  public InetSocketAddress localAddress() {
    return binding.localAddress();
  }

  /** Stops accepting connections; open ones finish their queries. */
  public CompletionStage<Done> unbind() {
    return binding.unbind().thenApply(x -> Done.getInstance());
  }
}
