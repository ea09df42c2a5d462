package io.shoal.study.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.shoal.study.measure.CacheCounters;
import org.junit.jupiter.api.Test;

/** The hit rate every member is judged by, and the histogram means. */
class ResultRowTest {

  @Test
  void hitRateIsTheShareOfCompletedQueriesThatNeverReachedTheUpstream() {
    assertEquals(50.0, ResultRow.fairHitRatePct(500, 1000), 1e-9);
    assertEquals(100.0, ResultRow.fairHitRatePct(0, 1000), 1e-9);
    assertEquals(0.0, ResultRow.fairHitRatePct(1000, 1000), 1e-9);
    assertEquals(97.5, ResultRow.fairHitRatePct(25, 1000), 1e-9);
  }

  @Test
  void moreUpstreamQueriesThanAnswersIsZeroNotNegative() {
    assertEquals(0.0, ResultRow.fairHitRatePct(1500, 1000), 1e-9);
  }

  @Test
  void nothingCompletedHasNoHitRate() {
    assertNull(ResultRow.fairHitRatePct(10, 0));
  }

  @Test
  void meanIsSumOverCountInMilliseconds() {
    assertEquals(0.0209, ResultRow.meanMillis(0.061812506, 2952L), 1e-4);
    assertEquals(2.0, ResultRow.meanMillis(0.004, 2L), 1e-12);
    assertNull(ResultRow.meanMillis(0.0, 0L));
    assertNull(ResultRow.meanMillis(null, null));
  }

  @Test
  void countersBecomeAWindowBySubtraction() {
    CacheCounters before = new CacheCounters(10L, 20L, 5L, 0.5, 2L, 0.02);
    CacheCounters after = new CacheCounters(110L, 70L, 55L, 1.5, 12L, 0.07);
    CacheCounters w = after.minus(before);
    assertEquals(100L, w.hits());
    assertEquals(50L, w.misses());
    assertEquals(20.0, ResultRow.meanMillis(w.fillSumSeconds(), w.fillCount()), 1e-9);
    assertEquals(5.0, ResultRow.meanMillis(w.evictionSumSeconds(), w.evictionCount()), 1e-9);
    assertNull(CacheCounters.NONE.minus(CacheCounters.NONE).hits());
  }
}
