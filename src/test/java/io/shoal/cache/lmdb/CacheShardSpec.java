package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheFixture.MIB;
import static io.shoal.cache.lmdb.CacheFixture.answer;
import static io.shoal.cache.lmdb.CacheFixture.await;
import static io.shoal.cache.lmdb.CacheFixture.awaitAll;
import static io.shoal.cache.lmdb.CacheFixture.key;
import static io.shoal.cache.lmdb.CacheFixture.commitsHeldUntil;
import static io.shoal.cache.lmdb.CacheFixture.open;
import static io.shoal.cache.lmdb.CacheFixture.openingHeldUntil;
import static io.shoal.cache.lmdb.CacheFixture.settings;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.cache.CacheSettings;
import io.shoal.wire.CacheKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/** A shard's writes: commit and read-back, group commit, periodic sync, when_full, a full map. */
public class CacheShardSpec extends JUnitSuite {
  private static final ActorTestKit testKit = CacheFixture.testKit("CacheShardSpec");

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  @Test
  public void fillIsCommittedAndReadableFromAnotherThread() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("read", tmp.newFolder().toPath(), 4, 1000, WhenFull.EVICT_ONE), events)) {
      long now = System.currentTimeMillis();
      CacheKey k = key("www.example.");
      CachedAnswer a = answer(300, (byte) 7, now + 60_000);

      assertTrue(await(cache.fill(k, a)));
      CacheShard.Committed c = events.expectMessageClass(CacheShard.Committed.class);
      assertEquals(LmdbAnswerCache.shardOf(k, 4), c.shard());
      assertEquals(1, c.fills());

      CompletableFuture<CachedAnswer> read = CompletableFuture.supplyAsync(() -> cache.get(k, now));
      CachedAnswer got = read.get(10, TimeUnit.SECONDS);
      assertNotNull(got);
      assertArrayEquals(a.wire(), got.wire());
      assertArrayEquals(a.ttlOffsets(), got.ttlOffsets());
      assertEquals(a.expiresAtMillis(), got.expiresAtMillis());
      assertEquals(a.storedAtMillis(), got.storedAtMillis());
      assertEquals(1, cache.size());
      assertNull("an entry is a miss once expired", cache.get(k, a.expiresAtMillis()));
      assertNull(cache.get(key("other.example."), now));
    }
  }

  @Test
  public void fillsWaitingInTheMailboxShareOneTransaction() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    CountDownLatch release = new CountDownLatch(1);
    try (LmdbAnswerCache cache = open(testKit, settings("batch", tmp.newFolder().toPath(), 1, 10_000, WhenFull.EVICT_ONE),
        events, 4096, Duration.ofMillis(200), openingHeldUntil(release))) {
      long now = System.currentTimeMillis();
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (int i = 0; i < 250; i++) {
        fills.add(cache.fill(key("host" + i + ".example."), answer(100, (byte) i, now + 60_000)));
      }
      release.countDown();

      assertTrue(awaitAll(fills).stream().allMatch(Boolean::booleanValue));
      CacheShard.Committed c = events.expectMessageClass(CacheShard.Committed.class);
      assertEquals("one transaction covered every queued fill", 250, c.fills());
      events.expectNoMessage(Duration.ofMillis(200));
      assertEquals(250, cache.size());
      assertNotNull(cache.get(key("host249.example."), now));
    }
  }

  @Test
  public void aCommitWindowGathersWriteBehindFillsAndAnAwaitedFillEndsIt() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    // A window far longer than the test waits: only the awaited fill can end it in time.
    CacheSettings windowed = CacheFixture.withCommitWindow(
        settings("window", tmp.newFolder().toPath(), 1, 10_000, WhenFull.EVICT_ONE), Duration.ofSeconds(60));
    try (LmdbAnswerCache cache = open(testKit, windowed, events)) {
      awaitShardOpen(cache, 0);
      long now = System.currentTimeMillis();
      cache.fillBehind(key("w1.example."), answer(100, (byte) 1, now + 60_000));
      Thread.sleep(100);
      cache.fillBehind(key("w2.example."), answer(100, (byte) 2, now + 60_000));
      events.expectNoMessage(Duration.ofMillis(300));
      assertNotNull("served while it waits for its commit", cache.get(key("w1.example."), now));
      CompletionStage<Boolean> awaited = cache.fill(key("w3.example."), answer(100, (byte) 3, now + 60_000));
      assertTrue(awaited.toCompletableFuture().get(20, TimeUnit.SECONDS));
      CacheShard.Committed c = events.expectMessageClass(CacheShard.Committed.class);
      assertEquals("the write-behind fills gathered in the window share the awaited fill's transaction", 3, c.fills());
    }
  }

  @Test
  public void aFillIsAHitBeforeItsCommitAndStaysOneAfter() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    CountDownLatch release = new CountDownLatch(1);
    try (LmdbAnswerCache cache = open(testKit, settings("overlay", tmp.newFolder().toPath(), 1, 10_000, WhenFull.EVICT_ONE),
        events, 4096, Duration.ofMillis(200), commitsHeldUntil(release))) {
      awaitShardOpen(cache, 0);
      long now = System.currentTimeMillis();
      CompletionStage<Boolean> fill = cache.fill(key("early.example."), answer(100, (byte) 7, now + 60_000));
      assertFalse("the shard is held: nothing is committed yet", fill.toCompletableFuture().isDone());
      assertNotNull("a slow commit must not turn the next query into a miss", cache.get(key("early.example."), now));
      assertNull("expiry still applies before the commit", cache.get(key("early.example."), now + 60_000));
      release.countDown();
      assertTrue(fill.toCompletableFuture().get(30, TimeUnit.SECONDS));
      assertNotNull(cache.get(key("early.example."), now));
    }
  }

  @Test
  public void evictOneRemovesTheSoonestToExpireAndKeepsTheCap() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("evict-one", tmp.newFolder().toPath(), 1, 10, WhenFull.EVICT_ONE), events)) {
      long now = System.currentTimeMillis();
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        // host3 expires soonest; the others later, in no particular key order.
        long expires = i == 3 ? now + 50_000 : now + 100_000 + ((i * 7919L) % 10) * 1000;
        fills.add(cache.fill(key("host" + i + ".example."), answer(80, (byte) i, expires)));
      }
      awaitAll(fills);
      assertEquals(10, cache.size());

      assertTrue(await(cache.fill(key("late.example."), answer(80, (byte) 1, now + 500_000))));
      assertEquals("the cap holds", 10, cache.size());
      assertNull("the soonest to expire went", cache.get(key("host3.example."), now));
      assertNotNull(cache.get(key("late.example."), now));
      for (int i = 0; i < 10; i++) {
        if (i != 3) {
          assertNotNull("host" + i + " stays", cache.get(key("host" + i + ".example."), now));
        }
      }

      // Replacing an answer must not count twice nor leave its old expiry in the index.
      assertTrue(await(cache.fill(key("host5.example."), answer(80, (byte) 9, now + 1_000))));
      assertEquals(10, cache.size());
      assertTrue(await(cache.fill(key("newer.example."), answer(80, (byte) 2, now + 600_000))));
      assertNull("the replaced answer's new, soonest expiry made it the victim",
          cache.get(key("host5.example."), now));
      assertEquals(10, cache.size());
    }
  }

  /**
   * The expiry order lives in the heap: a transaction that fills the shard three times over
   * leaves in LMDB exactly the answers that expire last, and a cache opened again on the
   * directory rebuilds the order from them, so it evicts the soonest-expiring of those.
   */
  @Test
  public void evictOneKeepsItsOrderAcrossABatchAndARestart() throws Exception {
    Path path = tmp.newFolder().toPath();
    long now = System.currentTimeMillis();
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    // A window far longer than the test waits: the awaited last fill ends it, one transaction for all.
    CacheSettings windowed = CacheFixture.withCommitWindow(
        settings("order-first", path, 1, 10, WhenFull.EVICT_ONE), Duration.ofSeconds(60));
    try (LmdbAnswerCache cache = open(testKit, windowed, events)) {
      awaitShardOpen(cache, 0);
      for (int i = 0; i < 29; i++) {
        // Keys in no particular order of expiry: host(i) expires i seconds after host0.
        cache.fillBehind(key("host" + i + ".example."), answer(80, (byte) i, now + 100_000 + i * 1000L));
      }
      assertTrue(await(cache.fill(key("host29.example."), answer(80, (byte) 29, now + 129_000))));
      assertEquals("one transaction", 30, events.expectMessageClass(CacheShard.Committed.class).fills());
      assertEquals(10, cache.size());
    }
    try (CacheDirectory dir = CacheDirectory.open(path, CacheDirectory.Access.EXCLUSIVE_READ)) {
      Set<String> stored = new TreeSet<>();
      dir.dump(null, Long.MAX_VALUE, e -> stored.add(e.key().name()));
      Set<String> last = new TreeSet<>();
      for (int i = 20; i < 30; i++) {
        last.add("host" + i + ".example.");
      }
      assertEquals("the ten that expire last, and nothing else", last, stored);
      assertEquals("no expiry index in LMDB", 0, dir.stat(now).get(0).indexed());
    }
    try (LmdbAnswerCache cache = open(testKit, settings("order-second", path, 1, 10, WhenFull.EVICT_ONE), events)) {
      awaitShardOpen(cache, 0);
      assertEquals(10, cache.size());
      assertTrue(await(cache.fill(key("late.example."), answer(80, (byte) 1, now + 500_000))));
      assertEquals("the cap holds after the restart", 10, cache.size());
      assertNull("the soonest to expire went", cache.get(key("host20.example."), now));
      assertNotNull(cache.get(key("host21.example."), now));
      assertNotNull(cache.get(key("late.example."), now));
    }
  }

  @Test
  public void evictOneSweepsExpiredEntriesItMeets() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("sweep", tmp.newFolder().toPath(), 1, 10, WhenFull.EVICT_ONE), events)) {
      long now = System.currentTimeMillis();
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        long expires = i < 3 ? now - 10_000 + i : now + 100_000 + i;
        fills.add(cache.fill(key("host" + i + ".example."), answer(80, (byte) i, expires)));
      }
      awaitAll(fills);
      assertTrue(await(cache.fill(key("late.example."), answer(80, (byte) 1, now + 500_000))));
      assertEquals("the victim and the two other expired entries went", 8, cache.size());
    }
  }

  @Test
  public void sampleKeepsTheCap() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("sample", tmp.newFolder().toPath(), 2, 50, WhenFull.SAMPLE), events)) {
      long now = System.currentTimeMillis();
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (int i = 0; i < 500; i++) {
        fills.add(cache.fill(key("host" + i + ".example."), answer(80, (byte) i, now + 100_000 + i * 10L)));
      }
      assertTrue(awaitAll(fills).stream().allMatch(Boolean::booleanValue));
      assertEquals("each shard holds its share, 25", 50, cache.size());
      assertNotNull("the newest answer is in", cache.get(key("host499.example."), now));
    }
  }

  @Test
  public void aFullMapNeverFailsAFillOrARead() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    var s = settings("tiny", tmp.newFolder().toPath(), 1, 100_000, WhenFull.EVICT_ONE, SyncMode.NONE,
        Duration.ofSeconds(1), MIB);
    try (LmdbAnswerCache cache = open(testKit, s, events)) {
      long now = System.currentTimeMillis();
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      List<CacheKey> keys = new ArrayList<>();
      for (int i = 0; i < 120; i++) {
        CacheKey k = key("big" + i + ".example.");
        keys.add(k);
        // 60 KiB answers: a 1 MiB map holds about a dozen.
        fills.add(cache.fill(k, answer(60_000, (byte) i, now + 100_000 + i)));
      }
      List<Boolean> stored = awaitAll(fills);
      for (CacheKey k : keys) {
        cache.get(k, now);
      }
      assertTrue("the last answer was stored", stored.get(stored.size() - 1));
      assertNotNull(cache.get(keys.get(keys.size() - 1), now));
      long held = cache.size();
      assertTrue("some answers held: " + held, held > 0 && held < 120);

      // One at a time, too: each fill must find room by evicting.
      for (int i = 0; i < 30; i++) {
        CacheKey k = key("more" + i + ".example.");
        assertTrue(await(cache.fill(k, answer(60_000, (byte) i, now + 200_000 + i))));
        assertNotNull(cache.get(k, now));
      }
    }
  }

  /**
   * Waits until {@code shard} (and every other shard) is open: a flush is answered only by a
   * shard that has opened its store.
   */
  static void awaitShardOpen(LmdbAnswerCache cache, int shard) throws Exception {
    assertEquals("shard " + shard + " opened", 0,
        (int) cache.flushName("not-cached.example.", 0).toCompletableFuture().get(10, TimeUnit.SECONDS));
  }
}
