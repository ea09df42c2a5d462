package io.shoal.cache;

import io.shoal.wire.CacheKey;

/**
 * The keys a full cache evicted lately, as a pair of Bloom filters (the one filling and the one
 * before it): a name the honest clients keep asking is recognised when it comes back as a miss
 * (the cache's "ghost" entries, as ARC keeps them), so a miss budget can let it through while the
 * made-up names of a flood, never seen before, are held to the budget. Fixed size (2 x 128 KiB);
 * a false "seen" lets a miss through, never refuses one. Written under the cache's write lock,
 * read by any thread without one (a stale read errs the same way).
 */
public final class EvictedKeys {
  private static final int BITS = 1 << 20;
  /** Keys a filter takes before the next one starts: three bits each keeps false hits near 1%. */
  static final int PER_FILTER = 1 << 16;

  private volatile long[] current = new long[BITS / 64];
  private volatile long[] previous = new long[BITS / 64];
  private int added;

  /** Remembers {@code key} as evicted (the caller holds the cache's write lock). */
  public void add(CacheKey key) {
    if (added++ == PER_FILTER) {
      previous = current;
      current = new long[BITS / 64];
      added = 1;
    }
    long[] bits = current;
    long h = mix(key);
    for (int i = 0; i < 3; i++) {
      int bit = (int) (h >>> (i * 20)) & (BITS - 1);
      bits[bit >>> 6] |= 1L << bit;
    }
  }

  /** Whether {@code key} was evicted lately (or, rarely, one that shares its bits). */
  public boolean contains(CacheKey key) {
    long h = mix(key);
    return in(current, h) || in(previous, h);
  }

  private static boolean in(long[] bits, long h) {
    for (int i = 0; i < 3; i++) {
      int bit = (int) (h >>> (i * 20)) & (BITS - 1);
      if ((bits[bit >>> 6] & (1L << bit)) == 0) {
        return false;
      }
    }
    return true;
  }

  private static long mix(CacheKey key) {
    long h = key.hashCode() * 0x9E3779B97F4A7C15L;
    return h ^ (h >>> 29) ^ ((long) key.nameLength() << 40);
  }
}
