package io.shoal.transport;

import akka.Done;
import akka.NotUsed;
import akka.actor.typed.ActorSystem;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Framing;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import akka.stream.javadsl.Tcp;
import akka.util.ByteString;
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Ingress;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.AnswerRenderer;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DNS over TCP (RFC 7766) with Akka Streams Tcp: 2-byte length framing, queries on one connection
 * answered concurrently and out of order. Limits keep a hostile client from holding descriptors:
 * a cap on open connections, a deadline for each whole query (not each byte, so a client that
 * trickles bytes is closed too), and a cap on queries per connection.
 */
public final class TcpTransport {
  private static final Logger log = LoggerFactory.getLogger(TcpTransport.class);
  /** Queries of one connection in flight at once. */
  private static final int PIPELINE = 32;
  /** Closes a connection over the cap at once: no reads, no writes. */
  private static final Flow<ByteString, ByteString, NotUsed> CLOSE =
      Flow.fromSinkAndSource(Sink.cancelled(), Source.empty());

  private final Tcp.ServerBinding binding;

  private TcpTransport(Tcp.ServerBinding binding) {
    this.binding = binding;
  }

  /** Binds {@code address}; the stage fails with the bind error (e.g. address in use). */
  public static CompletionStage<TcpTransport> bind(
      ActorSystem<?> system, InetSocketAddress address, TcpSettings limits, Ingress ingress, ServerMetrics metrics) {
    long fileLimit = OpenFiles.limit();
    int cap = limits.connectionCap(fileLimit);
    log.info("TCP: at most {} connections open ({}; open-file limit {}), a query must arrive within {} ms, "
            + "{} queries per connection, backlog {}",
        cap, limits.maxConnections() == TcpSettings.AUTO ? "auto" : "configured", fileLimit,
        limits.idleTimeout().toMillis(), limits.maxQueries() == 0 ? "unlimited" : limits.maxQueries(),
        limits.backlog());
    AtomicInteger open = new AtomicInteger();
    // The JVM's TCP listener is dual-stack and Akka cannot ask for an IPv4 one: bound to an IPv4
    // address, connections from IPv6 clients are closed unanswered, as if nobody listened there.
    boolean ipv4Only = address.getAddress() instanceof Inet4Address;
    // No idle timeout on the bytes: the per-query deadline in connection() replaces it, and a
    // byte-level timer would let a client that sends one byte at a time stay forever.
    return Tcp.get(system)
        .bind(address.getHostString(), address.getPort(), limits.backlog(), List.of(), true, Optional.empty())
        .to(Sink.foreach(conn -> {
          if (ipv4Only && !(conn.remoteAddress().getAddress() instanceof Inet4Address)) {
            conn.handleWith(CLOSE, system);
            return;
          }
          if (open.incrementAndGet() > cap) {
            open.decrementAndGet();
            metrics.dropped(ServerMetrics.TCP_CONNECTION_LIMIT);
            conn.handleWith(CLOSE, system);
            return;
          }
          metrics.tcpConnections(open.get());
          conn.handleWith(
              connection(conn.remoteAddress(), limits, ingress, metrics)
                  .watchTermination((mat, done) -> {
                    done.whenComplete((d, e) -> metrics.tcpConnections(open.decrementAndGet()));
                    return mat;
                  }),
              system);
        }))
        .run(system)
        .thenApply(TcpTransport::new);
  }

  private static Flow<ByteString, ByteString, NotUsed> connection(
      InetSocketAddress client, TcpSettings limits, Ingress ingress, ServerMetrics metrics) {
    // Bytes received and bytes framed into whole queries, to tell a client that stopped
    // mid-query (counted) from one that is merely idle (closed quietly).
    long[] received = {0};
    long[] framed = {0};
    int[] queries = {0};
    int maxQueries = limits.maxQueries() == 0 ? Integer.MAX_VALUE : limits.maxQueries();
    return Flow.<ByteString>create()
        .map(bytes -> {
          received[0] += bytes.size();
          return bytes;
        })
        .via(Framing.lengthField(2, 0, 65535 + 2, ByteOrder.BIG_ENDIAN))
        .idleTimeout(limits.idleTimeout())
        .recoverWithRetries(1, TimeoutException.class, () -> {
          if (received[0] > framed[0]) {
            metrics.dropped(ServerMetrics.TCP_DEADLINE);
          }
          // Stop reading; queries already received are still answered, then the connection closes.
          return Source.empty();
        })
        .takeWhile(frame -> {
          if (++queries[0] > maxQueries) {
            metrics.dropped(ServerMetrics.TCP_QUERY_LIMIT);
            return false;
          }
          framed[0] += frame.size();
          return true;
        })
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
