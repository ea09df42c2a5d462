package io.shoal.cache.lmdb;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import com.typesafe.config.ConfigFactory;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.cache.CacheSettings;
import io.shoal.metrics.CacheMetrics;
import io.shoal.testing.StoredAnswers;
import io.shoal.wire.CacheKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/** Builds LMDB caches, keys and answers for the lmdb specs; each cache lives in its own temp dir. */
final class CacheFixture {
  static final long MIB = 1L << 20;
  /** hot_entries of the specs' caches: every answer they read is served from the overlay after its first read. */
  static final long HOT_ENTRIES = 4096;

  private CacheFixture() {}

  /**
   * A test kit on the node's own configuration: ActorTestKit's default (application-test.conf)
   * lacks shoal.lmdb-dispatcher, which the shards are spawned on.
   */
  static ActorTestKit testKit(String name) {
    return ActorTestKit.create(name, ConfigFactory.load());
  }

  static CacheSettings settings(
      String name, Path path, int shards, long maxEntries, WhenFull whenFull, SyncMode sync,
      Duration syncInterval, long mapSize) {
    return new CacheSettings(name, CacheSettings.Backend.LMDB, maxEntries, whenFull, Duration.ZERO,
        Duration.ofDays(1), Duration.ofMinutes(15), Duration.ofSeconds(5),
        new LmdbSettings(path, shards, sync, syncInterval, mapSize, Duration.ZERO, HOT_ENTRIES));
  }

  static CacheSettings settings(String name, Path path, int shards, long maxEntries, WhenFull whenFull) {
    return settings(name, path, shards, maxEntries, whenFull, SyncMode.FULL, Duration.ofSeconds(1), 64 * MIB);
  }

  static LmdbAnswerCache open(
      ActorTestKit testKit, CacheSettings settings, TestProbe<CacheShard.Event> events, int fillQueueLimit,
      Duration minBackoff) {
    return LmdbAnswerCache.open(StoredAnswers.spawner(testKit), testKit.system(), settings,
        new CacheMetrics(settings.name(), "lmdb"),
        new LmdbAnswerCache.Tuning(fillQueueLimit, minBackoff, minBackoff.multipliedBy(4), events.ref()));
  }

  /** A cache whose shards open their stores through {@code opener} (a store that fails or waits). */
  static LmdbAnswerCache open(
      ActorTestKit testKit, CacheSettings settings, TestProbe<CacheShard.Event> events, int fillQueueLimit,
      Duration minBackoff, CacheShard.Opener opener) {
    return LmdbAnswerCache.open(StoredAnswers.spawner(testKit), testKit.system(), settings,
        new CacheMetrics(settings.name(), "lmdb"),
        new LmdbAnswerCache.Tuning(fillQueueLimit, minBackoff, minBackoff.multipliedBy(4), events.ref(), opener));
  }

  /** Shards that do not open before {@code release}: whatever is filled meanwhile waits in their queues. */
  static CacheShard.Opener openingHeldUntil(CountDownLatch release) {
    return (settings, metrics) -> {
      awaitRelease(release);
      return ShardFiles.open(settings, metrics);
    };
  }

  /** Stores whose commits wait for {@code release}: the fills of such a commit wait with it. */
  static CacheShard.Opener commitsHeldUntil(CountDownLatch release) {
    return commitsHeldWhile(new AtomicBoolean(true), release);
  }

  /** Stores whose commits, once {@code hold} is set, wait for {@code release}. */
  static CacheShard.Opener commitsHeldWhile(AtomicBoolean hold, CountDownLatch release) {
    return (settings, metrics) -> ShardFiles.open(settings, metrics, (s, env, db, m) -> new ShardStore(s, env, db, m) {
      @Override
      void commit(List<Fill> fills, long nowMillis, Outcome outcome) {
        if (hold.get()) {
          awaitRelease(release);
        }
        super.commit(fills, nowMillis, outcome);
      }
    });
  }

  /**
   * Stores that fail, the way a broken disk makes LMDB fail: the next {@code commits} commits and
   * the next {@code opens} opens, counted across every shard and every reopen.
   */
  static CacheShard.Opener failing(AtomicInteger opens, AtomicInteger commits) {
    return (settings, metrics) -> {
      if (opens.getAndDecrement() > 0) {
        throw new IllegalStateException("open of shard " + settings.shard() + " failed (injected by the test)");
      }
      return ShardFiles.open(settings, metrics, (s, env, db, m) -> new ShardStore(s, env, db, m) {
        @Override
        void commit(List<Fill> fills, long nowMillis, Outcome outcome) {
          if (commits.getAndDecrement() > 0) {
            throw new IllegalStateException("commit to shard " + s.shard() + " failed (injected by the test)");
          }
          super.commit(fills, nowMillis, outcome);
        }
      });
    };
  }

  private static void awaitRelease(CountDownLatch release) {
    try {
      if (!release.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the test never released the shard");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static LmdbAnswerCache open(ActorTestKit testKit, CacheSettings settings, TestProbe<CacheShard.Event> events) {
    return open(testKit, settings, events, 4096, Duration.ofMillis(200));
  }

  /** {@code base} with a commit window of {@code window}. */
  static CacheSettings withCommitWindow(CacheSettings base, Duration window) {
    LmdbSettings l = base.lmdb();
    return new CacheSettings(base.name(), base.backend(), base.maxEntries(), base.whenFull(),
        base.minTtl(), base.maxTtl(), base.negativeTtl(), base.servfailTtl(),
        new LmdbSettings(l.path(), l.shardCount(), l.sync(), l.syncInterval(), l.mapSize(), window, l.hotEntries()));
  }

  static CacheKey key(String name) {
    return CacheKey.of(name, 1, 1, 0);
  }

  /** An answer whose wire bytes are {@code size} bytes of {@code fill}, expiring at {@code expiresAt}. */
  static CachedAnswer answer(int size, byte fill, long expiresAt) {
    byte[] wire = new byte[size];
    java.util.Arrays.fill(wire, fill);
    return new CachedAnswer(wire, new int[] {6, 18}, -1, -1, expiresAt - 60_000, expiresAt);
  }

  static boolean await(CompletionStage<Boolean> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  static List<Boolean> awaitAll(List<CompletionStage<Boolean>> stages) throws Exception {
    List<Boolean> out = new ArrayList<>();
    for (CompletionStage<Boolean> s : stages) {
      out.add(await(s));
    }
    return out;
  }

  /** Keys {@code prefix0.example.} onwards, until every shard owns at least {@code perShard}. */
  static List<List<CacheKey>> keysPerShard(String prefix, int shards, int perShard) {
    List<List<CacheKey>> out = new ArrayList<>();
    for (int i = 0; i < shards; i++) {
      out.add(new ArrayList<>());
    }
    for (int i = 0; out.stream().anyMatch(l -> l.size() < perShard); i++) {
      CacheKey k = key(prefix + i + ".example.");
      List<CacheKey> owner = out.get(LmdbAnswerCache.shardOf(k, shards));
      if (owner.size() < perShard) {
        owner.add(k);
      }
    }
    return out;
  }
}
