package io.shoal.transport.tls;

import akka.Done;
import akka.actor.typed.ActorSystem;
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Ingress;
import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.TcpTransport;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletionStage;

/**
 * DNS over TLS (RFC 7858): the TCP listener's selector thread, with each connection behind TLS.
 * Each connection's engine is made with the certificate in use when its first bytes arrive (so a
 * reload reaches new connections); its decrypted stream is served exactly as a TCP connection is,
 * with the same limits, plus the handshake's deadline. A handshake that fails is counted
 * ({@code tls_handshake}), as is a client's TLS 1.2 renegotiation, which closes the connection.
 */
public final class DotTransport {
  /** The ALPN name of DNS over TLS (RFC 7858 section 3.2, IANA). */
  static final String ALPN = "dot";

  private final TcpTransport listener;

  private DotTransport(TcpTransport listener) {
    this.listener = listener;
  }

  /** Binds {@code address}; the stage fails with the bind error (e.g. address in use). */
  public static CompletionStage<DotTransport> bind(ActorSystem<?> system, InetSocketAddress address, TcpSettings limits,
      ServerCertificate certificate, Ingress ingress, ServerMetrics metrics) {
    return TcpTransport.bindTls(system, address, limits,
            () -> new CountedHandshakeEngine(certificate.serverEngine(ALPN),
                () -> metrics.dropped(ServerMetrics.TLS_HANDSHAKE),
                () -> metrics.dropped(ServerMetrics.TLS_RENEGOTIATION)),
            ingress, metrics)
        .thenApply(DotTransport::new);
  }

  public InetSocketAddress localAddress() {
    return listener.localAddress();
  }

  /** Stops accepting connections; open ones finish their queries. */
  public CompletionStage<Done> unbind() {
    return listener.unbind();
  }
}
