package io.shoal.ratelimit;

import java.util.function.LongSupplier;

/**
 * Events per key and second, in a fixed table indexed by a hash of the key: memory does not grow
 * with the number of keys an attacker makes up. A key that collides with another takes its slot
 * over and starts from zero, so a collision can only undercount (let something through), never
 * overcount. Safe for concurrent callers (striped locks); a count costs one lock of 64.
 */
final class PerSecondCounts {
  private static final int STRIPES = 64;

  private final LongSupplier nanoClock;
  private final long[] keys;
  private final long[] seconds;
  private final int[] counts;
  private final Object[] locks = new Object[STRIPES];
  private final int shift;

  /** @param size slots, rounded up to a power of two; 0 makes a table that is never used */
  PerSecondCounts(int size, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    int slots = size == 0 ? 0 : Integer.highestOneBit(Math.max(1, size - 1)) << 1;
    this.shift = 64 - Integer.numberOfTrailingZeros(Math.max(2, slots));
    this.keys = new long[slots];
    this.seconds = new long[slots];
    this.counts = new int[slots];
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new Object();
    }
  }

  /** Counts one event of {@code key} (never 0: 0 marks an empty slot) and returns its count this second. */
  int increment(long key) {
    int slot = (int) ((key * 0x9E3779B97F4A7C15L) >>> shift);
    long second = nanoClock.getAsLong() / 1_000_000_000L;
    synchronized (locks[slot & (STRIPES - 1)]) {
      if (keys[slot] != key || seconds[slot] != second) {
        keys[slot] = key;
        seconds[slot] = second;
        counts[slot] = 0;
      }
      return ++counts[slot];
    }
  }
}
