package io.shoal.cache.lmdb;

import static io.shoal.cache.lmdb.CacheFixture.MIB;
import static io.shoal.cache.lmdb.CacheFixture.answer;
import static io.shoal.cache.lmdb.CacheFixture.key;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.scalatestplus.junit.JUnitSuite;

/**
 * A shard's reads against every change its writer makes, with no hot answers, so that each read
 * goes to the shard's own answers: with {@code when_full = evict_one} a key the shard does not
 * hold is a miss without a read of LMDB, and that must never turn an answer it holds into a miss.
 */
public class ShardKeysSpec extends JUnitSuite {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private ShardSettings settings(Path dir, WhenFull whenFull, long capacity, long mapSize) {
    return new ShardSettings("keys", 0, dir, SyncMode.NONE, mapSize, whenFull, capacity, Duration.ZERO, 0,
        new HotIndex(0));
  }

  private static ShardStore open(ShardSettings settings) {
    return ShardFiles.open(settings, new CacheMetrics("keys", "lmdb"));
  }

  private static Fill fill(CacheKey key, CachedAnswer answer, long sequence) {
    return new Fill(key, answer, new CompletableFuture<>(), sequence);
  }

  @Test
  public void storedIsFoundFlushedIsMissingAndBothSurviveAReopenInEitherWhenFullMode() throws Exception {
    for (WhenFull mode : WhenFull.values()) {
      long now = System.currentTimeMillis();
      ShardSettings s = settings(tmp.newFolder().toPath().resolve("shard-00"), mode, 1000, 4 * MIB);
      List<CacheKey> keys = new ArrayList<>();
      List<Fill> fills = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        CacheKey k = key("h" + i + ".example.");
        keys.add(k);
        fills.add(fill(k, answer(90, (byte) i, now + 600_000), i + 1));
      }
      try (ShardStore store = open(s)) {
        assertNull(mode + ": nothing stored yet", store.read(keys.get(0), now));
        store.store(fills, now);
        for (int i = 0; i < keys.size(); i++) {
          CachedAnswer got = store.read(keys.get(i), now);
          assertNotNull(mode + ": stored, then found", got);
          assertArrayEquals(fills.get(i).answer().wire(), got.wire());
        }
        assertNull(mode + ": never stored", store.read(key("other.example."), now));

        assertEquals(1, store.removeName(AnswerCodec.nameWire("h3.example."), 0));
        assertNull(mode + ": flushed, then missing", store.read(keys.get(3), now));
        store.store(List.of(fill(keys.get(3), answer(90, (byte) 33, now + 600_000), 21)), now);
        assertEquals(mode + ": stored again, found again", 33, store.read(keys.get(3), now).wire()[0]);

        boolean[] released = store.removeStored(
            List.of(new ShardState.Release(keys.get(4), now + 600_000, new CompletableFuture<>())));
        assertTrue(released[0]);
        assertNull(mode + ": released, then missing", store.read(keys.get(4), now));

        CacheKey loaded = key("loaded.example.");
        AnswerCache.Loaded[] results =
            store.loadIntoRoom(List.of(new AnswerCache.Keyed(loaded, answer(90, (byte) 9, now + 600_000))), now);
        assertEquals(AnswerCache.Loaded.STORED, results[0]);
        assertNotNull(mode + ": loaded, then found", store.read(loaded, now));
      }
      try (ShardStore store = open(s)) {
        for (int i = 0; i < keys.size(); i++) {
          if (i == 4) {
            assertNull(mode + ": still released after a reopen", store.read(keys.get(i), now));
          } else {
            assertNotNull(mode + ": " + keys.get(i).name() + " found after a reopen", store.read(keys.get(i), now));
          }
        }
        assertNotNull(mode + ": the loaded answer found after a reopen", store.read(key("loaded.example."), now));
      }
    }
  }

  /**
   * 60 KiB answers into a 1 MiB map: transactions abort on the full map and are split or make
   * room, and after each abort the shard's record of its keys goes back to what LMDB holds.
   */
  @Test
  public void afterTransactionsAbortedOnAFullMapEveryAnswerHeldIsFound() throws Exception {
    long now = System.currentTimeMillis();
    try (ShardStore store = open(settings(tmp.newFolder().toPath().resolve("shard-00"), WhenFull.EVICT_ONE,
        100_000, MIB))) {
      List<Fill> fills = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        fills.add(fill(key("big" + i + ".example."), answer(60_000, (byte) i, now + 100_000 + i), i + 1));
      }
      List<Fill> committed = new ArrayList<>();
      store.commit(fills, now, new ShardStore.Outcome() {
        @Override
        public void committed(List<Fill> done, long nanos, long commitNanos) {
          committed.addAll(done);
        }

        @Override
        public void dropped(List<Fill> done) {}
      });
      assertEquals("every fill found room in the end", 60, committed.size());
      Set<String> held = new HashSet<>();
      for (ReaderPool.Stored s : store.scan(null, 1000)) {
        held.add(CacheKey.ofBytes(s.key()).name());
      }
      assertTrue("some held, some evicted to make room: " + held.size(), held.size() > 0 && held.size() < 60);
      assertEquals(held.size(), store.entries());
      for (Fill f : fills) {
        CachedAnswer got = store.read(f.key(), now);
        assertEquals(f.key().name() + " is found exactly when LMDB holds it", held.contains(f.key().name()), got != null);
      }
    }
  }

  /**
   * Readers ask for answers that stay while the writer stores and evicts others, transaction
   * after transaction, and stores some of those that stay afresh: every read is a hit, and a
   * name nobody stored is a miss. The writer lets each reader read after every commit before the
   * next: a reader that sat out two commits may find its read transaction being reset, a miss by
   * design (see {@link ReaderPool}) that this test is not about.
   */
  @Test
  public void answersThatStayAreHitsWhileTheWriterChurnsOthers() throws Exception {
    long now = System.currentTimeMillis();
    try (ShardStore store = open(settings(tmp.newFolder().toPath().resolve("shard-00"), WhenFull.EVICT_ONE,
        64, 8 * MIB))) {
      List<CacheKey> stay = new ArrayList<>();
      List<Fill> first = new ArrayList<>();
      long seq = 0;
      for (int i = 0; i < 16; i++) {
        CacheKey k = key("stay" + i + ".example.");
        stay.add(k);
        // Expiring last: evict_one never picks them while churned answers expire sooner.
        first.add(fill(k, answer(90, (byte) i, now + 3_600_000), ++seq));
      }
      store.store(first, now);

      AtomicBoolean stop = new AtomicBoolean();
      AtomicLongArray reads = new AtomicLongArray(3);
      ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
      List<Thread> readers = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        int me = t;
        Thread reader = new Thread(() -> {
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
          for (int i = 0; !stop.get() && System.nanoTime() < deadline; i++) {
            CacheKey k = stay.get(i % stay.size());
            if (store.read(k, now) == null) {
              failures.add(k.name() + " missed");
              return;
            }
            reads.incrementAndGet(me);
            if (store.read(key("nobody" + (i % 50) + ".example."), now) != null) {
              failures.add("a name nobody stored was a hit");
              return;
            }
          }
        }, "reader-" + t);
        reader.start();
        readers.add(reader);
      }
      for (int round = 0; round < 300; round++) {
        List<Fill> churn = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
          churn.add(fill(key("churn" + round + "-" + i + ".example."), answer(90, (byte) i, now + 600_000 + i),
              ++seq));
        }
        for (int i = 0; i < 4; i++) {
          // Replaced in the same transaction: the old answer's place in the order goes, the new one's comes.
          int which = (round * 4 + i) % stay.size();
          churn.add(fill(stay.get(which), answer(90, (byte) which, now + 3_600_000 + round), ++seq));
        }
        store.store(churn, now);
        readAfter(reads, failures);
      }
      stop.set(true);
      for (Thread r : readers) {
        r.join(TimeUnit.SECONDS.toMillis(70));
      }
      assertTrue("failures: " + failures, failures.isEmpty());
      assertEquals("the cap holds", 64, store.entries());
      assertNull("a churned answer evicted long ago", store.read(key("churn0-0.example."), now));
      assertNotNull("the last churned answer", store.read(key("churn299-39.example."), now));
    }
  }

  /** Waits until every reader has read twice more (so once after what came before), or failed. */
  private static void readAfter(AtomicLongArray reads, ConcurrentLinkedQueue<String> failures) {
    long[] before = new long[reads.length()];
    for (int i = 0; i < before.length; i++) {
      before[i] = reads.get(i);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    for (int i = 0; i < before.length && failures.isEmpty(); ) {
      if (reads.get(i) >= before[i] + 2) {
        i++;
      } else if (System.nanoTime() > deadline) {
        failures.add("reader " + i + " stopped reading");
      } else {
        Thread.onSpinWait();
      }
    }
  }
}
