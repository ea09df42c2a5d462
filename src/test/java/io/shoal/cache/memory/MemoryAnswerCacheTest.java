package io.shoal.cache.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Type;

/** Expiry, capacity and eviction of the in-memory answer cache. */
class MemoryAnswerCacheTest {
  private static final long NOW = 1_700_000_000_000L;

  private static MemoryAnswerCache cache(long maxEntries, WhenFull whenFull) {
    return new MemoryAnswerCache("t", maxEntries, whenFull, new CacheMetrics("t", "memory"));
  }

  private static CacheKey key(String name) {
    return CacheKey.of(name, Type.A, DClass.IN, 0);
  }

  /** Contents do not matter to the cache; expiry does. */
  private static CachedAnswer answer(long expiresAt) {
    return new CachedAnswer(new byte[12], new int[0], -1, -1, NOW, expiresAt);
  }

  /** An answer with one answer record (ANCOUNT 1): positive. */
  private static CachedAnswer positive(long expiresAt) {
    byte[] wire = new byte[12];
    wire[7] = 1;
    return new CachedAnswer(wire, new int[0], -1, -1, NOW, expiresAt);
  }

  /** An NXDOMAIN. */
  private static CachedAnswer nxdomain(long expiresAt) {
    byte[] wire = new byte[12];
    wire[3] = 3;
    return new CachedAnswer(wire, new int[0], -1, -1, NOW, expiresAt);
  }

  private static void fill(MemoryAnswerCache c, CacheKey k, CachedAnswer a) {
    assertTrue(c.fill(k, a).toCompletableFuture().join());
  }

  @Test
  void getReturnsTheAnswerUntilItExpires() {
    MemoryAnswerCache c = cache(10, WhenFull.EVICT_ONE);
    CachedAnswer a = answer(NOW + 60_000);
    fill(c, key("www.example."), a);

    assertSame(a, c.get(key("www.example."), NOW));
    assertSame(a, c.get(key("www.example."), NOW + 59_999));
    assertNull(c.get(key("www.example."), NOW + 60_000));
    assertNull(c.get(key("www.example."), NOW + 3_600_000));
  }

  @Test
  void expiryIsLazy() {
    // The entry stays stored (and counted) until something replaces or evicts it.
    MemoryAnswerCache c = cache(10, WhenFull.EVICT_ONE);
    fill(c, key("www.example."), answer(NOW + 1_000));

    assertNull(c.get(key("www.example."), NOW + 2_000));
    assertEquals(1, c.size());
    assertNotNull(c.get(key("www.example."), NOW));
  }

  @Test
  void getOfAnUnknownKeyIsNull() {
    MemoryAnswerCache c = cache(10, WhenFull.EVICT_ONE);
    fill(c, key("www.example."), answer(NOW + 60_000));

    assertNull(c.get(key("mail.example."), NOW));
    assertNull(c.get(CacheKey.of("www.example.", Type.AAAA, DClass.IN, 0), NOW));
    assertNull(c.get(CacheKey.of("www.example.", Type.A, DClass.IN, CacheKey.FLAG_DO), NOW));
  }

  @ParameterizedTest
  @EnumSource(WhenFull.class)
  void maxEntriesIsNeverExceeded(WhenFull whenFull) {
    MemoryAnswerCache c = cache(10, whenFull);

    for (int i = 0; i < 200; i++) {
      CacheKey k = key("host" + i + ".example.");
      fill(c, k, answer(NOW + 1_000 + (i * 7919L) % 5_000));
      assertTrue(c.size() <= 10, "size " + c.size() + " after " + (i + 1) + " fills");
      assertNotNull(c.get(k, NOW), "the answer just filled is there");
    }
    assertEquals(10, c.size());
    assertEquals(10, countPresent(c, 200));
  }

  @Test
  void evictOneRemovesExactlyTheSoonestExpiring() {
    MemoryAnswerCache c = cache(3, WhenFull.EVICT_ONE);
    fill(c, key("a.example."), answer(NOW + 3_000));
    fill(c, key("b.example."), answer(NOW + 1_000));
    fill(c, key("c.example."), answer(NOW + 2_000));

    fill(c, key("d.example."), answer(NOW + 500));

    assertEquals(3, c.size());
    assertNull(c.get(key("b.example."), NOW));
    assertNotNull(c.get(key("a.example."), NOW));
    assertNotNull(c.get(key("c.example."), NOW));
    assertNotNull(c.get(key("d.example."), NOW));

    // The newcomer expires soonest now, so it goes next.
    fill(c, key("e.example."), answer(NOW + 10_000));
    assertNull(c.get(key("d.example."), NOW));
    assertNotNull(c.get(key("c.example."), NOW));
  }

