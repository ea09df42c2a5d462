package io.shoal.transport;

import akka.NotUsed;
import akka.actor.Cancellable;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Scheduler;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Tcp;
import akka.util.ByteString;
import io.shoal.config.TcpSettings;
import io.shoal.ingress.Protocol;
import io.shoal.metrics.ServerMetrics;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import scala.concurrent.ExecutionContext;

/**
 * The connections of the DoH listener (akka-http frames its requests itself): a connection holds
 * a slot against the cap from accept to the socket's close, TLS handshake included, and meets the
 * same deadlines as a TCP or DoT connection (handshake, first request, idle), each closing the
 * socket itself rather than one layer of it. A new connection over the cap takes the place of the
 * oldest open one that never asked, else of the one idle the longest (no request in flight), as
 * Unbound and Knot do under TCP pressure, so reconnecting in a loop or holding silent connections
 * cannot keep honest clients out. (DNS over TCP and over TLS run on {@link TcpTransport}.)
 */
public final class StreamConnections {
  private final Protocol protocol;
  private final TcpSettings limits;
  private final int cap;
  private final ServerMetrics metrics;
  private final Scheduler scheduler;
  private final ExecutionContext timers;
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

  private StreamConnections(ActorSystem<?> system, Protocol protocol, TcpSettings limits, int cap,
      ServerMetrics metrics) {
    this.protocol = protocol;
    this.limits = limits;
    this.cap = cap;
    this.metrics = metrics;
    this.scheduler = system.scheduler();
    this.timers = system.executionContext();
  }

  /**
   * The connections of a listener that frames its requests itself (DoH on akka-http): it takes
   * slots with {@link #open}, wraps each socket with {@link #guardSocket} and reports requests
   * with {@link StreamConnection#asked()} and {@link StreamConnection#answered()}.
   */
  public static StreamConnections forRequests(ActorSystem<?> system, Protocol protocol, TcpSettings limits, int cap,
      ServerMetrics metrics) {
    return new StreamConnections(system, protocol, limits, cap, metrics);
  }

  /**
   * Takes a slot for a connection just accepted from {@code client} (its deadlines start now), or
   * returns null, counted, when the cap is reached and no open connection is idle. The caller
   * must run the socket through {@link #guardSocket}.
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
    AtomicInteger ends = new AtomicInteger(2);
    return Flow.<ByteString>create()
        .watchTermination((mat, done) -> {
          done.whenComplete((d, e) -> {
            connection.close(null);
            ended(connection, ends);
          });
          return mat;
        })
        .via(connection.close.flow())
        .via(socket)
        .via(connection.close.flow())
        .watchTermination((mat, done) -> {
          done.whenComplete((d, e) -> ended(connection, ends));
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
      } else {
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
}
