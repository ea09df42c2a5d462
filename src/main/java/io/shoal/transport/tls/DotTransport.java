package io.shoal.transport.tls;

import akka.Done;
import akka.actor.typed.ActorSystem;
import akka.NotUsed;
import akka.stream.TLSClosing;
import akka.stream.TLSProtocol.SendBytes;
import akka.stream.TLSProtocol.SessionBytes;
import akka.stream.TLSProtocol.SslTlsInbound;
import akka.stream.TLSProtocol.SslTlsOutbound;
import akka.stream.javadsl.BidiFlow;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.TLS;
import akka.stream.javadsl.Tcp;
import akka.util.ByteString;
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import io.shoal.transport.OpenFiles;
import io.shoal.transport.StreamConnection;
import io.shoal.transport.StreamConnections;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DNS over TLS (RFC 7858) on Akka Streams Tcp and TLS: each connection's TLS engine is made with the
 * certificate in use when it is accepted (so a reload reaches new connections), then its decrypted
 * stream is run by {@link StreamConnections} exactly as a TCP connection is, with the same limits.
 */
public final class DotTransport {
  private static final Logger log = LoggerFactory.getLogger(DotTransport.class);
  /** The ALPN name of DNS over TLS (RFC 7858 section 3.2, IANA). */
  static final String ALPN = "dot";

  private final Tcp.ServerBinding binding;

  private DotTransport(Tcp.ServerBinding binding) {
    this.binding = binding;
  }

  /** Binds {@code address}; the stage fails with the bind error (e.g. address in use). */
  public static CompletionStage<DotTransport> bind(ActorSystem<?> system, InetSocketAddress address, TcpSettings limits,
      ServerCertificate certificate, Ingress ingress, ServerMetrics metrics) {
    int cap = limits.connectionCap(OpenFiles.limit(), Runtime.getRuntime().maxMemory());
    log.info("DoT: at most {} connections open, a handshake must finish within {} ms, the tcp_* limits otherwise",
        cap, limits.handshakeTimeout().toMillis());
    StreamConnections connections = new StreamConnections(system, Protocol.DOT, limits, cap, ingress, metrics);
    return StreamConnections.listen(system, address, limits.backlog(),
            client -> connections.accept(client, (connection, plain) -> encrypted(connection, plain, certificate, metrics)))
        .thenApply(DotTransport::new);
  }

  /**
   * {@code plain} behind TLS, with an engine made now from the certificate in use. TLS is put
   * together here for each connection (Tcp.bindWithTls would do the same with one engine supplier
   * for all) so that the engine can tell its own connection what happened: a handshake that
   * fails (the engine sees it, see {@link CountedHandshakeEngine}) is counted as tls_handshake
   * unless the connection was already being closed for a counted reason (its handshake
   * deadline), and a finished handshake starts the connection's first-query deadline. The count
   * is taken where the failure is seen, not when the streams end, so no close that follows it
   * (the stream's linger, the socket's end) can come first and hide it. The engine and the TLS
   * stage are made when the client's first bytes arrive.
   */
  private static Flow<ByteString, ByteString, NotUsed> encrypted(StreamConnection connection,
      Flow<ByteString, ByteString, NotUsed> plain, ServerCertificate certificate, ServerMetrics metrics) {
    BidiFlow<ByteString, SslTlsOutbound, SslTlsInbound, ByteString, NotUsed> bytes = BidiFlow.fromFlows(
        Flow.<ByteString>create().map(SendBytes::new),
        Flow.<SslTlsInbound>create()
            .filter(in -> in instanceof SessionBytes)
            .map(in -> ((SessionBytes) in).bytes()));
    BidiFlow<ByteString, ByteString, ByteString, ByteString, NotUsed> tls = bytes.atop(
        TLS.create(() -> new CountedHandshakeEngine(certificate.serverEngine(ALPN),
                () -> connection.ending(ServerMetrics.TLS_HANDSHAKE),
                () -> metrics.dropped(ServerMetrics.TLS_RENEGOTIATION)),
            session -> connection.handshook(),
            TLSClosing.eagerClose()));
    // Made when the client's first bytes arrive: a connection that never says anything (a
    // health check, a holder) costs no engine, no TLS stage and no buffers.
    Flow<ByteString, ByteString, NotUsed> encrypted = tls.reversed().join(plain);
    return Flow.lazyFlow(() -> encrypted).mapMaterializedValue(m -> NotUsed.getInstance());
  }

  public InetSocketAddress localAddress() {
    return binding.localAddress();
  }

  /** Stops accepting connections; open ones finish their queries. */
  public CompletionStage<Done> unbind() {
    return binding.unbind().thenApply(x -> Done.getInstance());
  }
}
