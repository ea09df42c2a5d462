package io.shoal.transport;

import akka.NotUsed;
import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Scheduler;
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
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Function;
import scala.concurrent.ExecutionContext;

/**
 * The connections of one stream listener (TCP, DoT or DoH) and, for DNS streams, RFC 7766 framing
 * with queries answered concurrently and out of order. One accounting for every listener: a
 * connection holds a slot against the cap from accept to the socket's close, TLS handshake
 * included, and meets the same deadlines (handshake, first query, idle), each closing the socket
 * itself rather than one layer of it. A new connection over the cap takes the place of the oldest
 * open one that never asked a query, else of the one idle the longest (no query in flight), as
 * Unbound and Knot do under TCP pressure, so
 * reconnecting in a loop or holding silent connections cannot keep honest clients out; a deadline
 * for each whole query (not each byte, so a client that trickles bytes is closed too); a cap on
 * queries per connection; a message shorter than a DNS header closes the connection at once.
 */
public final class StreamConnections {
  /** Queries of one connection in flight at once. */
  private static final int PIPELINE = 32;
  /** A length prefix and a DNS header: anything shorter is not a query. */
  private static final int SHORTEST_FRAME = 2 + 12;
  /**
   * How long a TLS connection whose DNS stream has ended may take to send its last answers and
   * its close_notify before its socket is closed regardless.
   */
  private static final Duration LINGER = Duration.ofSeconds(1);
  /** Closes a connection at once: no reads, no writes. */
  public static final Flow<ByteString, ByteString, NotUsed> CLOSE =
      Flow.fromSinkAndSource(Sink.cancelled(), Source.empty());

  private final Protocol protocol;
  private final TcpSettings limits;
  private final int cap;
  private final Ingress ingress;
  private final ServerMetrics metrics;
  private final Scheduler scheduler;
  private final ExecutionContext timers;
  /** Set for DoH, whose idleness only its requests show: no stream stage sees them. */
  private final boolean idleByRequests;
  private final AtomicInteger open = new AtomicInteger();
  private final ConcurrentMap<InetSocketAddress, StreamConnection> connections = new ConcurrentHashMap<>();
  /**
   * Connections in the order they were accepted, until they ask their first query: who eviction
   * turns to first (a client that never asked, its handshake unfinished or silent after it, is
   * the cheapest to lose and the likeliest holder), oldest first, without looking at every open
   * connection. Entries that asked or closed are dropped as eviction meets them, or swept when
   * the queue grows past twice the cap.
   */
  private final ConcurrentLinkedQueue<StreamConnection> unasked = new ConcurrentLinkedQueue<>();
  private final AtomicInteger unaskedSize = new AtomicInteger();

  /** The connections of a DNS stream listener (TCP or DoT). */
  public StreamConnections(ActorSystem<?> system, Protocol protocol, TcpSettings limits, int cap, Ingress ingress,
      ServerMetrics metrics) {
    this(system, protocol, limits, cap, ingress, metrics, false);
  }

  private StreamConnections(ActorSystem<?> system, Protocol protocol, TcpSettings limits, int cap, Ingress ingress,
      ServerMetrics metrics, boolean idleByRequests) {
    this.protocol = protocol;
    this.limits = limits;
    this.cap = cap;
    this.ingress = ingress;
    this.metrics = metrics;
    this.scheduler = system.scheduler();
    this.timers = system.executionContext();
    this.idleByRequests = idleByRequests;
  }

  /**
   * The connections of a listener that frames its requests itself (DoH on akka-http): it takes
   * slots with {@link #open}, wraps each socket with {@link #guardSocket} and reports requests
   * with {@link StreamConnection#asked()} and {@link StreamConnection#answered()}.
   */
  public static StreamConnections forRequests(ActorSystem<?> system, Protocol protocol, TcpSettings limits, int cap,
      Ingress ingress, ServerMetrics metrics) {
    return new StreamConnections(system, protocol, limits, cap, ingress, metrics, true);
  }

  /**
   * The flow to handle a plain TCP connection just accepted from {@code client} with: {@link
   * #CLOSE} for a denied client or when the cap is reached and no open connection is idle.
   */
  public Flow<ByteString, ByteString, NotUsed> accept(InetSocketAddress client) {
    return accept(client, null);
  }

