package io.shoal.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Type;

/** What the near cache keeps and for how long: by use, within its entry and byte bounds, until the TTL ends. */
class NearCacheTest {
  private static final long NOW = 1_700_000_000_000L;
  private static final long HOUR = 3_600_000L;

  private static NearCache cache(long maxEntries, long maxBytes) {
    return new NearCache("near", maxEntries, maxBytes, new CacheMetrics("near", "memory"), () -> NOW);
  }

  private static CacheKey key(String name) {
    return CacheKey.of(name, Type.A, DClass.IN, 0);
  }

  private static CachedAnswer answer(int wireBytes, long expiresAt) {
    return new CachedAnswer(new byte[wireBytes], new int[0], -1, -1, NOW, expiresAt);
  }

  private static boolean fill(NearCache c, String name, CachedAnswer a) {
    return c.fill(key(name), a).toCompletableFuture().join();
  }

  /** {@code count} names asked once: each a miss that keeps (or offers) a copy. */
  private static void scan(NearCache c, String prefix, int count) {
    for (int i = 0; i < count; i++) {
      fill(c, prefix + i + ".example.", answer(40, NOW + HOUR));
    }
  }

  @Test
  void aCopyIsServedUntilItsTtlEndsAndThenGoes() {
    NearCache c = cache(10, 1 << 20);
    CachedAnswer a = answer(40, NOW + 60_000);
    assertTrue(fill(c, "www.example.", a));

    assertSame(a, c.get(key("www.example."), NOW + 59_999));
    assertNull(c.get(key("www.example."), NOW + 60_000));
    assertEquals(0, c.size(), "an expired copy that was asked for is no longer held");
  }

  @Test
  void aScanOfNamesAskedOnceKeepsTheHotCopies() {
    NearCache c = cache(64, 1 << 20);
    scan(c, "earlier", 80);
    List<String> hot = List.of("h1.example.", "h2.example.", "h3.example.", "h4.example.", "h5.example.");
    for (int round = 0; round < 12; round++) {
      for (String name : hot) {
        if (c.get(key(name), NOW) == null) {
          fill(c, name, answer(40, NOW + HOUR));
        }
      }
    }
    scan(c, "once", 200);

    assertEquals(64, c.size(), "at most max_entries copies");
    for (String name : hot) {
      assertTrue(c.get(key(name), NOW) != null, name + " is still held after the scan");
    }
  }

  @Test
  void aNameAskedAgainTakesThePlaceOfACopyAskedOnce() {
    NearCache c = cache(8, 1 << 20);
    scan(c, "once", 8);

    assertFalse(fill(c, "new.example.", answer(40, NOW + HOUR)), "asked once, as often as every copy held");
    assertTrue(fill(c, "new.example.", answer(40, NOW + HOUR)), "asked twice: more often than a copy asked once");
    assertEquals(8, c.size());
    assertTrue(c.get(key("new.example."), NOW) != null);
  }

  @Test
  void aHotNameWhoseCopyExpiredIsKeptAgainAtOnce() {
    NearCache c = cache(8, 1 << 20);
    assertTrue(fill(c, "hot.example.", answer(40, NOW + 1_000)));
    for (int i = 0; i < 20; i++) {
      c.get(key("hot.example."), NOW);
    }
    assertNull(c.get(key("hot.example."), NOW + 1_000));
    scan(c, "once", 8);

    assertTrue(fill(c, "hot.example.", answer(40, NOW + HOUR)), "its asks outlive its copy");
    assertEquals(8, c.size());
  }

  @Test
  void anExpiredCopyMakesRoomFirst() {
    NearCache c = cache(4, 1 << 20);
    assertTrue(fill(c, "short.example.", answer(40, NOW - 1)));
    List<String> kept = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String name = "long" + i + ".example.";
      assertTrue(fill(c, name, answer(40, NOW + HOUR)));
      kept.add(name);
      for (int k = 0; k < 5; k++) {
        c.get(key(name), NOW);
      }
    }
    assertTrue(fill(c, "next.example.", answer(40, NOW + HOUR)), "the expired copy gave way to a name asked once");
    for (String name : kept) {
      assertTrue(c.get(key(name), NOW) != null, name);
    }
  }

  @Test
  void largeAnswersFitFewerWithinMaxBytes() {
    // floor 1 KiB per copy: 8 small copies fit in 8 KiB, but only 2 of 3 KiB (each weighs 3000 + key + 160).
    NearCache c = cache(8, 8192);
    for (int i = 0; i < 6; i++) {
      fill(c, "big" + i + ".example.", answer(3000, NOW + HOUR));
    }
    assertEquals(2, c.size());
    assertFalse(fill(c, "huge.example.", answer(9000, NOW + HOUR)), "a copy larger than max_bytes is never kept");
    assertEquals(2, c.size());
  }

  @Test
  void aNewerCopyOfTheSameNameReplacesTheOld() {
    NearCache c = cache(2, 1 << 20);
    scan(c, "once", 2);
    CachedAnswer newer = answer(40, NOW + 2 * HOUR);
    assertTrue(fill(c, "once0.example.", newer));
    assertSame(newer, c.get(key("once0.example."), NOW));
    assertEquals(2, c.size());
  }

  @Test
  void aFlushRemovesTheNamesCopiesStoredBeforeIt() {
    NearCache c = cache(10, 1 << 20);
    fill(c, "www.example.", answer(40, NOW + HOUR));
    fill(c, "mail.example.", answer(40, NOW + HOUR));

    assertEquals(0, c.flushNameStoredBefore("www.example.", 0, NOW).toCompletableFuture().join());
    assertEquals(1, c.flushNameStoredBefore("www.example.", 0, NOW + 1).toCompletableFuture().join());
    assertNull(c.get(key("www.example."), NOW));
    assertTrue(c.get(key("mail.example."), NOW) != null);
    assertTrue(c.removeIfStoredBy(key("mail.example."), NOW).toCompletableFuture().join());
    assertEquals(0, c.size());
  }
}
