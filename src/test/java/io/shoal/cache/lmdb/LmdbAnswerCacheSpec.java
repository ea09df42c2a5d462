package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheFixture.MIB;
import static io.shoal.cache.lmdb.CacheFixture.answer;
import static io.shoal.cache.lmdb.CacheFixture.await;
import static io.shoal.cache.lmdb.CacheFixture.awaitAll;
import static io.shoal.cache.lmdb.CacheFixture.key;
import static io.shoal.cache.lmdb.CacheFixture.commitsHeldWhile;
import static io.shoal.cache.lmdb.CacheFixture.open;
import static io.shoal.cache.lmdb.CacheFixture.openingHeldUntil;
import static io.shoal.cache.lmdb.CacheFixture.settings;
import static io.shoal.cache.lmdb.CacheShardSpec.awaitShardOpen;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.CacheKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import kamon.Kamon;
import kamon.metric.Counter;
import org.junit.AfterClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/** The cache as a node uses it: warm restart, flush by name, the bounded fill queue, its files. */
public class LmdbAnswerCacheSpec extends JUnitSuite {
  private static final ActorTestKit testKit = CacheFixture.testKit("LmdbAnswerCacheSpec");

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  @Test
  public void aNewCacheOnTheSamePathStartsWarm() throws Exception {
    Path path = tmp.newFolder().toPath();
    long now = System.currentTimeMillis();
    CacheKey lasting = key("lasting.example.");
    CacheKey brief = key("brief.example.");
    CachedAnswer lastingAnswer = answer(200, (byte) 4, now + 3_600_000);
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    // periodic: the answers reach the files through close's final sync.
    var first = settings("warm-first", path, 4, 1000, WhenFull.EVICT_ONE, SyncMode.PERIODIC,
        Duration.ofMinutes(1), 64 * MIB);
    try (LmdbAnswerCache cache = open(testKit, first, events)) {
      assertTrue(await(cache.fill(lasting, lastingAnswer)));
      assertTrue(await(cache.fill(brief, answer(200, (byte) 5, now + 1_000))));
    }

    var second = settings("warm-second", path, 4, 1000, WhenFull.EVICT_ONE, SyncMode.PERIODIC,
        Duration.ofMinutes(1), 64 * MIB);
    try (LmdbAnswerCache cache = open(testKit, second, events)) {
      for (int shard = 0; shard < 4; shard++) {
        awaitShardOpen(cache, shard);
      }
      assertEquals(2, cache.size());
      CachedAnswer hit = cache.get(lasting, now + 2_000);
      assertNotNull("a committed, unexpired answer is a hit after the restart", hit);
      assertArrayEquals(lastingAnswer.wire(), hit.wire());
      assertEquals(lastingAnswer.expiresAtMillis(), hit.expiresAtMillis());
      assertNotNull(cache.get(brief, now));
      assertNull("an answer that expired meanwhile is a miss", cache.get(brief, now + 2_000));
    }
  }

