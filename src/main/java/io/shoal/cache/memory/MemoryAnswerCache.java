package io.shoal.cache.memory;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.EvictedKeys;
import io.shoal.cache.WhenFull;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;

/**
 * The in-memory answer cache. Reads go straight to a ConcurrentHashMap from any thread; writes
 * take one lock and keep the structure that {@code when_full} needs: an expiry-ordered set for
 * {@code evict_one}, a dense slot array for random sampling in {@code sample}.
 *
 * <p>Negative answers (NXDOMAIN, NODATA, remembered failures) hold at most {@link
 * #NEGATIVE_SHARE} of a full cache: past that, a new one takes the place of another negative
 * answer, never of a positive one. A flood of made-up names (every one an NXDOMAIN, the
 * random-subdomain attack) then churns through its own half of the cache, and the answers the
 * honest clients hit stay, as Unbound keeps its negative cache apart.
 */
public final class MemoryAnswerCache implements AnswerCache {
  /** Entries looked at per eviction in {@code sample} mode (as Redis's maxmemory-samples). */
  static final int SAMPLES = 5;

  /** The share of a full cache negative answers may hold. */
  static final double NEGATIVE_SHARE = 0.5;

  private static final Comparator<Slot> BY_EXPIRY =
      Comparator.<Slot>comparingLong(s -> s.answer.expiresAtMillis()).thenComparingLong(s -> s.seq);

  private final String name;
  private final long maxEntries;
  private final WhenFull whenFull;
  private final CacheMetrics metrics;
  private final ConcurrentHashMap<CacheKey, Slot> map = new ConcurrentHashMap<>();
  private final ReentrantLock writeLock = new ReentrantLock();
  private final TreeSet<Slot> byExpiry = new TreeSet<>(BY_EXPIRY);
  /** The negative answers of {@code byExpiry} ({@code evict_one}). */
  private final TreeSet<Slot> negativesByExpiry = new TreeSet<>(BY_EXPIRY);
  private final long maxNegatives;
  private final EvictedKeys evicted = new EvictedKeys();
  private long negatives;
  private final List<Slot> slots = new ArrayList<>();
  private long seq;

  private static final class Slot {
    final CacheKey key;
    final CachedAnswer answer;
    final long seq;
    final boolean negative;
    int index = -1;

    Slot(CacheKey key, CachedAnswer answer, long seq) {
      this.key = key;
      this.answer = answer;
      this.seq = seq;
      this.negative = answer.negative();
    }
  }

  public MemoryAnswerCache(String name, long maxEntries, WhenFull whenFull, CacheMetrics metrics) {
    this.name = name;
    this.maxEntries = maxEntries;
    this.maxNegatives = Math.max(1, (long) (maxEntries * NEGATIVE_SHARE));
    this.whenFull = whenFull;
    this.metrics = metrics;
    metrics.entries(0, 0);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public CachedAnswer get(CacheKey key, long nowMillis) {
    Slot s = map.get(key);
    if (s == null || s.answer.expiredAt(nowMillis)) {
      return null;
    }
    return s.answer;
  }

  @Override
  public CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer) {
    long start = System.nanoTime();
    writeLock.lock();
    try {
      Slot old = map.get(key);
      Slot slot = new Slot(key, answer, seq++);
      if (old != null) {
        unlink(old);
      } else if (map.size() >= maxEntries) {
        long evictStart = System.nanoTime();
        evictOne(slot.negative && negatives >= maxNegatives);
        metrics.evictionNanos(System.nanoTime() - evictStart);
      }
      map.put(key, slot);
      link(slot);
      metrics.entries(0, map.size());
    } finally {
      writeLock.unlock();
    }
    metrics.fillNanos(System.nanoTime() - start);
    return CompletableFuture.completedFuture(Boolean.TRUE);
  }

  /** Makes room for one answer; {@code negativeOnly}: a negative answer over its share takes another's place. */
  private void evictOne(boolean negativeOnly) {
    Slot victim;
    if (whenFull == WhenFull.EVICT_ONE) {
      victim = negativeOnly ? negativesByExpiry.first() : byExpiry.first();
    } else {
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      victim = null;
      // Negatives hold half the slots or more here: four times the samples all but always find one.
      int samples = negativeOnly ? 4 * SAMPLES : SAMPLES;
      for (int i = 0; i < samples; i++) {
        Slot candidate = slots.get(rnd.nextInt(slots.size()));
        if ((!negativeOnly || candidate.negative) && (victim == null || BY_EXPIRY.compare(candidate, victim) < 0)) {
          victim = candidate;
        }
      }
      if (victim == null) {
        victim = slots.get(rnd.nextInt(slots.size()));
      }
    }
    map.remove(victim.key);
    unlink(victim);
    evicted.add(victim.key);
  }

  @Override
  public boolean evictedLately(CacheKey key) {
    return evicted.contains(key);
  }

  private void link(Slot s) {
    if (s.negative) {
      negatives++;
    }
    if (whenFull == WhenFull.EVICT_ONE) {
      byExpiry.add(s);
      if (s.negative) {
        negativesByExpiry.add(s);
      }
    } else {
      s.index = slots.size();
      slots.add(s);
    }
  }

  private void unlink(Slot s) {
    if (s.negative) {
      negatives--;
    }
    if (whenFull == WhenFull.EVICT_ONE) {
      byExpiry.remove(s);
      if (s.negative) {
        negativesByExpiry.remove(s);
      }
    } else {
      Slot last = slots.remove(slots.size() - 1);
      if (last != s) {
        slots.set(s.index, last);
        last.index = s.index;
      }
    }
  }

  @Override
  public CompletionStage<Integer> flushName(String flushed, int qtype) {
    return flushNameStoredBefore(flushed, qtype, Long.MAX_VALUE);
  }

  @Override
  public CompletionStage<Integer> flushNameStoredBefore(String flushed, int qtype, long storedBeforeMillis) {
    String target = CacheKey.of(flushed, 1, 1, 0).name();
    int removed = 0;
    writeLock.lock();
    try {
      for (Slot s : new ArrayList<>(map.values())) {
        if (s.key.name().equals(target) && (qtype == 0 || s.key.qtype() == qtype)
            && s.answer.storedAtMillis() < storedBeforeMillis) {
          map.remove(s.key);
          unlink(s);
          removed++;
        }
      }
      metrics.entries(0, map.size());
    } finally {
      writeLock.unlock();
    }
    return CompletableFuture.completedFuture(removed);
  }

  @Override
  public CompletionStage<Boolean> removeIfStoredBy(CacheKey key, long storedAtMillis) {
    writeLock.lock();
    try {
      Slot s = map.get(key);
      if (s == null || s.answer.storedAtMillis() > storedAtMillis) {
        return CompletableFuture.completedFuture(Boolean.FALSE);
      }
      map.remove(key);
      unlink(s);
      metrics.entries(0, map.size());
    } finally {
      writeLock.unlock();
    }
    return CompletableFuture.completedFuture(Boolean.TRUE);
  }

  @Override
  public void entries(BiConsumer<CacheKey, CachedAnswer> sink) {
    // The map's iterator is weakly consistent: no lock, so fills go on while a dump runs.
    for (Slot s : map.values()) {
      sink.accept(s.key, s.answer);
    }
  }

  @Override
  public long size() {
    return map.size();
  }

  @Override
  public void close() {
    // Nothing to release: the answers live only as long as the process.
  }
}
