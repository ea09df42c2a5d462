package io.shoal.transport;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;

/**
 * One connection of a {@link TcpTransport} as its selector thread drives it: DNS over TCP or TLS
 * ({@link TcpConnection}) or DNS over HTTPS; touched by that thread only.
 */
public interface ListenerConnection {
  /** Registers the connection's socket for reading. */
  void register(Selector selector) throws IOException;

  /** The socket is ready for what the connection asked the selector to watch. */
  void ready(SelectionKey key);

  /** Closes the connection if one of its deadlines ran out at {@code now}. */
  void checkDeadline(long now, long handshakeNanos, long firstQueryNanos, long idleNanos);

  /** When it was accepted (System.nanoTime()). */
  long accepted();

  /** True once it sent a whole query (or request): eviction turns to connections that have not first. */
  boolean asked();

  /** No query in flight and nothing to write: eviction may take it. */
  boolean idle();

  boolean closed();

  /** When a query last arrived or was answered. */
  long lastActive();

  /** Closes the socket now. */
  void close();

  /** Makes a listener's connection for a socket it just accepted. */
  @FunctionalInterface
  interface Opener {
    ListenerConnection open(TcpTransport listener, java.nio.channels.SocketChannel channel,
        java.net.InetSocketAddress client, long now);
  }
}