  @Test
  void evictOneFollowsExpiryOrderOverManyFills() {
    MemoryAnswerCache c = cache(5, WhenFull.EVICT_ONE);
    long[] expiries = {700, 100, 900, 300, 500, 800, 200, 1000, 400, 600};
    for (int i = 0; i < expiries.length; i++) {
      fill(c, key("h" + i + ".example."), answer(NOW + expiries[i] * 1000));
    }

    List<Long> survivors = new ArrayList<>();
    for (int i = 0; i < expiries.length; i++) {
      if (c.get(key("h" + i + ".example."), NOW) != null) {
        survivors.add(expiries[i]);
      }
    }
    survivors.sort(null);
    // Each fill past the fifth first removes the soonest-expiring entry, so an early-expiring
    // newcomer (200, 400) survives only until the next fill.
    assertEquals(5, survivors.size());
    assertEquals(List.of(600L, 700L, 800L, 900L, 1000L), survivors);
  }

  @Test
  void sampleKeepsTheCapAndEvictsOneOfTheOldEntries() {
    MemoryAnswerCache c = cache(3, WhenFull.SAMPLE);
    fill(c, key("a.example."), answer(NOW + 3_000));
    fill(c, key("b.example."), answer(NOW + 1_000));
    fill(c, key("c.example."), answer(NOW + 2_000));

    fill(c, key("d.example."), answer(NOW + 4_000));

    assertEquals(3, c.size());
    assertNotNull(c.get(key("d.example."), NOW));
    int oldLeft = 0;
    for (String n : new String[] {"a.example.", "b.example.", "c.example."}) {
      if (c.get(key(n), NOW) != null) {
        oldLeft++;
      }
    }
    assertEquals(2, oldLeft);
  }

  @ParameterizedTest
  @EnumSource(WhenFull.class)
  void replacingAKeyDoesNotEvict(WhenFull whenFull) {
    MemoryAnswerCache c = cache(2, whenFull);
    fill(c, key("a.example."), answer(NOW + 1_000));
    fill(c, key("b.example."), answer(NOW + 2_000));
    CachedAnswer newer = answer(NOW + 5_000);

    fill(c, key("a.example."), newer);

    assertEquals(2, c.size());
    assertSame(newer, c.get(key("a.example."), NOW + 4_000));
    assertNotNull(c.get(key("b.example."), NOW));
  }

  @Test
  void replacedEntryIsRankedByItsNewExpiry() {
    MemoryAnswerCache c = cache(2, WhenFull.EVICT_ONE);
    fill(c, key("a.example."), answer(NOW + 1_000));
    fill(c, key("b.example."), answer(NOW + 2_000));
    fill(c, key("a.example."), answer(NOW + 5_000));

    fill(c, key("c.example."), answer(NOW + 9_000));

    assertNull(c.get(key("b.example."), NOW));
    assertNotNull(c.get(key("a.example."), NOW));
  }

  @ParameterizedTest
  @EnumSource(WhenFull.class)
  void flushNameRemovesEveryTypeOfThatNameInAnyCase(WhenFull whenFull) {
    MemoryAnswerCache c = cache(100, whenFull);
    CacheKey a = CacheKey.of("www.example.com.", Type.A, DClass.IN, 0);
    CacheKey aaaa = CacheKey.of("www.example.com.", Type.AAAA, DClass.IN, 0);
    CacheKey mxDo = CacheKey.of("www.example.com.", Type.MX, DClass.IN, CacheKey.FLAG_DO);
    CacheKey other = CacheKey.of("mail.example.com.", Type.A, DClass.IN, 0);
    CacheKey parent = CacheKey.of("example.com.", Type.A, DClass.IN, 0);
    for (CacheKey k : List.of(a, aaaa, mxDo, other, parent)) {
      fill(c, k, answer(NOW + 60_000));
    }

    int removed = c.flushName("WWW.Example.COM", 0).toCompletableFuture().join();

    assertEquals(3, removed);
    assertEquals(2, c.size());
    assertNull(c.get(a, NOW));
    assertNull(c.get(aaaa, NOW));
    assertNull(c.get(mxDo, NOW));
    assertNotNull(c.get(other, NOW));
    assertNotNull(c.get(parent, NOW));
  }

