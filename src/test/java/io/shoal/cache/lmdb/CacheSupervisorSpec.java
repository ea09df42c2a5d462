package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheFixture.answer;
import static io.shoal.cache.lmdb.CacheFixture.await;
import static io.shoal.cache.lmdb.CacheFixture.awaitAll;
import static io.shoal.cache.lmdb.CacheFixture.failing;
import static io.shoal.cache.lmdb.CacheFixture.keysPerShard;
import static io.shoal.cache.lmdb.CacheFixture.open;
import static io.shoal.cache.lmdb.CacheFixture.settings;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.FishingOutcomes;
import akka.actor.testkit.typed.javadsl.TestProbe;
import io.shoal.cache.WhenFull;
import io.shoal.wire.CacheKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.AfterClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/** A shard whose store fails restarts with its store reopened, and the other shards never notice. */
public class CacheSupervisorSpec extends JUnitSuite {
  private static final ActorTestKit testKit = CacheFixture.testKit("CacheSupervisorSpec");

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  private static <E extends CacheShard.Event> E expectEvent(TestProbe<CacheShard.Event> events, Class<E> kind, int shard) {
    CacheShard.Event e = events.fishForMessage(Duration.ofSeconds(10), m -> kind.isInstance(m)
            && (m instanceof CacheShard.Failed f ? f.shard() == shard : ((CacheShard.Reopened) m).shard() == shard)
        ? FishingOutcomes.complete()
        : FishingOutcomes.continueAndIgnore()).get(0);
    return kind.cast(e);
  }

  @Test
  public void aFailedShardRestartsWhileTheOthersServe() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    int shards = 4;
    var s = settings("restart", tmp.newFolder().toPath(), shards, 10_000, WhenFull.EVICT_ONE);
    AtomicInteger failedOpens = new AtomicInteger();
    AtomicInteger failedCommits = new AtomicInteger();
    // A long first back-off leaves time to look at the cache while the shard is down.
    try (LmdbAnswerCache cache = open(testKit, s, events, 4096, Duration.ofSeconds(2),
        failing(failedOpens, failedCommits))) {
      long now = System.currentTimeMillis();
      List<List<CacheKey>> keys = keysPerShard("svc", shards, 5);
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (List<CacheKey> shardKeys : keys) {
        for (CacheKey k : shardKeys.subList(0, 4)) {
          fills.add(cache.fill(k, answer(120, (byte) 1, now + 600_000)));
        }
      }
      assertTrue(awaitAll(fills).stream().allMatch(Boolean::booleanValue));

      int failed = 1;
      CacheKey failedKey = keys.get(failed).get(0);
      assertNotNull(cache.get(failedKey, now));
      failedCommits.set(1);
      CompletionStage<Boolean> lost = cache.fill(keys.get(failed).get(4), answer(120, (byte) 5, now + 600_000));
      assertFalse("the fill of the failed commit is answered as not stored", await(lost));
      assertTrue(expectEvent(events, CacheShard.Failed.class, failed).reason().contains("injected"));

      assertNull("keys of a shard that is down are misses, not errors", cache.get(failedKey, now));
      for (int other = 0; other < shards; other++) {
        if (other != failed) {
          for (CacheKey k : keys.get(other).subList(0, 4)) {
            assertNotNull("shard " + other + " keeps serving", cache.get(k, now));
          }
        }
      }
      // A fill for the shard that is down waits for it instead of failing.
      CompletionStage<Boolean> whileDown = cache.fill(keys.get(failed).get(1), answer(120, (byte) 2, now + 700_000));
      CompletionStage<Boolean> elsewhere = cache.fill(keys.get(0).get(1), answer(120, (byte) 3, now + 700_000));
      assertTrue(await(elsewhere));
      assertFalse("not committed while the shard is down", whileDown.toCompletableFuture().isDone());

      expectEvent(events, CacheShard.Reopened.class, failed);
      assertNotNull("the restarted shard serves its committed answers", cache.get(failedKey, now));
      assertTrue(await(whileDown));
      var refreshed = cache.get(keys.get(failed).get(1), now);
      assertNotNull(refreshed);
      assertTrue(refreshed.wire()[0] == 2);
    }
  }

  @Test
  public void failuresBackToBackStillEndWithTheShardServingAndNothingLost() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    int shards = 2;
    var s = settings("again", tmp.newFolder().toPath(), shards, 10_000, WhenFull.EVICT_ONE);
    AtomicInteger failedOpens = new AtomicInteger();
    AtomicInteger failedCommits = new AtomicInteger();
    try (LmdbAnswerCache cache = open(testKit, s, events, 4096, Duration.ofMillis(50),
        failing(failedOpens, failedCommits))) {
      long now = System.currentTimeMillis();
      List<List<CacheKey>> keys = keysPerShard("again", shards, 3);
      int failing = 0;
      CacheShardSpec.awaitShardOpen(cache, failing);
      // Three failures in a row: a commit takes the shard down, then its next two opens fail.
      failedCommits.set(1);
      failedOpens.set(2);
      assertFalse(await(cache.fill(keys.get(failing).get(1), answer(120, (byte) 3, now + 600_000))));
      CompletionStage<Boolean> fill = cache.fill(keys.get(failing).get(0), answer(120, (byte) 4, now + 600_000));
      CompletionStage<Integer> flushed = cache.flushName("not-cached.example.", 0);

      for (int i = 0; i < 3; i++) {
        expectEvent(events, CacheShard.Failed.class, failing);
      }
      expectEvent(events, CacheShard.Reopened.class, failing);
      assertTrue("the fill that waited through three failures is committed", await(fill));
      assertEquals("the flush that waited is answered", 0, (int) flushed.toCompletableFuture().get(10, TimeUnit.SECONDS));
      var stored = cache.get(keys.get(failing).get(0), now);
      assertNotNull("the waiting fill is served", stored);
      assertTrue(stored.wire()[0] == 4);
    }
  }
}