  /**
   * As {@link #accept(InetSocketAddress)}, with the DNS stream put behind {@code tls}: given the
   * connection (to report its handshake) and the DNS stream in clear, it returns the flow of the
   * socket's bytes. The connection's slot, deadlines and close cover the socket, not the stream.
   */
  public Flow<ByteString, ByteString, NotUsed> accept(InetSocketAddress client,
      BiFunction<StreamConnection, Flow<ByteString, ByteString, NotUsed>, Flow<ByteString, ByteString, NotUsed>> tls) {
    if (!ingress.admitsConnection(client.getAddress())) {
      return CLOSE;
    }
    StreamConnection connection = open(client, tls != null);
    if (connection == null) {
      return CLOSE;
    }
    Flow<ByteString, ByteString, NotUsed> dns = framed(client, connection);
    if (tls != null) {
      // The DNS stream's deadlines start with its first decrypted bytes: until then the handshake
      // and first-query deadlines run, and say which one a silent client missed.
      Flow<ByteString, ByteString, NotUsed> eager = dns;
      dns = Flow.lazyFlow(() -> eager).mapMaterializedValue(m -> NotUsed.getInstance());
      // The TLS stage may keep the socket open after the DNS stream ended (before its handshake
      // finished, nothing closes it): the socket gets a moment for the last answers, then closes.
      dns = dns.watchTermination((mat, done) -> {
        done.whenComplete((d, e) -> scheduler.scheduleOnce(LINGER, () -> connection.close(null), timers));
        return mat;
      });
    }
    return guard(connection, tls == null ? dns : tls.apply(connection, dns), true);
  }

  /**
   * Takes a slot for a connection just accepted from {@code client} (its deadlines start now), or
   * returns null, counted, when the cap is reached and no open connection is idle. The caller
   * must run the socket through {@link #guardSocket} or the handler {@link #accept} returns.
   */
  public StreamConnection open(InetSocketAddress client, boolean tls) {
    if (open.incrementAndGet() > cap && !evictIdle()) {
      open.decrementAndGet();
      metrics.dropped(ServerMetrics.TCP_CONNECTION_LIMIT);
      return null;
    }
    metrics.streamConnections(protocol.label(), open.get());
    StreamConnection connection = new StreamConnection(this, client, tls);
    connections.put(client, connection);
    queueUnasked(connection);
    if (tls) {
      schedule(connection, limits.handshakeTimeout(), () -> {
        if (!connection.handshook) {
          connection.close(ServerMetrics.TLS_HANDSHAKE_TIMEOUT);
        }
      });
    } else {
      awaitFirstQuery(connection);
    }
    return connection;
  }

  /** The open connection of {@code client} (address and port), or null. */
  public StreamConnection connection(InetSocketAddress client) {
    return client == null ? null : connections.get(client);
  }

  /**
   * {@code socket} (the flow of a connection's TCP bytes: what goes in is written, what comes out
   * was read) with {@code connection}'s switch on both directions and its slot given back once
   * both have ended. The socket is closed as soon as the writes end.
   */
  public Flow<ByteString, ByteString, NotUsed> guardSocket(StreamConnection connection,
      Flow<ByteString, ByteString, NotUsed> socket) {
    return guard(connection, socket, false);
  }

  /**
   * {@code inner} between two watch stages and the connection's switch. {@code handler}: inner
   * takes the bytes read and gives the bytes to write (the socket is closed when it stops
   * giving); else inner is the socket itself (closed when what it is given ends).
   */
  private Flow<ByteString, ByteString, NotUsed> guard(StreamConnection connection,
      Flow<ByteString, ByteString, NotUsed> inner, boolean handler) {
    AtomicInteger ends = new AtomicInteger(2);
    return Flow.<ByteString>create()
        .watchTermination((mat, done) -> {
          done.whenComplete((d, e) -> {
            if (!handler) {
              connection.close(null);
            }
            ended(connection, ends);
          });
          return mat;
        })
        .via(connection.close.flow())
        .via(inner)
        .via(connection.close.flow())
        .watchTermination((mat, done) -> {
          done.whenComplete((d, e) -> {
            if (handler) {
              connection.close(null);
            }
            ended(connection, ends);
          });
          return mat;
        });
  }

  /** One direction of a connection ended; once both have, its socket is closed and its slot free. */
  private void ended(StreamConnection connection, AtomicInteger ends) {
    if (ends.decrementAndGet() == 0) {
      connection.close(null);
      connections.remove(connection.client, connection);
      metrics.streamConnections(protocol.label(), open.decrementAndGet());
    }
  }

  /** Starts the first-query deadline of a connection accepted in clear, or whose handshake just finished. */
  void awaitFirstQuery(StreamConnection connection) {
    schedule(connection, limits.firstQueryTimeout(), () -> {
      if (!connection.asked) {
        connection.close(ServerMetrics.TCP_FIRST_QUERY_TIMEOUT);
      } else if (idleByRequests) {
        awaitIdle(connection);
      }
    });
  }

  /** DoH's idle deadline: no request in flight and none for tcp_idle_timeout closes the connection. */
  private void awaitIdle(StreamConnection connection) {
    long idleNanos = limits.idleTimeout().toNanos();
    long quiet = System.nanoTime() - connection.lastActive;
    if (connection.idle() && quiet >= idleNanos) {
      connection.close(ServerMetrics.TCP_IDLE_TIMEOUT);
      return;
    }
    // Busy now: look again a whole period later; quiet for a while: when the period runs out.
    long wait = connection.idle() ? idleNanos - quiet : idleNanos;
    schedule(connection, Duration.ofNanos(Math.max(wait, 1_000_000)), () -> awaitIdle(connection));
  }

