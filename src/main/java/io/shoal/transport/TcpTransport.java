package io.shoal.transport;

import akka.Done;
import akka.NotUsed;
import akka.actor.typed.ActorSystem;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Framing;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Tcp;
import akka.util.ByteString;
import io.shoal.ingress.Ingress;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.AnswerRenderer;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * DNS over TCP (RFC 7766) with Akka Streams Tcp: 2-byte length framing, queries on one connection
 * answered concurrently and out of order, idle connections closed after a timeout.
 */
public final class TcpTransport {
  /** Queries of one connection in flight at once. */
  private static final int PIPELINE = 32;
  private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(10);

  private final Tcp.ServerBinding binding;

  private TcpTransport(Tcp.ServerBinding binding) {
    this.binding = binding;
  }

  /** Binds {@code address}; the stage fails with the bind error (e.g. address in use). */
  public static CompletionStage<TcpTransport> bind(
      ActorSystem<?> system, InetSocketAddress address, Ingress ingress, ServerMetrics metrics) {
    return Tcp.get(system)
        .bind(address.getHostString(), address.getPort(), 128, List.of(), true, Optional.of(IDLE_TIMEOUT))
        .to(Sink.foreach(conn -> conn.handleWith(connection(conn.remoteAddress(), ingress, metrics), system)))
        .run(system)
        .thenApply(TcpTransport::new);
  }

  private static Flow<ByteString, ByteString, NotUsed> connection(
      InetSocketAddress client, Ingress ingress, ServerMetrics metrics) {
    return Flow.<ByteString>create()
        .via(Framing.lengthField(2, 0, 65535 + 2, ByteOrder.BIG_ENDIAN))
        .map(frame -> frame.drop(2).toArray())
        .mapAsyncUnordered(PIPELINE, packet -> ingress.ask(packet, client))
        .filter(Optional::isPresent)
        .map(reply -> {
          byte[] wire = reply.get();
          metrics.answered("tcp", AnswerRenderer.rcode(wire));
          byte[] length = {(byte) (wire.length >>> 8), (byte) wire.length};
          return ByteString.fromArray(length).concat(ByteString.fromArray(wire));
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
