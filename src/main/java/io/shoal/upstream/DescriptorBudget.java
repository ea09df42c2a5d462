package io.shoal.upstream;

import io.shoal.cache.CacheSettings;
import io.shoal.config.ShoalConfig;
import io.shoal.transport.OpenFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many upstream sockets may be open at once, sized from the process's file limit so that a
 * miss flood cannot take the descriptors that TCP clients, the LMDB shards and the HTTP endpoints
 * need: half of what is left after a fixed reserve, the TCP listener's connection cap and two
 * descriptors per LMDB shard, and never more than {@link #MAX}.
 */
public final class DescriptorBudget {
  /** More sockets than this buy nothing: at a 2 s deadline it is 4,000 misses a second per server. */
  public static final int MAX = 8192;
  static final int MIN = 16;
  private static final int RESERVE = 256;
  private static final Logger log = LoggerFactory.getLogger(DescriptorBudget.class);

  private DescriptorBudget() {}

  /** The cap for this process and config, logged so an operator sees where it came from. */
  public static int upstreamSockets(ShoalConfig config) {
    long limit = OpenFiles.limit();
    int tcp = config.tcp().connectionCap(limit);
    int shards = 0;
    for (CacheSettings c : config.caches().values()) {
      shards += c.backend() == CacheSettings.Backend.LMDB ? c.lmdb().shardCount() : 0;
    }
    int cap = upstreamSockets(limit, tcp, shards);
    log.info("upstream sockets: at most {} open at once (file limit {}, {} TCP connections, {} LMDB shards)",
        cap, limit, tcp, shards);
    return cap;
  }

  static int upstreamSockets(long fileLimit, int tcpConnections, int lmdbShards) {
    long left = fileLimit - RESERVE - tcpConnections - 2L * lmdbShards;
    return (int) Math.max(MIN, Math.min(MAX, left / 2));
  }
}
