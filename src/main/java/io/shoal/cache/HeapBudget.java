package io.shoal.cache;

import io.shoal.config.ShoalConfig;

/**
 * The Java heap a configuration needs: the answers its caches may hold in memory (every memory
 * cache's {@code max_entries}, the cluster's near cache, an LMDB cache's hot answers), each with
 * room for the collector, and the expiry order of an LMDB cache that evicts by it, over what the
 * rest of a node uses. {@code bin/shoal} sizes the heap
 * from it ({@code shoal config --java-heap}); a node started with less warns, because a heap that
 * cannot hold max_entries answers ends in an out-of-memory exit once the cache fills.
 */
public final class HeapBudget {
  /**
   * Heap a node needs besides its answers (Akka, metrics, buffers, the miss path's objects in
   * flight): an idle node's live heap is far less, this leaves its young generation room.
   */
  public static final long BASE_BYTES = 256L << 20;

  /**
   * Heap per answer held: a one-record answer is about 190 live bytes, a CNAME chain or a signed
   * answer several times that; this allows a 400-byte answer and the collector's headroom over it.
   */
  public static final long BYTES_PER_ANSWER = 1024;

  /**
   * Heap per answer of an LMDB cache with {@code when_full = evict_one}: its expiry order lives in
   * the heap (the key, its expiry, a tree node and a hash entry: about 180 bytes by their layout
   * with a 25-byte key), with the collector's headroom over it.
   */
  public static final long LMDB_ORDER_BYTES_PER_ANSWER = 256;

  private HeapBudget() {}

  /** Answers {@code config} may hold in the Java heap. */
  public static long answersInHeap(ShoalConfig config) {
    long answers = config.cluster().enabled() ? config.cluster().nearCacheMaxEntries() : 0;
    for (CacheSettings c : config.caches().values()) {
      answers += c.backend() == CacheSettings.Backend.MEMORY ? c.maxEntries() : c.lmdb().hotEntries();
    }
    return answers;
  }

  /** Answers of LMDB caches whose expiry order {@code config} keeps in the heap. */
  public static long lmdbAnswersOrdered(ShoalConfig config) {
    long answers = 0;
    for (CacheSettings c : config.caches().values()) {
      if (c.backend() == CacheSettings.Backend.LMDB && c.whenFull() == WhenFull.EVICT_ONE) {
        answers += c.maxEntries();
      }
    }
    return answers;
  }

  /** The heap {@code config} needs, in bytes. */
  public static long bytes(ShoalConfig config) {
    return BASE_BYTES + answersInHeap(config) * BYTES_PER_ANSWER
        + lmdbAnswersOrdered(config) * LMDB_ORDER_BYTES_PER_ANSWER;
  }

  /** The heap as a {@code -Xmx} value, in whole mebibytes (rounded up). */
  public static String javaHeapOption(ShoalConfig config) {
    return "-Xmx" + ((bytes(config) + (1 << 20) - 1) >> 20) + "m";
  }

  /** The warning to log when a heap of {@code maxHeapBytes} is short of what {@code config} needs; null when not. */
  public static String shortfall(ShoalConfig config, long maxHeapBytes) {
    long needed = bytes(config);
    if (maxHeapBytes >= needed) {
      return null;
    }
    return "the Java heap (at most " + (maxHeapBytes >> 20) + " MiB) is smaller than the " + (needed >> 20)
        + " MiB that " + answersInHeap(config) + " cached answers (max_entries)"
        + (lmdbAnswersOrdered(config) > 0 ? " and the expiry order of " + lmdbAnswersOrdered(config) + " LMDB answers" : "")
        + " may need; when the cache fills, the"
        + " node may exit out of memory. Start it with " + javaHeapOption(config)
        + " (bin/shoal does so), or lower max_entries";
  }
}
