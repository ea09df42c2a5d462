package io.shoal.config;

import java.time.Duration;

/** Limits of the TCP listener ({@code shoal.listen.tcp_*}). */
public record TcpSettings(int maxConnections, Duration idleTimeout, int maxQueries, int backlog) {
  /** {@code tcp_max_connections = auto}: a share of the open-file limit, decided at start. */
  public static final int AUTO = 0;
  /** The auto cap never exceeds this, however high the file limit: each connection costs memory. */
  static final int AUTO_CEILING = 16384;

  /**
   * Connections allowed open at once: the configured number, or with {@code auto} a quarter of
   * the open-file limit (the rest stays for upstream sockets, LMDB files and metrics), at least
   * 16 and at most 16384.
   */
  public int connectionCap(long openFileLimit) {
    if (maxConnections != AUTO) {
      return maxConnections;
    }
    return (int) Math.max(16, Math.min(AUTO_CEILING, openFileLimit / 4));
  }
}
