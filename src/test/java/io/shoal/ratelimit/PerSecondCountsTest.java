package io.shoal.ratelimit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PerSecondCountsTest {
  private final AtomicLong nanos = new AtomicLong(7_000_000_000L);

  /** Keys the table puts in one bucket, found by trying keys 1, 2, ... */
  private static List<Long> sharingABucket(PerSecondCounts t, int n) {
    Map<Integer, List<Long>> byBucket = new HashMap<>();
    for (long k = 1; k < 1_000_000; k++) {
      List<Long> keys = byBucket.computeIfAbsent(t.bucket(k), b -> new ArrayList<>());
      keys.add(k);
      if (keys.size() == n) {
        return keys;
      }
    }
    throw new AssertionError("no bucket of " + n);
  }

  @Test
  void keysThatShareABucketKeepTheirOwnCounts() {
    PerSecondCounts t = new PerSecondCounts(64, nanos::get);
    List<Long> keys = sharingABucket(t, 4);
    for (int round = 1; round <= 50; round++) {
      for (long k : keys) {
        assertEquals(round, t.increment(k), "key " + k);
      }
    }
  }

  @Test
  void aFifthKeyTakesOverTheLeastCountedAndSaysSo() {
    PerSecondCounts t = new PerSecondCounts(64, nanos::get);
    List<Long> keys = sharingABucket(t, 5);
    for (int i = 0; i < 4; i++) {
      for (int n = 0; n <= i; n++) {
        t.increment(keys.get(i));
      }
    }
    assertEquals(PerSecondCounts.TOOK_OVER, t.incrementOrTakeOver(keys.get(4)));
    assertEquals(2, t.increment(keys.get(4)));
    assertEquals(5, t.increment(keys.get(3)), "the most counted kept its slot");
    // the first key (counted once) lost its slot and starts again: an undercount, never more
    assertEquals(PerSecondCounts.TOOK_OVER, t.incrementOrTakeOver(keys.get(0)));
    assertEquals(2, t.increment(keys.get(0)));
  }

  @Test
  void countsNeverExceedTheTruthWhateverTheCollisions() {
    PerSecondCounts t = new PerSecondCounts(16, nanos::get);
    Map<Long, Integer> truth = new HashMap<>();
    boolean tookOver = false;
    for (int i = 0; i < 20_000; i++) {
      long key = 1 + (i * 7919L) % 100;
      int n = t.incrementOrTakeOver(key);
      tookOver |= n == PerSecondCounts.TOOK_OVER;
      int real = truth.merge(key, 1, Integer::sum);
      assertTrue(Math.max(1, n) <= real, "key " + key + " counted " + n + " of " + real);
    }
    assertTrue(tookOver, "100 keys in 16 slots must take slots over");
  }

  @Test
  void aKeyKnowsItsCountOfTheSecondBefore() {
    PerSecondCounts t = new PerSecondCounts(64, nanos::get);
    for (int i = 0; i < 5; i++) {
      t.increment(42);
    }
    assertEquals(0, t.lastSecond(42), "nothing counted the second before");
    nanos.addAndGet(1_000_000_000L);
    assertEquals(5, t.lastSecond(42), "the second before, not yet counted in this one");
    assertEquals(1, t.increment(42));
    assertEquals(5, t.lastSecond(42), "and after it was counted again");
    assertEquals(0, t.lastSecond(43));
    nanos.addAndGet(2_000_000_000L);
    assertEquals(0, t.lastSecond(42), "two seconds on, the second before had none");
  }
}
