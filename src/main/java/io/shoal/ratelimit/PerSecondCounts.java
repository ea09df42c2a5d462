package io.shoal.ratelimit;

import java.util.function.LongSupplier;

/**
 * Events per key and second, in a fixed table indexed by a hash of the key: memory does not grow
 * with the number of keys an attacker makes up. A key may sit in any of the {@value #WAYS} slots of
 * its bucket, so keys whose hashes meet share a bucket instead of taking each other's slot; only
 * when all of them are in use this second does a newcomer take over the one counted least, and
 * start from zero. So a collision can only undercount (let something through), never overcount.
 * Each slot also keeps its key's count of the second before, while no other key takes the slot.
 * Safe for concurrent callers (striped locks); a count costs one lock of 64.
 */
final class PerSecondCounts {
  private static final int STRIPES = 64;
  /** Slots per bucket. */
  private static final int WAYS = 4;

  /** What {@link #incrementOrTakeOver} returns when the key took over a slot another key counted this second. */
  static final int TOOK_OVER = -1;

  private final LongSupplier nanoClock;
  private final long[] keys;
  private final long[] seconds;
  private final int[] counts;
  /** The slot's key's count in the second before {@code seconds}; 0 when it was not counted then. */
  private final int[] before;
  private final Object[] locks = new Object[STRIPES];
  private final int shift;

  /** @param size slots, rounded up to a power of two, at least two buckets; 0 makes a table that is never used */
  PerSecondCounts(int size, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    int slots = size == 0 ? 0 : Math.max(2 * WAYS, Integer.highestOneBit(Math.max(1, size - 1)) << 1);
    int buckets = Math.max(1, slots / WAYS);
    this.shift = 64 - Integer.numberOfTrailingZeros(Math.max(2, buckets));
    this.keys = new long[slots];
    this.seconds = new long[slots];
    this.counts = new int[slots];
    this.before = new int[slots];
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new Object();
    }
  }

  /** Counts one event of {@code key} (never 0: 0 marks an empty slot) and returns its count this second. */
  int increment(long key) {
    int n = incrementOrTakeOver(key);
    return n == TOOK_OVER ? 1 : n;
  }

  /**
   * As {@link #increment}, but {@link #TOOK_OVER} instead of 1 when the key had no slot and took
   * over one another key was counted in this second: a caller counting newcomers does not count it
   * (the key may have been counted before it lost its slot).
   */
  int incrementOrTakeOver(long key) {
    int bucket = bucket(key);
    long second = nanoClock.getAsLong() / 1_000_000_000L;
    synchronized (locks[(bucket / WAYS) & (STRIPES - 1)]) {
      int free = -1;
      int stale = -1;
      int least = -1;
      for (int slot = bucket; slot < bucket + WAYS; slot++) {
        if (keys[slot] == key) {
          if (seconds[slot] != second) {
            before[slot] = seconds[slot] == second - 1 ? counts[slot] : 0;
            seconds[slot] = second;
            counts[slot] = 0;
          }
          return ++counts[slot];
        }
        if (keys[slot] == 0 || seconds[slot] < second - 1) {
          free = free < 0 ? slot : free;
        } else if (seconds[slot] == second - 1) {
          stale = stale < 0 ? slot : stale;
        } else if (least < 0 || counts[slot] < counts[least]) {
          least = slot;
        }
      }
      // an unused slot, else one counted only last second, else this second's least counted
      int slot = free >= 0 ? free : stale >= 0 ? stale : least;
      boolean tookOver = slot == least;
      keys[slot] = key;
      seconds[slot] = second;
      counts[slot] = 1;
      before[slot] = 0;
      return tookOver ? TOOK_OVER : 1;
    }
  }

  /**
   * {@code key}'s count in the second before this one: 0 when it was not counted then, or when
   * another key took its slot since (a collision undercounts here too).
   */
  int lastSecond(long key) {
    int bucket = bucket(key);
    long second = nanoClock.getAsLong() / 1_000_000_000L;
    synchronized (locks[(bucket / WAYS) & (STRIPES - 1)]) {
      for (int slot = bucket; slot < bucket + WAYS; slot++) {
        if (keys[slot] == key) {
          return seconds[slot] == second ? before[slot] : seconds[slot] == second - 1 ? counts[slot] : 0;
        }
      }
      return 0;
    }
  }

  /** The first slot of the key's bucket. */
  int bucket(long key) {
    return (int) ((key * 0x9E3779B97F4A7C15L) >>> shift) * WAYS;
  }
}
