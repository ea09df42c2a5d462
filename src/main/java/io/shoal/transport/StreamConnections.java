package io.shoal.transport;

import akka.NotUsed;
import akka.actor.typed.ActorSystem;
import akka.stream.KillSwitches;
import akka.stream.SharedKillSwitch;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Framing;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import akka.stream.javadsl.Tcp;
import akka.util.ByteString;
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Ingress;
import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.AnswerRenderer;
import io.shoal.wire.Padding;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The connections of one DNS stream listener (TCP, or TLS once decrypted): RFC 7766 framing with
 * queries answered concurrently and out of order, and the limits that keep a hostile client from
 * holding a slot. A cap on open connections, where a new connection over the cap takes the place
 * of the open one idle the longest (no query in flight), as Unbound and Knot do under TCP pressure,
 * so reconnecting in a loop cannot keep honest clients out; a deadline for each whole query (not
 * each byte, so a client that trickles bytes is closed too); a cap on queries per connection; a
 * message shorter than a DNS header closes the connection at once.
 */
public final class StreamConnections {
  /** Queries of one connection in flight at once. */
  private static final int PIPELINE = 32;
  /** A length prefix and a DNS header: anything shorter is not a query. */
  private static final int SHORTEST_FRAME = 2 + 12;
  /** Closes a connection at once: no reads, no writes. */
  public static final Flow<ByteString, ByteString, NotUsed> CLOSE =
      Flow.fromSinkAndSource(Sink.cancelled(), Source.empty());

  private final Protocol protocol;
  private final TcpSettings limits;
  private final int cap;
  private final Ingress ingress;
  private final ServerMetrics metrics;
  private final AtomicInteger open = new AtomicInteger();
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();

  public StreamConnections(Protocol protocol, TcpSettings limits, int cap, Ingress ingress, ServerMetrics metrics) {
    this.protocol = protocol;
    this.limits = limits;
    this.cap = cap;
    this.ingress = ingress;
    this.metrics = metrics;
  }

  /**
   * The flow to handle a connection just accepted from {@code client} with: {@link #CLOSE} for a
   * denied client or when the cap is reached and no open connection is idle.
   */
  public Flow<ByteString, ByteString, NotUsed> accept(InetSocketAddress client) {
    if (!ingress.admitsConnection(client.getAddress())) {
      return CLOSE;
    }
    if (open.incrementAndGet() > cap && !evictIdle()) {
      open.decrementAndGet();
      metrics.dropped(ServerMetrics.TCP_CONNECTION_LIMIT);
      return CLOSE;
    }
    metrics.streamConnections(protocol.label(), open.get());
    Connection connection = new Connection(System.nanoTime());
    connections.add(connection);
    return framed(client, connection)
        .watchTermination((mat, done) -> {
          done.whenComplete((d, e) -> {
            connections.remove(connection);
            metrics.streamConnections(protocol.label(), open.decrementAndGet());
          });
          return mat;
        });
  }

  /**
   * Binds a stream listener on {@code address} whose accepted connections are each handled with
   * {@code handler.apply(client)}; the stage fails with the bind error (e.g. address in use).
   */
  public static CompletionStage<Tcp.ServerBinding> listen(ActorSystem<?> system, InetSocketAddress address, int backlog,
      Function<InetSocketAddress, Flow<ByteString, ByteString, NotUsed>> handler) {
    // The JVM's TCP listener is dual-stack and Akka cannot ask for an IPv4 one: bound to an IPv4
    // address, connections from IPv6 clients are closed unanswered, as if nobody listened there.
    boolean ipv4Only = address.getAddress() instanceof Inet4Address;
    return Tcp.get(system)
        .bind(address.getHostString(), address.getPort(), backlog, List.of(), true, Optional.empty())
        .to(Sink.foreach(conn -> conn.handleWith(
            ipv4Only && !(conn.remoteAddress().getAddress() instanceof Inet4Address)
                ? CLOSE : handler.apply(conn.remoteAddress()),
            system)))
        .run(system);
  }