  @Test
  public void aChangedShardCountStartsCold() throws Exception {
    Path path = tmp.newFolder().toPath();
    long now = System.currentTimeMillis();
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("reshard-first", path, 2, 1000, WhenFull.EVICT_ONE), events)) {
      assertTrue(await(cache.fill(key("a.example."), answer(50, (byte) 1, now + 600_000))));
    }
    try (LmdbAnswerCache cache = open(testKit, settings("reshard-second", path, 3, 1000, WhenFull.EVICT_ONE), events)) {
      for (int shard = 0; shard < 3; shard++) {
        awaitShardOpen(cache, shard);
      }
      assertEquals("answers stored under another key-to-shard mapping are dropped", 0, cache.size());
      assertNull(cache.get(key("a.example."), now));
      assertTrue(await(cache.fill(key("a.example."), answer(50, (byte) 1, now + 600_000))));
      assertNotNull(cache.get(key("a.example."), now));
    }
  }

  /**
   * A load into a shard full of live answers stores nothing and evicts nothing; one whose soonest
   * entry has expired takes its place; a key held live keeps its answer.
   */
  @Test
  public void aLoadFillsOnlyFreeRoomAndNeverEvictsALiveAnswer() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("load", tmp.newFolder().toPath(), 1, 3, WhenFull.EVICT_ONE), events)) {
      long now = System.currentTimeMillis();
      CachedAnswer soon = answer(40, (byte) 1, now + 1_000);
      assertTrue(await(cache.fill(key("soon.example."), soon)));
      assertTrue(await(cache.fill(key("live.example."), answer(40, (byte) 2, now + 600_000))));
      List<AnswerCache.Keyed> load = List.of(
          new AnswerCache.Keyed(key("live.example."), answer(40, (byte) 3, now + 900_000)),
          new AnswerCache.Keyed(key("a.example."), answer(40, (byte) 4, now + 900_000)),
          new AnswerCache.Keyed(key("b.example."), answer(40, (byte) 5, now + 900_000)));
      AnswerCache.Loaded[] r = cache.loadIntoRoom(load, now).toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(List.of(AnswerCache.Loaded.ALREADY_CACHED, AnswerCache.Loaded.STORED, AnswerCache.Loaded.NO_ROOM),
          List.of(r));
      assertEquals(2, cache.get(key("live.example."), now).wire()[0]);
      assertNotNull("not evicted for a loaded answer", cache.get(key("soon.example."), now));
      assertNull(cache.get(key("b.example."), now));
      assertEquals(3, cache.size());

      // Once "soon" has expired, a loaded answer may take its place.
      AnswerCache.Loaded[] later = cache.loadIntoRoom(load.subList(2, 3), now + 2_000)
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(AnswerCache.Loaded.STORED, later[0]);
      assertNotNull(cache.get(key("b.example."), now + 2_000));
      assertNotNull(cache.get(key("live.example."), now + 2_000));
      assertEquals(3, cache.size());
    }
  }

  @Test
  public void flushNameRemovesEveryTypeOfThatNameInEveryShard() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("flush", tmp.newFolder().toPath(), 4, 1000, WhenFull.EVICT_ONE), events)) {
      long now = System.currentTimeMillis();
      List<CacheKey> flushed = List.of(
          CacheKey.of("www.example.", 1, 1, 0), CacheKey.of("www.example.", 28, 1, 0),
          CacheKey.of("www.example.", 15, 1, 0), CacheKey.of("www.example.", 1, 1, CacheKey.FLAG_DO));
      List<CacheKey> kept = List.of(
          CacheKey.of("example.", 1, 1, 0), CacheKey.of("a.www.example.", 1, 1, 0), CacheKey.of("www.example.org.", 1, 1, 0));
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (CacheKey k : flushed) {
        fills.add(cache.fill(k, answer(60, (byte) 1, now + 600_000)));
      }
      for (CacheKey k : kept) {
        fills.add(cache.fill(k, answer(60, (byte) 1, now + 600_000)));
      }
      awaitAll(fills);

      int removed = cache.flushName("WWW.Example", 0).toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(4, removed);
      for (CacheKey k : flushed) {
        assertNull(k + " flushed", cache.get(k, now));
      }
      for (CacheKey k : kept) {
        assertNotNull(k + " kept", cache.get(k, now));
      }
      assertEquals(3, cache.size());
    }
  }

  @Test
  public void removeIfStoredByRemovesThatKeyUnlessItWasStoredSince() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("release", tmp.newFolder().toPath(), 4, 1000, WhenFull.EVICT_ONE), events)) {
      long now = System.currentTimeMillis();
      CacheKey released = key("released.example.");
      CacheKey releasedDo = CacheKey.of("released.example.", 1, 1, CacheKey.FLAG_DO);
      CacheKey refetched = key("refetched.example.");
      CachedAnswer sent = answer(60, (byte) 1, now + 600_000);
      awaitAll(List.of(cache.fill(released, sent), cache.fill(releasedDo, sent), cache.fill(refetched, sent)));
      // Read once, so the hot answers hold it: they must let it go with LMDB.
      assertNotNull(cache.get(released, now));
      // Fetched afresh after the copy was sent: stored later, not queued behind the release's commit.
      CompletionStage<Boolean> fresh = cache.fill(refetched, answer(60, (byte) 2, now + 700_000));

      CompletionStage<Boolean> r1 = cache.removeIfStoredBy(released, sent.storedAtMillis());
      CompletionStage<Boolean> r2 = cache.removeIfStoredBy(refetched, sent.storedAtMillis());
      CompletionStage<Boolean> r3 = cache.removeIfStoredBy(key("absent.example."), sent.storedAtMillis());
      assertTrue(await(fresh));
      assertTrue(await(r1));
      assertFalse("an answer stored since stays", await(r2));
      assertFalse(await(r3));

      assertNull(cache.get(released, now));
      assertNotNull("only the key released", cache.get(releasedDo, now));
      assertEquals(2, cache.get(refetched, now).wire()[0]);
      assertEquals(2, cache.size());
    }
  }

  @Test
  public void aFullFillQueueDropsTheFillAndCountsIt() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    Counter dropped = Kamon.counter("shoal.dropped").withTag("reason", ServerMetrics.FILL_QUEUE_FULL);
    long droppedBefore = ((Counter.LongAdder) dropped).snapshot(false);
    var s = settings("queue", tmp.newFolder().toPath(), 1, 1000, WhenFull.EVICT_ONE);
    CountDownLatch release = new CountDownLatch(1);
    try (LmdbAnswerCache cache = open(testKit, s, events, 10, Duration.ofMillis(200), openingHeldUntil(release))) {
      long now = System.currentTimeMillis();
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (int i = 0; i < 15; i++) {
        fills.add(cache.fill(key("q" + i + ".example."), answer(60, (byte) i, now + 600_000)));
      }
      for (int i = 10; i < 15; i++) {
        assertFalse("beyond the limit a fill is dropped at once", await(fills.get(i)));
      }
      assertEquals(5, ((Counter.LongAdder) dropped).snapshot(false) - droppedBefore);
      release.countDown();
      for (int i = 0; i < 10; i++) {
        assertTrue(await(fills.get(i)));
      }
      assertNull(cache.get(key("q12.example."), now));
      // Once the shard caught up, the queue has room again.
      assertTrue(await(cache.fill(key("q12.example."), answer(60, (byte) 1, now + 600_000))));
      assertNotNull(cache.get(key("q12.example."), now));
    }
  }

  @Test
  public void answersWaitingForTheirCommitCountAgainstMaxEntries() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    var s = settings("fair", tmp.newFolder().toPath(), 1, 4, WhenFull.EVICT_ONE);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean hold = new AtomicBoolean();
    try (LmdbAnswerCache cache = open(testKit, s, events, 4096, Duration.ofMillis(200),
        commitsHeldWhile(hold, release))) {
      long now = System.currentTimeMillis();
      List<CacheKey> committed = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        CacheKey k = key("old" + i + ".example.");
        committed.add(k);
        // old0 expires first, old3 last
        assertTrue(await(cache.fill(k, answer(60, (byte) i, now + 600_000 + i * 1000))));
      }
      hold.set(true);
      CacheKey new0 = key("new0.example.");
      CacheKey new1 = key("new1.example.");
      CompletionStage<Boolean> f0 = cache.fill(new0, answer(60, (byte) 9, now + 900_000));
      CompletionStage<Boolean> f1 = cache.fill(new1, answer(60, (byte) 9, now + 900_000));
      // Not committed yet, yet the memory backend would hold exactly these four now:
      assertNotNull(cache.get(new0, now));
      assertNotNull(cache.get(new1, now));
      assertNull("displaced by a waiting answer", cache.get(committed.get(0), now));
      assertNull("displaced by a waiting answer", cache.get(committed.get(1), now));
      assertNotNull(cache.get(committed.get(2), now));
      assertNotNull(cache.get(committed.get(3), now));
      release.countDown();
      assertTrue(await(f0));
      assertTrue(await(f1));
      // The commit evicted the same two, for good.
      assertEquals(4, cache.size());
      assertNull(cache.get(committed.get(0), now));
      assertNull(cache.get(committed.get(1), now));
      assertNotNull(cache.get(committed.get(2), now));
      assertNotNull(cache.get(new1, now));
    }
  }

  @Test
  public void moreAnswersWaitingThanMaxEntriesServeOnlyTheNewest() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    var s = settings("over", tmp.newFolder().toPath(), 1, 4, WhenFull.EVICT_ONE);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean hold = new AtomicBoolean(true);
    try (LmdbAnswerCache cache = open(testKit, s, events, 4096, Duration.ofMillis(200),
        commitsHeldWhile(hold, release))) {
      long now = System.currentTimeMillis();
      List<CacheKey> keys = new ArrayList<>();
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        CacheKey k = key("w" + i + ".example.");
        keys.add(k);
        // w0 expires first, w9 last: evict_one at the commit keeps w6 to w9
        fills.add(cache.fill(k, answer(60, (byte) i, now + 600_000 + i * 1000)));
      }
      // Ten answers wait for one commit in a cache of four: the memory backend would hold the
      // last four filled, and so does this one before the commit.
      for (int i = 0; i < 10; i++) {
        if (i < 6) {
          assertNull("w" + i + " evicted by the newer answers waiting behind it", cache.get(keys.get(i), now));
        } else {
          assertNotNull("w" + i + " among the newest four", cache.get(keys.get(i), now));
        }
      }
      hold.set(false);
      release.countDown();
      for (CompletionStage<Boolean> f : fills) {
        await(f);
      }
      assertEquals(4, cache.size());
      for (int i = 0; i < 10; i++) {
        assertEquals("w" + i + " after the commit", i >= 6, cache.get(keys.get(i), now) != null);
      }
    }
  }

  @Test
  public void shardDirectoriesArePrivateAndRecognisable() throws Exception {
    Path path = tmp.newFolder().toPath().resolve("answers");
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = open(testKit, settings("files", path, 2, 1000, WhenFull.SAMPLE), events)) {
      assertTrue(await(cache.fill(key("f.example."), answer(60, (byte) 1, System.currentTimeMillis() + 600_000))));
      awaitShardOpen(cache, 0);
      awaitShardOpen(cache, 1);
      assertTrue(Files.exists(path.resolve(AnswerCodec.LAYOUT_FILE)));
      assertEquals("rw-------", perms(path.resolve(AnswerCodec.LAYOUT_FILE)));
      assertEquals("rwx------", perms(path));
      for (String shard : List.of("shard-00", "shard-01")) {
        Path dir = path.resolve(shard);
        assertEquals("rwx------", perms(dir));
        assertEquals("rw-------", perms(dir.resolve("data.mdb")));
        assertEquals("rw-------", perms(dir.resolve("lock.mdb")));
        // The database names, stored in the main database's keys, mark the file as a shoal shard.
        String data = new String(Files.readAllBytes(dir.resolve("data.mdb")), java.nio.charset.StandardCharsets.ISO_8859_1);
        assertTrue(data.contains(AnswerCodec.ANSWERS) && data.contains(AnswerCodec.EXPIRY));
      }
    }
  }

  private static String perms(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }
}
