package io.shoal.transport;

import akka.actor.Cancellable;
import akka.stream.KillSwitches;
import akka.stream.SharedKillSwitch;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One open connection of the DoH listener as its listener sees it: the slot it
 * holds against the cap from accept to close, how far it has got (handshake, first query), what
 * it has in flight, and the switch that closes it, whichever layer notices a deadline.
 */
public final class StreamConnection {
  final InetSocketAddress client;
  /** Sits on both directions of the connection's TCP bytes: shut, it closes the socket. */
  final SharedKillSwitch close = KillSwitches.shared("dns-stream");
  final AtomicBoolean evicting = new AtomicBoolean();
  /** Set once the connection is being closed, for a counted reason or none: a deadline that fires later counts nothing. */
  final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final StreamConnections listener;
  /** When its last query arrived or was answered (or it was accepted), System.nanoTime(). */
  volatile long lastActive;
  volatile boolean handshook;
  volatile boolean asked;
  /** The deadline now pending (handshake, first query or idle), cancelled at close. */
  volatile Cancellable deadline;

  StreamConnection(StreamConnections listener, InetSocketAddress client, boolean tls) {
    this.listener = listener;
    this.client = client;
    this.lastActive = System.nanoTime();
    this.handshook = !tls;
  }

  /** The client's address and port, which name the connection on its listener. */
  public InetSocketAddress client() {
    return client;
  }

  /** Its TLS handshake finished: from now it has tcp_first_query_timeout to ask something. */
  public void handshook() {
    if (!handshook) {
      handshook = true;
      listener.awaitFirstQuery(this);
    }
  }

  /** A query (DoH: a request) arrived whole. */
  public void asked() {
    asked = true;
    inFlight.incrementAndGet();
    lastActive = System.nanoTime();
  }

  /** A query asked on it was answered (or dropped). */
  public void answered() {
    inFlight.decrementAndGet();
    lastActive = System.nanoTime();
  }

  /** True once the listener is closing it (a deadline, an eviction, its stream's end). */
  public boolean closing() {
    return closed.get();
  }

  /** No query in flight, and not already being closed. */
  boolean idle() {
    return inFlight.get() == 0 && !evicting.get() && !closed.get();
  }

  /**
   * The connection is ending by itself for {@code reason} (its stream failed): counted in
   * shoal_dropped_total unless it was already being closed (each connection is counted for one
   * reason at most). Its stream's end closes the socket.
   */
  public void ending(String reason) {
    if (closed.compareAndSet(false, true)) {
      listener.dropped(reason);
    }
  }

  /**
   * Closes the socket now, counting {@code reason} in shoal_dropped_total unless it is null or the
   * connection was already being closed (each connection is counted for one reason at most).
   */
  public void close(String reason) {
    if (closed.compareAndSet(false, true) && reason != null) {
      listener.dropped(reason);
    }
    Cancellable pending = deadline;
    if (pending != null) {
      pending.cancel();
    }
    close.shutdown();
  }
}
