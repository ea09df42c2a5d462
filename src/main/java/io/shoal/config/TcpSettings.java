package io.shoal.config;

import java.time.Duration;

/**
 * Limits of the stream listeners, TCP, DoT and DoH ({@code shoal.listen.tcp_*} and
 * {@code shoal.listen.tls_handshake_timeout}); each listener has a cap of its own of this size.
 */
public record TcpSettings(int maxConnections, Duration idleTimeout, int maxQueries, int backlog,
    Duration handshakeTimeout, Duration firstQueryTimeout, int streamListeners) {
  /** {@code tcp_max_connections = auto}: a share of the open-file limit, decided at start. */
  public static final int AUTO = 0;
  /** The auto cap never exceeds this, however high the file limit: each connection costs memory. */
  static final int AUTO_CEILING = 16384;
  /**
   * Heap an open connection is allowed for when the auto cap is worked out: a silent DoT
   * connection holds about 120 KB (TLS buffers and stream stages), more once it has a query.
   */
  static final long CONNECTION_HEAP = 256 * 1024;

  /** The settings with the defaults of the deadlines a test or tool does not set. */
  public TcpSettings(int maxConnections, Duration idleTimeout, int maxQueries, int backlog) {
    this(maxConnections, idleTimeout, maxQueries, backlog, Duration.ofSeconds(5), Duration.ofSeconds(5), 1);
  }

  /**
   * Connections allowed open at once: the configured number, or with {@code auto} a quarter of
   * the open-file limit (the rest stays for upstream sockets, LMDB files and metrics), at least
   * 16 and at most 16384.
   */
  public int connectionCap(long openFileLimit) {
    return connectionCap(openFileLimit, Long.MAX_VALUE);
  }

  /**
   * One stream listener's cap: as {@link #connectionCap(long)}, and with {@code auto} the quarter
   * of the open-file limit shared by the {@code streamListeners} listeners that are on (TCP, DoT,
   * DoH), each also held to its share of a quarter of {@code maxHeap} at {@link #CONNECTION_HEAP}
   * a connection: connections held open by clients that say nothing must run out of slots before
   * the process runs out of descriptors or heap.
   */
  public int connectionCap(long openFileLimit, long maxHeap) {
    if (maxConnections != AUTO) {
      return maxConnections;
    }
    long byHeap = maxHeap / 4 / CONNECTION_HEAP;
    long share = Math.min(openFileLimit / 4, byHeap) / Math.max(1, streamListeners);
    return (int) Math.max(16, Math.min(AUTO_CEILING, share));
  }
}
