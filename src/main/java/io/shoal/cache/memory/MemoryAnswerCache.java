package io.shoal.cache.memory;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.ExpiryOrder;
import io.shoal.cache.EvictedKeys;
import io.shoal.cache.WhenFull;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;

/**
 * The in-memory answer cache. Reads go straight to an open-addressing table from any thread,
 * without a lock; writes take one lock and keep the structure that {@code when_full} needs: two
 * binary heaps by expiry (positive answers, negative ones) for {@code evict_one}, a dense array for
 * random sampling in {@code sample}.
 *
 * <p>Memory per answer is what this class is built around ({@link Entry}): one small object per
 * answer besides the answer itself, no map node, and no copy of the key when the answer's own
 * question is the key (all but always: the key is the question, lowercased): about 60 bytes per
 * answer besides the answer's own object and wire bytes. The answers stay objects of their own: a hit
 * hands back the one stored, with no copy and no allocation, and the socket thread renders it.
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

  private final String name;
  private final long maxEntries;
  private final WhenFull whenFull;
  private final CacheMetrics metrics;
  private final ReentrantLock writeLock = new ReentrantLock();
  private final long maxNegatives;
  private final EvictedKeys evicted = new EvictedKeys();

  private final EntryTable table = new EntryTable();
  private long negatives;
  /**
   * {@code evict_one}: the positive entries and the negative ones, as two heaps by expiry (the
   * soonest of all is the sooner of their tops); {@code sample}: every entry, unordered, in {@code
   * all}, and no {@code negativeOrder}. An entry is in one of them, so it keeps one place.
   */
  private final ExpiryOrder<Entry> all;
  private final ExpiryOrder<Entry> negativeOrder;
  private int seq;

  public MemoryAnswerCache(String name, long maxEntries, WhenFull whenFull, CacheMetrics metrics) {
    this.name = name;
    this.maxEntries = maxEntries;
    this.maxNegatives = Math.max(1, (long) (maxEntries * NEGATIVE_SHARE));
    this.whenFull = whenFull;
    this.metrics = metrics;
    this.all = new ExpiryOrder<>(whenFull == WhenFull.EVICT_ONE);
    this.negativeOrder = whenFull == WhenFull.EVICT_ONE ? new ExpiryOrder<>(true) : null;
    metrics.entries(0, 0);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public CachedAnswer get(CacheKey key, long nowMillis) {
    Entry e = table.find(key);
    if (e == null || e.answer.expiredAt(nowMillis)) {
      return null;
    }
    return e.answer;
  }

  @Override
  public int warm(int keyHash) {
    return table.warm(keyHash);
  }

  @Override
  public CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer) {
    long start = System.nanoTime();
    writeLock.lock();
    try {
      Entry entry = Entry.of(key, answer, seq++);
      int at = table.slotOf(key);
      if (at >= 0) {
        unlink(table.at(at));
        table.replace(at, entry);
        link(entry);
      } else {
        if (table.size() >= maxEntries) {
          long evictStart = System.nanoTime();
          evictOne(entry.negative() && negatives >= maxNegatives);
          metrics.evictionNanos(System.nanoTime() - evictStart);
        }
        table.insert(entry);
        link(entry);
      }
      metrics.entries(0, table.size());
    } finally {
      writeLock.unlock();
    }
    metrics.fillNanos(System.nanoTime() - start);
    return CompletableFuture.completedFuture(Boolean.TRUE);
  }

  @Override
  public CompletionStage<Loaded[]> loadIntoRoom(List<Keyed> answers, long nowMillis) {
    Loaded[] results = new Loaded[answers.size()];
    writeLock.lock();
    try {
      for (int i = 0; i < results.length; i++) {
        CacheKey key = answers.get(i).key();
        CachedAnswer answer = answers.get(i).answer();
        int at = table.slotOf(key);
        if (at >= 0 && !table.at(at).answer.expiredAt(nowMillis)) {
          results[i] = Loaded.ALREADY_CACHED;
          continue;
        }
        Entry entry = Entry.of(key, answer, seq++);
        if (at >= 0) {
          unlink(table.at(at));
          table.replace(at, entry);
          link(entry);
          results[i] = Loaded.STORED;
        } else if (roomFor(entry, nowMillis)) {
          table.insert(entry);
          link(entry);
          results[i] = Loaded.STORED;
        } else {
          results[i] = Loaded.NO_ROOM;
        }
      }
      metrics.entries(0, table.size());
    } finally {
      writeLock.unlock();
    }
    return CompletableFuture.completedFuture(results);
  }

  /**
   * Whether a new entry fits without a live entry going: there is room under max_entries, or (in
   * evict_one, where the heap tells exactly) the entry that would be evicted has expired, and goes.
   */
  private boolean roomFor(Entry entry, long nowMillis) {
    if (table.size() < maxEntries) {
      return true;
    }
    if (whenFull != WhenFull.EVICT_ONE) {
      return false;
    }
    boolean negativeOnly = entry.negative() && negatives >= maxNegatives;
    Entry victim = soonest(negativeOnly);
    if (victim == null || !victim.answer.expiredAt(nowMillis)) {
      return false;
    }
    removeAt(table.slotOf(victim.cacheKey()));
    return true;
  }

  private void removeAt(int slot) {
    unlink(table.removeAt(slot));
  }

  /** Makes room for one answer; {@code negativeOnly}: a negative answer over its share takes another's place. */
  private void evictOne(boolean negativeOnly) {
    Entry victim;
    if (whenFull == WhenFull.EVICT_ONE) {
      victim = soonest(negativeOnly);
    } else {
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      victim = null;
      // Negatives hold half the slots or more here: four times the samples all but always find one.
      int samples = negativeOnly ? 4 * SAMPLES : SAMPLES;
      for (int i = 0; i < samples; i++) {
        Entry candidate = all.random(rnd);
        if ((!negativeOnly || candidate.negative()) && (victim == null || candidate.before(victim))) {
          victim = candidate;
        }
      }
      if (victim == null && negativeOnly) {
        // No negative among the samples (one eviction in a million or so while negatives hold
        // half the cache): the first one from a random place, so a flood of them never costs a
        // positive answer its place.
        int n = all.size();
        int start = rnd.nextInt(n);
        for (int i = 0; i < n && victim == null; i++) {
          Entry candidate = all.get((start + i) % n);
          victim = candidate.negative() ? candidate : null;
        }
      }
      if (victim == null) {
        victim = all.random(rnd);
      }
    }
    CacheKey key = victim.cacheKey();
    removeAt(table.slotOf(key));
    evicted.add(key);
  }

  @Override
  public boolean evictedLately(CacheKey key) {
    return evicted.contains(key);
  }

  /** {@code evict_one}: the entry that expires soonest, of the negative ones only when {@code negativeOnly}; null when none. */
  private Entry soonest(boolean negativeOnly) {
    Entry negative = negativeOrder.first();
    if (negativeOnly) {
      return negative;
    }
    Entry positive = all.first();
    return positive == null || (negative != null && negative.before(positive)) ? negative : positive;
  }

  private void link(Entry e) {
    if (e.negative()) {
      negatives++;
    }
    (negativeOrder != null && e.negative() ? negativeOrder : all).add(e);
  }

  private void unlink(Entry e) {
    if (e.negative()) {
      negatives--;
    }
    (negativeOrder != null && e.negative() ? negativeOrder : all).remove(e);
  }

  @Override
  public CompletionStage<Integer> flushName(String flushed, int qtype) {
    return flushNameStoredBefore(flushed, qtype, Long.MAX_VALUE);
  }

  @Override
  public CompletionStage<Integer> flushNameStoredBefore(String flushed, int qtype, long storedBeforeMillis) {
    CacheKey target = CacheKey.of(flushed, 1, 1, 0);
    int removed = 0;
    writeLock.lock();
    try {
      for (int i = 0; i < table.capacity(); i++) {
        Entry e = table.at(i);
        if (e != null && e.answer.storedAtMillis() < storedBeforeMillis && e.named(target, qtype)) {
          removeAt(i);
          removed++;
        }
      }
      metrics.entries(0, table.size());
    } finally {
      writeLock.unlock();
    }
    return CompletableFuture.completedFuture(removed);
  }

  @Override
  public CompletionStage<Boolean> removeIfStoredBy(CacheKey key, long storedAtMillis) {
    writeLock.lock();
    try {
      int at = table.slotOf(key);
      if (at < 0 || table.at(at).answer.storedAtMillis() > storedAtMillis) {
        return CompletableFuture.completedFuture(Boolean.FALSE);
      }
      removeAt(at);
      metrics.entries(0, table.size());
    } finally {
      writeLock.unlock();
    }
    return CompletableFuture.completedFuture(Boolean.TRUE);
  }

  @Override
  public void entries(BiConsumer<CacheKey, CachedAnswer> sink) {
    // The table as it is now, without the lock: fills go on while a dump runs (an entry filled
    // meanwhile may be missed, or a replaced one given in its old form).
    Entry[] t = table.snapshot();
    for (int i = 0; i < t.length; i++) {
      Entry e = EntryTable.visible(t, i);
      if (e != null) {
        sink.accept(e.cacheKey(), e.answer);
      }
    }
  }

  @Override
  public long size() {
    return table.size();
  }

  @Override
  public void close() {
    // Nothing to release: the answers live only as long as the process.
  }
}