  @ParameterizedTest
  @EnumSource(WhenFull.class)
  void evictionStillWorksAfterAFlush(WhenFull whenFull) {
    // Flush unlinks entries from the eviction structures; a stale link would break later fills.
    MemoryAnswerCache c = cache(4, whenFull);
    for (int i = 0; i < 4; i++) {
      fill(c, key("h" + i + ".example."), answer(NOW + 1_000 * (i + 1)));
    }
    c.flushName("h1.example.", 0).toCompletableFuture().join();

    for (int i = 4; i < 50; i++) {
      fill(c, key("h" + i + ".example."), answer(NOW + 1_000 * (i + 1)));
      assertTrue(c.size() <= 4);
    }
    assertEquals(4, c.size());
    assertEquals(4, countPresent(c, 50));
  }

  @ParameterizedTest
  @EnumSource(WhenFull.class)
  void removeIfStoredByRemovesOnlyThatKeyAndNotAnAnswerStoredSince(WhenFull whenFull) {
    MemoryAnswerCache c = cache(4, whenFull);
    CacheKey a = key("a.example.");
    CacheKey aDo = CacheKey.of("a.example.", Type.A, DClass.IN, CacheKey.FLAG_DO);
    CacheKey b = key("b.example.");
    fill(c, a, answer(NOW + 60_000));
    fill(c, aDo, answer(NOW + 60_000));
    fill(c, b, new CachedAnswer(new byte[12], new int[0], -1, -1, NOW + 5_000, NOW + 65_000));

    assertTrue(c.removeIfStoredBy(a, NOW).toCompletableFuture().join());
    assertFalse(c.removeIfStoredBy(b, NOW).toCompletableFuture().join(), "b was stored since");
    assertFalse(c.removeIfStoredBy(key("absent.example."), NOW).toCompletableFuture().join());

    assertNull(c.get(a, NOW));
    assertNotNull(c.get(aDo, NOW));
    assertNotNull(c.get(b, NOW));
    assertEquals(2, c.size());
    // Unlinked from the eviction structures too: later fills still evict within the bound.
    for (int i = 0; i < 20; i++) {
      fill(c, key("h" + i + ".example."), answer(NOW + 1_000 * (i + 1)));
      assertTrue(c.size() <= 4);
    }
  }

