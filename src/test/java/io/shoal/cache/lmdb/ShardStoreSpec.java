package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheFixture.MIB;
import static io.shoal.cache.lmdb.CacheFixture.answer;
import static io.shoal.cache.lmdb.CacheFixture.key;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/** Readers on many threads while the writer resizes the map and finally closes the environment. */
public class ShardStoreSpec extends JUnitSuite {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void readersSeeHitsOrMissesWhileTheMapGrowsAndCloses() throws Exception {
    ShardSettings settings = new ShardSettings("env", 0, tmp.newFolder().toPath().resolve("shard-00"),
        SyncMode.NONE, MIB, WhenFull.EVICT_ONE, 1000, Duration.ZERO, 1000, new HotIndex(1000));
    ShardStore env = ShardFiles.open(settings, new CacheMetrics("env", "lmdb"));
    long now = System.currentTimeMillis();
    List<CacheKey> keys = new ArrayList<>();
    List<Fill> fills = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      CacheKey k = key("r" + i + ".example.");
      keys.add(k);
      fills.add(new Fill(k, answer(100, (byte) i, now + 600_000), new CompletableFuture<>(), i + 1));
    }
    env.store(fills, now);
    assertEquals(200, env.entries());

    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong hits = new AtomicLong();
    AtomicLong missesAfterClose = new AtomicLong();
    AtomicBoolean closed = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
    List<Thread> readers = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      Thread reader = new Thread(() -> {
        int i = 0;
        while (!stop.get()) {
          CacheKey k = keys.get(i++ % keys.size());
          try {
            boolean wasClosed = closed.get();
            CachedAnswer a = env.read(k, now);
            if (a != null) {
              assertTrue("no hit after close", !wasClosed);
              assertEquals(100, a.wire().length);
              hits.incrementAndGet();
            } else if (wasClosed) {
              missesAfterClose.incrementAndGet();
            }
          } catch (Throwable e) {
            failures.add(e);
            return;
          }
        }
      }, "reader-" + t);
      reader.start();
      readers.add(reader);
    }
    long size = env.mapSize();
    for (int i = 0; i < 20; i++) {
      size += MIB;
      env.growMap(size);
      Thread.sleep(5);
    }
    assertEquals(size, env.mapSize());
    // Still writable and readable on the grown map.
    env.store(List.of(new Fill(key("late.example."), answer(100, (byte) 1, now + 600_000),
        new CompletableFuture<>(), 201)), now);
    env.close();
    closed.set(true);
    Thread.sleep(50);
    stop.set(true);
    for (Thread r : readers) {
      r.join(TimeUnit.SECONDS.toMillis(10));
    }
    assertTrue("reader failures: " + failures, failures.isEmpty());
    assertTrue(hits.get() > 0);
    assertTrue(missesAfterClose.get() > 0);
    assertNull(env.read(keys.get(0), now));
  }
}
