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
import java.util.concurrent.atomic.AtomicBoolean;
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
   * for all) so that the connection knows whether its own handshake finished: one that received
   * bytes and ended before it did is counted as a failed handshake; a client that connects and
   * leaves without a word (a TCP health check) is not, nor one closed by the handshake deadline
   * (counted as such). The finished handshake starts the connection's first-query deadline.
   */
  private static Flow<ByteString, ByteString, NotUsed> encrypted(StreamConnection connection,
      Flow<ByteString, ByteString, NotUsed> plain, ServerCertificate certificate, ServerMetrics metrics) {
    AtomicBoolean handshook = new AtomicBoolean();
    AtomicBoolean received = new AtomicBoolean();
    BidiFlow<ByteString, SslTlsOutbound, SslTlsInbound, ByteString, NotUsed> bytes = BidiFlow.fromFlows(
        Flow.<ByteString>create().map(SendBytes::new),
        Flow.<SslTlsInbound>create()
            .filter(in -> in instanceof SessionBytes)
            .map(in -> ((SessionBytes) in).bytes()));
    BidiFlow<ByteString, ByteString, ByteString, ByteString, NotUsed> tls = bytes.atop(
        TLS.create(() -> new CountedHandshakeEngine(certificate.serverEngine(ALPN), () -> { },
                () -> metrics.dropped(ServerMetrics.TLS_RENEGOTIATION)),
            session -> {
              handshook.set(true);
              connection.handshook();
            },
            TLSClosing.eagerClose()));
    return Flow.<ByteString>create()
        .map(b -> {
          received.lazySet(true);
          return b;
        })
        .via(tls.reversed().join(plain))
        .watchTermination((mat, done) -> {
          done.whenComplete((d, failure) -> {
            if (received.get() && !handshook.get() && !connection.closing()) {
              metrics.dropped(ServerMetrics.TLS_HANDSHAKE);
            }
          });
          return mat;
        });
  }

  public InetSocketAddress localAddress() {
    return binding.localAddress();
  }

  /** Stops accepting connections; open ones finish their queries. */
  public CompletionStage<Done> unbind() {
    return binding.unbind().thenApply(x -> Done.getInstance());
  }
}