  @Test
  void flushOfAnAbsentNameRemovesNothing() {
    MemoryAnswerCache c = cache(10, WhenFull.EVICT_ONE);
    fill(c, key("www.example."), answer(NOW + 60_000));

    assertEquals(0, c.flushName("nothere.example.", 0).toCompletableFuture().join());
    assertEquals(1, c.size());
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(WhenFull.class)
  void aFloodOfNegativeAnswersTakesHalfAFullCacheAndNoPositiveAnswer(WhenFull whenFull) {
    MemoryAnswerCache c = cache(100, whenFull);
    // The honest answers were stored first and expire first: by expiry alone they would go first.
    for (int i = 0; i < 50; i++) {
      fill(c, key("h" + i + ".example."), positive(NOW + 60_000 + i));
    }
    for (int i = 0; i < 5_000; i++) {
      fill(c, key("r" + i + ".victim.example."), nxdomain(NOW + 3_600_000 + i));
    }
    assertEquals(100, c.size());
    assertEquals(50, countPresent(c, 50), "every positive answer is still cached");
  }

  /**
   * With {@code sample}, a negative answer over its share evicts a sampled negative one. Twenty
   * samples find none about once in a million evictions (negatives hold half the cache); three
   * million evictions make that all but certain to happen, and no positive answer may go then.
   */
  @Test
  void sampledEvictionNeverGivesAPositivePlaceToANegativeOverItsShare() {
    MemoryAnswerCache c = cache(10, WhenFull.SAMPLE);
    for (int i = 0; i < 5; i++) {
      fill(c, key("h" + i + ".example."), positive(NOW + 60_000 + i));
    }
    CacheKey[] flood = new CacheKey[1024];
    for (int i = 0; i < flood.length; i++) {
      flood[i] = key("r" + i + ".victim.example.");
    }
    CachedAnswer denial = nxdomain(NOW + 3_600_000);
    for (int i = 0; i < 3_000_000; i++) {
      c.fill(flood[i & 1023], denial);
    }
    assertEquals(10, c.size());
    assertEquals(5, countPresent(c, 5), "every positive answer is still cached");
  }

  @Test
  void positiveAnswersStillTakeTheSoonestExpiringPlaceNegativeOrNot() {
    MemoryAnswerCache c = cache(4, WhenFull.EVICT_ONE);
    fill(c, key("n0.example."), nxdomain(NOW + 1_000));
    fill(c, key("p0.example."), positive(NOW + 2_000));
    fill(c, key("p1.example."), positive(NOW + 3_000));
    fill(c, key("p2.example."), positive(NOW + 4_000));
    fill(c, key("p3.example."), positive(NOW + 5_000));
    assertEquals(null, c.get(key("n0.example."), NOW));
    fill(c, key("p4.example."), positive(NOW + 6_000));
    assertEquals(null, c.get(key("p0.example."), NOW));
  }

  /** A real answer from upstream: {@code name} A 192.0.2.1, its question in the case given. */
  private static CachedAnswer upstream(String name, long expiresAt) {
    try {
      org.xbill.DNS.Name n = org.xbill.DNS.Name.fromString(name);
      org.xbill.DNS.Message m = new org.xbill.DNS.Message(7);
      m.getHeader().setFlag(org.xbill.DNS.Flags.QR);
      m.addRecord(org.xbill.DNS.Record.newRecord(n, Type.A, DClass.IN), org.xbill.DNS.Section.QUESTION);
      m.addRecord(new org.xbill.DNS.ARecord(n, DClass.IN, 300, java.net.InetAddress.getByName("192.0.2.1")),
          org.xbill.DNS.Section.ANSWER);
      return CachedAnswer.of(io.shoal.wire.ScannedAnswer.fromUpstream(m.toWire()), NOW, expiresAt);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @ParameterizedTest
  @EnumSource(WhenFull.class)
  void anAnswerKeptByItsOwnQuestionIsFoundInAnyCaseAndOnlyWithItsFlags(WhenFull whenFull) {
    MemoryAnswerCache c = cache(10, whenFull);
    CachedAnswer plain = upstream("WWW.Example.", NOW + 60_000);
    CachedAnswer withDo = upstream("www.example.", NOW + 60_000);
    fill(c, key("www.example."), plain);
    fill(c, CacheKey.of("www.example.", Type.A, DClass.IN, CacheKey.FLAG_DO), withDo);

    assertSame(plain, c.get(key("www.EXAMPLE."), NOW));
    assertSame(withDo, c.get(CacheKey.of("WWW.example.", Type.A, DClass.IN, CacheKey.FLAG_DO), NOW));
    assertNull(c.get(CacheKey.of("www.example.", Type.AAAA, DClass.IN, 0), NOW));
    assertNull(c.get(CacheKey.of("www.example.", Type.A, DClass.IN, CacheKey.FLAG_CD), NOW));
    assertNull(c.get(key("ww.example."), NOW));

    // The dump gives the keys back, flags included, though the cache kept none of them.
    java.util.Map<CacheKey, CachedAnswer> dumped = new java.util.HashMap<>();
    c.entries(dumped::put);
    assertEquals(java.util.Map.of(key("www.example."), plain,
        CacheKey.of("www.example.", Type.A, DClass.IN, CacheKey.FLAG_DO), withDo), dumped);

    assertEquals(2, c.flushName("WWW.example.", Type.A).toCompletableFuture().join());
    assertNull(c.get(key("www.example."), NOW));
    assertEquals(0, c.size());
  }

  @Test
  void anAnswerFilledUnderAKeyItsQuestionDoesNotAskIsFoundByThatKeyOnly() {
    MemoryAnswerCache c = cache(10, WhenFull.EVICT_ONE);
    CachedAnswer other = upstream("elsewhere.example.", NOW + 60_000);
    fill(c, key("www.example."), other);

    assertSame(other, c.get(key("www.example."), NOW));
    assertNull(c.get(key("elsewhere.example."), NOW));
    List<CacheKey> keys = new ArrayList<>();
    c.entries((k, a) -> keys.add(k));
    assertEquals(List.of(key("www.example.")), keys);
  }

  @ParameterizedTest
  @EnumSource(WhenFull.class)
  void readersRacingFillsAndEvictionsNeverGetAnotherNamesAnswer(WhenFull whenFull) throws Exception {
    // The table is read without a lock while one writer fills, replaces, evicts and grows it.
    MemoryAnswerCache c = cache(500, whenFull);
    int names = 2_000;
    CachedAnswer[] answers = new CachedAnswer[names];
    CacheKey[] keys = new CacheKey[names];
    for (int i = 0; i < names; i++) {
      answers[i] = upstream("r" + i + ".example.", NOW + 60_000 + i);
      keys[i] = key("r" + i + ".example.");
    }
    java.util.concurrent.atomic.AtomicReference<String> wrong = new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
    Thread reader = new Thread(() -> {
      long deadline = System.nanoTime() + 30_000_000_000L;
      for (int round = 0; round < 2_000_000 && !done.get() && System.nanoTime() < deadline; round++) {
        int i = round % names;
        CachedAnswer got = c.get(keys[i], NOW);
        if (got != null && got != answers[i]) {
          wrong.compareAndSet(null, keys[i] + " answered with another name's answer");
        }
      }
    });
    reader.start();
    for (int round = 0; round < 20; round++) {
      for (int i = 0; i < names; i++) {
        fill(c, keys[(i * 7 + round) % names], answers[(i * 7 + round) % names]);
      }
    }
    done.set(true);
    reader.join(60_000);
    assertFalse(reader.isAlive());
    assertNull(wrong.get());
    assertEquals(500, c.size());
  }

  private static int countPresent(MemoryAnswerCache c, int hosts) {
    int n = 0;
    for (int i = 0; i < hosts; i++) {
      if (c.get(key("h" + i + ".example."), NOW) != null || c.get(key("host" + i + ".example."), NOW) != null) {
        n++;
      }
    }
    return n;
  }

  private static AnswerCache.Loaded[] load(MemoryAnswerCache c, long now, Object... keysAndAnswers) {
    List<AnswerCache.Keyed> answers = new ArrayList<>();
    for (int i = 0; i < keysAndAnswers.length; i += 2) {
      answers.add(new AnswerCache.Keyed(key((String) keysAndAnswers[i]), (CachedAnswer) keysAndAnswers[i + 1]));
    }
    return c.loadIntoRoom(answers, now).toCompletableFuture().join();
  }

  @ParameterizedTest
  @EnumSource(WhenFull.class)
  void aLoadFillsOnlyFreeRoomAndKeepsLiveAnswers(WhenFull whenFull) {
    MemoryAnswerCache c = cache(3, whenFull);
    CachedAnswer live = positive(NOW + 10_000);
    fill(c, key("live."), live);
    AnswerCache.Loaded[] r = load(c, NOW, "live.", positive(NOW + 60_000), "a.", positive(NOW + 60_000),
        "b.", positive(NOW + 60_000), "c.", positive(NOW + 60_000));
    assertEquals(List.of(AnswerCache.Loaded.ALREADY_CACHED, AnswerCache.Loaded.STORED, AnswerCache.Loaded.STORED,
        AnswerCache.Loaded.NO_ROOM), List.of(r));
    assertSame(live, c.get(key("live."), NOW));
    assertNull(c.get(key("c."), NOW));
    assertEquals(3, c.size());
  }

  @Test
  void aLoadTakesThePlaceOfExpiredAnswersOnly() {
    MemoryAnswerCache c = cache(2, WhenFull.EVICT_ONE);
    fill(c, key("old."), positive(NOW + 1_000));
    fill(c, key("live."), positive(NOW + 60_000));
    // At NOW + 2 s "old." has expired: a loaded answer takes its place, and the one after finds no room.
    AnswerCache.Loaded[] r = load(c, NOW + 2_000, "a.", positive(NOW + 60_000), "b.", positive(NOW + 60_000));
    assertEquals(List.of(AnswerCache.Loaded.STORED, AnswerCache.Loaded.NO_ROOM), List.of(r));
    assertNotNull(c.get(key("live."), NOW + 2_000));
    assertNotNull(c.get(key("a."), NOW + 2_000));
    // An expired answer under the same key is replaced.
    assertEquals(AnswerCache.Loaded.STORED, load(c, NOW + 61_000, "live.", positive(NOW + 120_000))[0]);
  }
}
