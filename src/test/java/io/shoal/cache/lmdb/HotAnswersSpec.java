package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheFixture.answer;
import static io.shoal.cache.lmdb.CacheFixture.await;
import static io.shoal.cache.lmdb.CacheFixture.key;
import static io.shoal.cache.lmdb.CacheFixture.open;
import static io.shoal.cache.lmdb.CacheFixture.settings;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.wire.CacheKey;
import java.util.ArrayList;
import java.util.List;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.AfterClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/**
 * The in-heap overlay of hot answers in front of LMDB never serves what the shard's environment
 * no longer holds: not an overwritten answer, not an evicted one, not a flushed one, also while
 * other threads read the key as it changes.
 */
public class HotAnswersSpec extends JUnitSuite {
  private static final ActorTestKit testKit = CacheFixture.testKit("HotAnswersSpec");

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  private LmdbAnswerCache cache(int shards, long maxEntries, WhenFull whenFull) throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    return open(testKit, settings("hot", tmp.newFolder().toPath(), shards, maxEntries, whenFull), events);
  }

  /**
   * Fills {@code key}, waits for the commit and reads it twice: the first read admits it to the
   * overlay, the second is served from there. Returns the second read.
   */
  private static CachedAnswer heldInOverlay(LmdbAnswerCache cache, CacheKey key, CachedAnswer answer, long now)
      throws Exception {
    assertTrue(await(cache.fill(key, answer)));
    committedEverywhere(cache);
    assertNotNull(cache.get(key, now));
    return cache.get(key, now);
  }

  /**
   * Waits until every shard has committed what was queued before: a flush of a name never
   * cached runs after those commits, and their fills' overlay of uncommitted answers is gone.
   */
  private static void committedEverywhere(LmdbAnswerCache cache) throws Exception {
    assertEquals(0, (int) cache.flushName("never-cached.example.", 0).toCompletableFuture().get(10, TimeUnit.SECONDS));
  }

  @Test
  public void anOverwrittenAnswerIsServedAsItsNewVersion() throws Exception {
    long now = System.currentTimeMillis();
    try (LmdbAnswerCache cache = cache(2, 1000, WhenFull.EVICT_ONE)) {
      CacheKey k = key("www.example.");
      assertArrayEquals(answer(120, (byte) 1, 0).wire(),
          heldInOverlay(cache, k, answer(120, (byte) 1, now + 60_000), now).wire());

      CachedAnswer second = answer(90, (byte) 2, now + 120_000);
      assertTrue(await(cache.fill(k, second)));
      committedEverywhere(cache);
      CachedAnswer got = cache.get(k, now);
      assertArrayEquals("the new answer, not the one held before", second.wire(), got.wire());
      assertEquals(second.expiresAtMillis(), got.expiresAtMillis());
    }
  }

  /**
   * A hit is looked up in the cache-wide map of hot answers before its shard only while no fill is
   * pending: a newer answer still on its way to its shard wins over the hot one it replaces.
   */
  @Test
  public void aFillWaitingForItsCommitIsServedOverTheHotAnswerItReplaces() throws Exception {
    long now = System.currentTimeMillis();
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean hold = new AtomicBoolean();
    try (LmdbAnswerCache cache = open(testKit, settings("hot", tmp.newFolder().toPath(), 2, 1000, WhenFull.EVICT_ONE),
        events, 4096, Duration.ofMillis(200), CacheFixture.commitsHeldWhile(hold, release))) {
      CacheKey k = key("www.example.");
      assertNotNull(heldInOverlay(cache, k, answer(120, (byte) 1, now + 60_000), now));
      hold.set(true);
      CachedAnswer second = answer(90, (byte) 2, now + 120_000);
      CompletableFuture<Boolean> stored = cache.fill(k, second).toCompletableFuture();
      try {
        assertArrayEquals("the answer on its way, not the hot one it replaces", second.wire(), cache.get(k, now).wire());
      } finally {
        release.countDown();
      }
      assertTrue(stored.get(10, TimeUnit.SECONDS));
      assertArrayEquals(second.wire(), cache.get(k, now).wire());
    }
  }

  @Test
  public void anEvictedAnswerIsAMissInEitherWhenFullMode() throws Exception {
    for (WhenFull whenFull : WhenFull.values()) {
      long now = System.currentTimeMillis();
      // One shard holding one answer: the second fill must evict the first.
      try (LmdbAnswerCache cache = cache(1, 1, whenFull)) {
        CacheKey first = key("first.example.");
        assertNotNull(heldInOverlay(cache, first, answer(100, (byte) 1, now + 60_000), now));

        CacheKey second = key("second.example.");
        assertTrue(await(cache.fill(second, answer(100, (byte) 2, now + 120_000))));
        committedEverywhere(cache);
        assertEquals(1, cache.size());
        assertNull(whenFull + ": the evicted answer is not served from the overlay", cache.get(first, now));
        assertNotNull(cache.get(second, now));
      }
    }
  }

  @Test
  public void aFlushedAnswerIsAMiss() throws Exception {
    long now = System.currentTimeMillis();
    try (LmdbAnswerCache cache = cache(4, 1000, WhenFull.EVICT_ONE)) {
      CacheKey k = key("gone.example.");
      CacheKey kept = key("kept.example.");
      assertNotNull(heldInOverlay(cache, k, answer(100, (byte) 1, now + 60_000), now));
      assertNotNull(heldInOverlay(cache, kept, answer(100, (byte) 2, now + 60_000), now));

      assertEquals(1, (int) cache.flushName("gone.example.", 0).toCompletableFuture().get(10, TimeUnit.SECONDS));
      assertNull("the flushed answer is not served from the overlay", cache.get(k, now));
      assertNotNull(cache.get(kept, now));
    }
  }

  @Test
  public void anAnswerHeldInTheOverlayStillExpiresAtItsOwnTime() throws Exception {
    long now = System.currentTimeMillis();
    try (LmdbAnswerCache cache = cache(2, 1000, WhenFull.EVICT_ONE)) {
      CacheKey k = key("short.example.");
      assertNotNull(heldInOverlay(cache, k, answer(100, (byte) 1, now + 5_000), now));
      assertNull(cache.get(k, now + 5_000));
    }
  }

  /**
   * Readers on several threads read a key while it is overwritten again and again: once a fill
   * has committed, no read that starts after it sees an older version.
   */
  @Test
  public void readersRacingOverwritesNeverSeeAVersionOlderThanTheLastCommit() throws Exception {
    long now = System.currentTimeMillis();
    try (LmdbAnswerCache cache = cache(1, 1000, WhenFull.EVICT_ONE)) {
      CacheKey k = key("racy.example.");
      AtomicInteger committed = new AtomicInteger(0);
      assertTrue(await(cache.fill(k, answer(64, (byte) 0, now + 600_000))));
      AtomicBoolean stop = new AtomicBoolean();
      ConcurrentLinkedQueue<String> stale = new ConcurrentLinkedQueue<>();
      AtomicInteger reads = new AtomicInteger();
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        Thread reader = new Thread(() -> {
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
          while (!stop.get() && System.nanoTime() < deadline) {
            int floor = committed.get();
            CachedAnswer a = cache.get(k, now);
            reads.incrementAndGet();
            if (a == null || a.wire()[0] < floor) {
              stale.add("read " + (a == null ? "a miss" : "version " + a.wire()[0]) + " after version " + floor
                  + " committed");
              return;
            }
          }
        }, "hot-reader-" + t);
        reader.start();
        readers.add(reader);
      }
      for (int version = 1; version <= 100 && stale.isEmpty(); version++) {
        assertTrue(await(cache.fill(k, answer(64, (byte) version, now + 600_000))));
        committed.set(version);
      }
      stop.set(true);
      for (Thread r : readers) {
        r.join(TimeUnit.SECONDS.toMillis(10));
      }
      assertTrue(String.join("; ", stale), stale.isEmpty());
      assertTrue("the readers read: " + reads.get(), reads.get() > 100);
      committedEverywhere(cache);
      assertEquals(100, cache.get(k, now).wire()[0]);
    }
  }
}
