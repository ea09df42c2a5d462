package io.shoal.transport.https;

import akka.Done;
import akka.actor.typed.ActorSystem;
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.TcpTransport;
import io.shoal.transport.tls.CountedHandshakeEngine;
import io.shoal.transport.tls.ServerCertificate;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletionStage;

/**
 * DNS over HTTPS (RFC 8484) on the stream listener's own selector thread, as DoT is: each
 * connection's TLS is DoT's (the certificate in use when its first bytes arrive, the same
 * provider, handshake failures and renegotiation counted), ALPN offers "h2" then "http/1.1", and
 * the connection speaks HTTP/2 or HTTP/1.1 accordingly ({@link DohConnection}). Its connections
 * follow the listeners' limits: a cap of their own, the handshake, first-request and idle deadlines.
 */
public final class DohTransport {
  private final TcpTransport listener;

  private DohTransport(TcpTransport listener) {
    this.listener = listener;
  }

  /**
   * Binds {@code address}, over TLS with {@code certificate}'s current context for each new
   * connection, or over plain HTTP when {@code certificate} is null; the stage fails with the
   * bind error.
   */
  public static CompletionStage<DohTransport> bind(ActorSystem<?> system, InetSocketAddress address,
      ServerCertificate certificate, TcpSettings limits, Ingress ingress, ServerMetrics metrics) {
    DohExchange exchange = new DohExchange(ingress, metrics);
    return TcpTransport.bind(system, address, limits, Protocol.DOH,
            certificate == null ? null : () -> new CountedHandshakeEngine(certificate.serverEngine("h2", "http/1.1"),
                () -> metrics.dropped(ServerMetrics.TLS_HANDSHAKE),
                () -> metrics.dropped(ServerMetrics.TLS_RENEGOTIATION)),
            (listener, channel, client, now) -> new DohConnection(listener, exchange, channel, client, now),
            ingress, metrics)
        .thenApply(DohTransport::new);
  }

  public InetSocketAddress localAddress() {
    return listener.localAddress();
  }

  /** Stops accepting connections; requests in flight are answered. */
  public CompletionStage<Done> unbind() {
    return listener.unbind();
  }
}