  private void schedule(StreamConnection connection, Duration after, Runnable check) {
    if (connection.closed.get()) {
      return;
    }
    Cancellable pending = scheduler.scheduleOnce(after, check, timers);
    connection.deadline = pending;
    if (connection.closed.get()) {
      pending.cancel();
    }
  }

  void dropped(String reason) {
    metrics.dropped(reason);
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

  /**
   * A reply for a stream (TCP, DoT, DoH) as it goes out: one cut to its header and question with
   * TC=1 because the whole answer is over 65535 bytes becomes SERVFAIL. TC=1 tells a client to ask
   * again over TCP (RFC 7766 section 5), which a client already on a stream cannot do, and a
   * truncated reply with no records reads as NOERROR with nothing in it, a wrong answer; the
   * honest reply is that the server cannot give this one (as for any answer it cannot send).
   */
  public static byte[] untruncated(byte[] wire) {
    if (wire.length >= 4 && (wire[2] & 0x02) != 0) {
      wire[2] &= ~0x02;
      wire[3] = (byte) ((wire[3] & 0xF0) | 2);
    }
    return wire;
  }

  /** Connections open now, those being closed for a newcomer included. */
  public int open() {
    return open.get();
  }

  private void queueUnasked(StreamConnection connection) {
    unasked.add(connection);
    if (unaskedSize.incrementAndGet() > 2 * cap + 64) {
      // Connections that asked and stayed open pile up behind ones that did not: sweep them out.
      unasked.removeIf(c -> c.asked || c.closed.get());
      unaskedSize.set(unasked.size());
    }
  }

  /**
   * Makes room for a newcomer: closes the oldest connection that never asked a query, else the
   * one idle the longest (no query in flight); true when one was closed. Runs only when the cap
   * is reached, so it costs nothing while there is room; the first choice takes no scan, so a
   * flood of silent connections costs each newcomer a queue poll, not a look at every open one.
   */
  private boolean evictIdle() {
    // The queue holds at most 2 x cap + 64 entries (see queueUnasked): each is looked at once.
    for (int polls = 0, most = unaskedSize.get() + 1; polls < most; polls++) {
      StreamConnection first = unasked.poll();
      if (first == null) {
        break;
      }
      unaskedSize.decrementAndGet();
      if (!first.asked && first.idle() && first.evicting.compareAndSet(false, true)) {
        first.close(ServerMetrics.TCP_IDLE_EVICTED);
        return true;
      }
    }
    StreamConnection oldest = null;
    for (StreamConnection c : connections.values()) {
      if (c.idle() && (oldest == null || c.lastActive - oldest.lastActive < 0)) {
        oldest = c;
      }
    }
    // Two newcomers may pick the same connection; only one of them closes it.
    if (oldest == null || !oldest.evicting.compareAndSet(false, true)) {
      return false;
    }
    oldest.close(ServerMetrics.TCP_IDLE_EVICTED);
    return true;
  }

  private Flow<ByteString, ByteString, NotUsed> framed(InetSocketAddress client, StreamConnection connection) {
    // Bytes received and bytes framed into whole queries, to tell a client that stopped
    // mid-query (counted) from one that is merely idle (closed quietly).
    long[] received = {0};
    long[] framed = {0};
    int[] queries = {0};
    int maxQueries = limits.maxQueries() == 0 ? Integer.MAX_VALUE : limits.maxQueries();
    String label = protocol.label();
    return Flow.<ByteString>create()
        .map(bytes -> {
          received[0] += bytes.size();
          return bytes;
        })
        .via(Framing.lengthField(2, 0, 65535 + 2, ByteOrder.BIG_ENDIAN))
        // No idle timeout on the bytes: a byte-level timer would let a client that sends one byte
        // at a time stay forever. This one runs from one whole message to the next.
        .idleTimeout(limits.idleTimeout())
        .recoverWithRetries(1, TimeoutException.class, () -> {
          // Marked closed now: the first-query deadline, due later, must not count it again.
          if (connection.closed.compareAndSet(false, true)) {
            metrics.dropped(received[0] > framed[0] ? ServerMetrics.TCP_DEADLINE
                : connection.asked ? ServerMetrics.TCP_IDLE_TIMEOUT : ServerMetrics.TCP_FIRST_QUERY_TIMEOUT);
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
          byte[] wire = untruncated(reply.get());
          metrics.answered(label, AnswerRenderer.rcode(wire));
          byte[] length = {(byte) (wire.length >>> 8), (byte) wire.length};
          return ByteString.fromArray(length).concat(ByteString.fromArray(wire));
        });
  }
}