  /** Connections open now, those being closed for a newcomer included. */
  public int open() {
    return open.get();
  }

  /**
   * Closes the connection that has been idle the longest, if any is; true when one was. Runs only
   * when the cap is reached, so the scan costs nothing while there is room.
   */
  private boolean evictIdle() {
    Connection oldest = null;
    for (Connection c : connections) {
      if (c.idle() && (oldest == null || c.lastActive - oldest.lastActive < 0)) {
        oldest = c;
      }
    }
    // Two newcomers may pick the same connection; only one of them closes it.
    if (oldest == null || !oldest.evicting.compareAndSet(false, true)) {
      return false;
    }
    metrics.dropped(ServerMetrics.TCP_IDLE_EVICTED);
    oldest.close.shutdown();
    return true;
  }

  private Flow<ByteString, ByteString, NotUsed> framed(InetSocketAddress client, Connection connection) {
    // Bytes received and bytes framed into whole queries, to tell a client that stopped
    // mid-query (counted) from one that is merely idle (closed quietly).
    long[] received = {0};
    long[] framed = {0};
    int[] queries = {0};
    int maxQueries = limits.maxQueries() == 0 ? Integer.MAX_VALUE : limits.maxQueries();
    String label = protocol.label();
    return Flow.<ByteString>create()
        .via(connection.close.flow())
        .map(bytes -> {
          received[0] += bytes.size();
          return bytes;
        })
        .via(Framing.lengthField(2, 0, 65535 + 2, ByteOrder.BIG_ENDIAN))
        // No idle timeout on the bytes: a byte-level timer would let a client that sends one byte
        // at a time stay forever. This one runs from one whole message to the next.
        .idleTimeout(limits.idleTimeout())
        .recoverWithRetries(1, TimeoutException.class, () -> {
          if (received[0] > framed[0]) {
            metrics.dropped(ServerMetrics.TCP_DEADLINE);
          }
          // Stop reading; queries already received are still answered, then the connection closes.
          return Source.empty();
        })
        .takeWhile(frame -> {
          if (frame.size() < SHORTEST_FRAME) {
            // Empty or headerless messages are framing errors, not queries: they must not restart
            // the deadline or count against the query cap while the client holds its slot.
            metrics.dropped(ServerMetrics.MALFORMED);
            return false;
          }
          if (++queries[0] > maxQueries) {
            metrics.dropped(ServerMetrics.TCP_QUERY_LIMIT);
            return false;
          }
          framed[0] += frame.size();
          connection.asked();
          return true;
        })
        .map(frame -> frame.drop(2).toArray())
        .mapAsyncUnordered(PIPELINE, packet -> protocol == Protocol.DOT
            ? ingress.ask(packet, client, protocol).thenApply(reply -> Padding.forQuery(packet, reply))
            : ingress.ask(packet, client, protocol))
        .map(reply -> {
          connection.answered();
          return reply;
        })
        .filter(Optional::isPresent)
        .map(reply -> {
          byte[] wire = reply.get();
          metrics.answered(label, AnswerRenderer.rcode(wire));
          byte[] length = {(byte) (wire.length >>> 8), (byte) wire.length};
          return ByteString.fromArray(length).concat(ByteString.fromArray(wire));
        });
  }

  /** One open connection as eviction sees it. */
  private static final class Connection {
    final SharedKillSwitch close = KillSwitches.shared("dns-stream");
    final AtomicBoolean evicting = new AtomicBoolean();
    final AtomicInteger inFlight = new AtomicInteger();
    /** When its last query arrived or was answered (or it was accepted), System.nanoTime(). */
    volatile long lastActive;

    Connection(long now) {
      this.lastActive = now;
    }

    void asked() {
      inFlight.incrementAndGet();
      lastActive = System.nanoTime();
    }

    void answered() {
      inFlight.decrementAndGet();
      lastActive = System.nanoTime();
    }

    boolean idle() {
      return inFlight.get() == 0 && !evicting.get();
    }
  }
}
