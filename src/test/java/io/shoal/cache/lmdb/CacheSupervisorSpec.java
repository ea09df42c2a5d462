package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheFixture.answer;
import static io.shoal.cache.lmdb.CacheFixture.await;
import static io.shoal.cache.lmdb.CacheFixture.awaitAll;
import static io.shoal.cache.lmdb.CacheFixture.keysPerShard;
import static io.shoal.cache.lmdb.CacheFixture.open;
import static io.shoal.cache.lmdb.CacheFixture.settings;
import static io.shoal.cache.lmdb.CacheShardSpec.awaitShardOpen;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import io.shoal.cache.WhenFull;
import io.shoal.wire.CacheKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/** A failed shard restarts with its environment reopened, and the other shards never notice. */
public class CacheSupervisorSpec extends JUnitSuite {
  private static final ActorTestKit testKit = CacheFixture.testKit("CacheSupervisorSpec");

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @AfterClass
  public static void shutdown() {
    testKit.shutdownTestKit();
  }

  @Test
  public void aFailedShardRestartsWhileTheOthersServe() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    int shards = 4;
    var s = settings("restart", tmp.newFolder().toPath(), shards, 10_000, WhenFull.EVICT_ONE);
    // A long first backoff leaves time to look at the cache while the shard is down.
    try (LmdbAnswerCache cache = open(testKit, s, events, 4096, Duration.ofSeconds(2))) {
      long now = System.currentTimeMillis();
      List<List<CacheKey>> keys = keysPerShard("svc", shards, 5);
      List<CompletionStage<Boolean>> fills = new ArrayList<>();
      for (List<CacheKey> shardKeys : keys) {
        for (CacheKey k : shardKeys) {
          fills.add(cache.fill(k, answer(120, (byte) 1, now + 600_000)));
        }
      }
      assertTrue(awaitAll(fills).stream().allMatch(Boolean::booleanValue));

      int failed = 1;
      CacheKey failedKey = keys.get(failed).get(0);
      assertNotNull(cache.get(failedKey, now));
      cache.writer(failed).tell(new CacheShard.InjectedFailure("injected by CacheSupervisorSpec"));

      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (cache.shardOpen(failed)) {
        assertTrue("the failed shard closed its environment", System.nanoTime() < deadline);
        Thread.sleep(5);
      }
      assertNull("keys of a shard that is down are misses, not errors", cache.get(failedKey, now));
      for (int other = 0; other < shards; other++) {
        if (other != failed) {
          for (CacheKey k : keys.get(other)) {
            assertNotNull("shard " + other + " keeps serving", cache.get(k, now));
          }
        }
      }
      // A fill for the shard that is down waits for it instead of failing.
      CompletionStage<Boolean> whileDown = cache.fill(keys.get(failed).get(1), answer(120, (byte) 2, now + 700_000));
      CompletionStage<Boolean> elsewhere = cache.fill(keys.get(0).get(1), answer(120, (byte) 3, now + 700_000));
      assertTrue(await(elsewhere));
      assertFalse("not committed while the shard is down", whileDown.toCompletableFuture().isDone());

      awaitShardOpen(cache, failed);
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
    try (LmdbAnswerCache cache = open(testKit, s, events, 4096, Duration.ofMillis(50))) {
      long now = System.currentTimeMillis();
      List<List<CacheKey>> keys = keysPerShard("again", shards, 3);
      int failing = 0;
      awaitShardOpen(cache, failing);
      // Three failures in a row: the first takes the shard down, the others arrive while it is
      // down and fail it again each time it replays them after a reopen.
      for (int i = 0; i < 3; i++) {
        cache.writer(failing).tell(new CacheShard.InjectedFailure("failure " + i + " injected by CacheSupervisorSpec"));
      }
      CompletionStage<Boolean> fill = cache.fill(keys.get(failing).get(0), answer(120, (byte) 4, now + 600_000));
      TestProbe<Integer> flushed = testKit.createTestProbe();
      cache.writer(failing).tell(new CacheShard.FlushName(
          CacheKey.nameToWire("not-cached.example."), 0, flushed.ref()));

      for (int i = 0; i < 3; i++) {
        events.fishForMessage(Duration.ofSeconds(10), e -> e instanceof CacheShard.Failed
            ? akka.actor.testkit.typed.javadsl.FishingOutcomes.complete()
            : akka.actor.testkit.typed.javadsl.FishingOutcomes.continueAndIgnore());
      }
      events.fishForMessage(Duration.ofSeconds(10), e -> e instanceof CacheShard.Reopened
          ? akka.actor.testkit.typed.javadsl.FishingOutcomes.complete()
          : akka.actor.testkit.typed.javadsl.FishingOutcomes.continueAndIgnore());
      assertTrue("the fill held through three failures is committed", await(fill));
      flushed.expectMessage(Duration.ofSeconds(10), 0);
      awaitShardOpen(cache, failing);
      var stored = cache.get(keys.get(failing).get(0), now);
      assertNotNull("the held fill is served", stored);
      assertTrue(stored.wire()[0] == 4);
    }
  }
}
