package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheFixture.MIB;
import static io.shoal.cache.lmdb.CacheFixture.answer;
import static io.shoal.cache.lmdb.CacheFixture.key;
import static io.shoal.cache.lmdb.CacheFixture.open;
import static io.shoal.cache.lmdb.CacheFixture.settings;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.ManualTime;
import akka.actor.testkit.typed.javadsl.TestProbe;
import com.typesafe.config.ConfigFactory;
import io.shoal.cache.CacheSettings;
import io.shoal.cache.WhenFull;
import java.time.Duration;
import java.util.List;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/** What the shards do on timers (periodic sync, the commit window), on Akka's manual clock. */
public class ShardTimersSpec extends JUnitSuite {
  // A clock of its own per test: tasks a previous test left with the scheduler must not run here.
  private ActorTestKit testKit;
  private ManualTime time;

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Before
  public void start() {
    testKit = ActorTestKit.create("ShardTimersSpec", ManualTime.config().withFallback(ConfigFactory.load()));
    time = ManualTime.get(testKit.system());
  }

  @After
  public void shutdown() {
    testKit.shutdownTestKit();
  }

  /** A cache of two shards syncing in {@code sync} mode every 100 ms, once they are open. */
  private LmdbAnswerCache openSyncing(String name, SyncMode sync, TestProbe<CacheShard.Event> events) throws Exception {
    var s = settings(name, tmp.newFolder().toPath(), 2, 1000, WhenFull.EVICT_ONE, sync, Duration.ofMillis(100), 64 * MIB);
    LmdbAnswerCache cache = open(testKit, s, events);
    CacheShardSpec.awaitShardOpen(cache, 0);
    return cache;
  }

  @Test
  public void periodicSyncSyncsEveryShardOncePerSyncInterval() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = openSyncing("periodic", SyncMode.PERIODIC, events)) {
      for (int tick = 1; tick <= 10; tick++) {
        time.timePasses(Duration.ofMillis(100));
        int[] syncs = new int[2];
        for (int i = 0; i < 2; i++) {
          syncs[events.expectMessageClass(CacheShard.Synced.class, Duration.ofSeconds(10)).shard()]++;
        }
        assertEquals("tick " + tick + ": one sync per shard", List.of(1, 1), List.of(syncs[0], syncs[1]));
      }
      time.timePasses(Duration.ofMillis(99));
      events.expectNoMessage(Duration.ofMillis(200));
    }
  }

  @Test
  public void otherSyncModesHaveNoPeriodicSync() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    try (LmdbAnswerCache cache = openSyncing("full", SyncMode.FULL, events)) {
      time.timePasses(Duration.ofSeconds(1));
      events.expectNoMessage(Duration.ofMillis(200));
    }
  }

  @Test
  public void writeBehindFillsWaitForTheEndOfTheCommitWindow() throws Exception {
    TestProbe<CacheShard.Event> events = testKit.createTestProbe();
    CacheSettings windowed = CacheFixture.withCommitWindow(
        settings("window", tmp.newFolder().toPath(), 1, 10_000, WhenFull.EVICT_ONE), Duration.ofSeconds(10));
    try (LmdbAnswerCache cache = open(testKit, windowed, events)) {
      CacheShardSpec.awaitShardOpen(cache, 0);
      long now = System.currentTimeMillis();
      cache.fillBehind(key("w1.example."), answer(100, (byte) 1, now + 60_000));
      cache.fillBehind(key("w2.example."), answer(100, (byte) 2, now + 60_000));
      time.timePasses(Duration.ofSeconds(5));
      events.expectNoMessage(Duration.ofMillis(200));
      assertNotNull("served while it waits for its commit", cache.get(key("w1.example."), now));
      time.timePasses(Duration.ofSeconds(5));
      CacheShard.Committed c = events.expectMessageClass(CacheShard.Committed.class, Duration.ofSeconds(10));
      assertEquals("both fills of the window in one transaction", 2, c.fills());
      assertEquals(2, cache.size());
    }
  }
}
