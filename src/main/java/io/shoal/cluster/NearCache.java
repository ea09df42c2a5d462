package io.shoal.cluster;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * A node's copies of answers other nodes own, kept by use: a new copy is admitted only when its
 * name has been asked more often, lately, than the copy it would push out, and the copy that goes
 * is the least used of a few picked at random (an expired one first). The answer cache's own rule
 * (the soonest expiry goes first) suits the answers a node owns, but not copies: a copy keeps the
 * owner's remaining TTL, so the names a node has asked longest (the hot ones) would always expire
 * first, and a stream of names asked once (a crawl, a mail server's lookups) would push every hot
 * copy out. Here such a stream is not admitted, and the hot copies stay.
 *
 * <p>What a copy was asked is counted on the copy itself: a hit is one look-up in a concurrent
 * hash table and one add to a plain field of the copy, with no lock, no fence and no buffer to
 * drain (a W-TinyLFU cache records each read in a buffer and replays it into its policy on the
 * reading thread; in a cluster node's profile under warm hits that was most of what a near hit
 * cost beyond a hit on an owned name). Names not held are counted in a small count-min sketch: a
 * miss that keeps a copy adds one, and a copy that leaves (expired, evicted, replaced) leaves its
 * count there, so a hot name whose copy expired is admitted again at once. Every {@code 10 x
 * maxEntries} copies kept, the sketch and the copies' counts are halved, so "lately" means about
 * that many misses ago.
 *
 * <p>Bounded in bytes as well as entries: each copy weighs its wire and key bytes plus {@link
 * #OVERHEAD}, but never less than {@code maxBytes / maxEntries}, so that at most {@code maxEntries}
 * copies fit, and large answers fit fewer. TTLs are honoured on read: a copy past its expiry is a
 * miss, and goes. Keeping and removing copies take a lock, on the thread of the miss that keeps one
 * (never a hit's), so the bounds hold as soon as a fill returns.
 */
public final class NearCache implements AnswerCache {
  /**
   * Bytes a copy costs beyond its wire and key bytes: the copy's and the answer's objects, the
   * answer's TTL offsets, the key object and the map's node and table slot, as measured roughly on
   * a 64-bit JVM with compressed pointers.
   */
  static final int OVERHEAD = 160;
  /** Copies looked at to choose the one to evict: the least used of them goes. */
  static final int SAMPLE = 8;
  /** A copy's count stops here: a name asked this often is simply hot. */
  private static final int MAX_USES = 1 << 24;

  /** One copy, and how often it was asked. */
  private static final class Copy {
    final CacheKey key;
    final CachedAnswer answer;
    final int weight;
    /** Its index in {@link #slots}; guarded by the lock. */
    int slot;
    /**
     * Asks since it was kept (starting from its name's count when it was), halved as the sketch
     * ages. A plain field: a hit adds one without a lock, and an add lost to a race between two
     * reading threads does not matter to an estimate.
     */
    int uses;

    Copy(CacheKey key, CachedAnswer answer, int weight, int uses) {
      this.key = key;
      this.answer = answer;
      this.weight = weight;
      this.uses = uses;
    }
  }

  private final String name;
  private final CacheMetrics metrics;
  private final LongSupplier clock;
  private final long maxEntries;
  private final long maxBytes;
  /** The least a copy weighs: {@code maxBytes / maxEntries}. */
  private final long floor;
  private final ConcurrentHashMap<CacheKey, Copy> map = new ConcurrentHashMap<>();
  private final ReentrantLock lock = new ReentrantLock();
  /** Every copy held, at its {@link Copy#slot}, for picking victims at random; guarded by the lock. */
  private Copy[] slots = new Copy[16];
  private int count;
  private long weight;
  private final Sketch sketch;
  /** Copies kept between two halvings of the counts. */
  private final int agingPeriod;
  private int keptSinceAging;

  /**
   * @param maxEntries copies at most
   * @param maxBytes bytes of copies at most, counted as the class comment says
   */
  public NearCache(String name, long maxEntries, long maxBytes, CacheMetrics metrics) {
    this(name, maxEntries, maxBytes, metrics, System::currentTimeMillis);
  }

  /** As {@link #NearCache(String, long, long, CacheMetrics)}, with the clock that says which copies have expired. */
  public NearCache(String name, long maxEntries, long maxBytes, CacheMetrics metrics, LongSupplier clock) {
    this.name = name;
    this.metrics = metrics;
    this.clock = clock;
    this.maxEntries = Math.max(1, maxEntries);
    this.maxBytes = Math.max(1, maxBytes);
    this.floor = Math.max(1, this.maxBytes / this.maxEntries);
    this.sketch = new Sketch(this.maxEntries);
    this.agingPeriod = (int) Math.min(1 << 30, 10 * this.maxEntries);
    metrics.entries(0, 0);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public CachedAnswer get(CacheKey key, long nowMillis) {
    Copy copy = map.get(key);
    if (copy == null) {
      return null;
    }
    if (copy.answer.expiredAt(nowMillis)) {
      remove(copy, true);
      return null;
    }
    int uses = copy.uses;
    if (uses < MAX_USES) {
      copy.uses = uses + 1;
    }
    return copy.answer;
  }

  /**
   * Keeps a copy of {@code answer} when there is room, or when its name has been asked more often
   * than each copy that would have to go for it; completes with whether it was kept. A copy that
   * replaces one of the same key is always kept.
   */
  @Override
  public CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer) {
    long start = System.nanoTime();
    int w = (int) Math.min(Integer.MAX_VALUE,
        Math.max(floor, (long) answer.wire().length + key.bytes().length + OVERHEAD));
    boolean kept;
    lock.lock();
    try {
      kept = keep(key, answer, w);
    } finally {
      lock.unlock();
    }
    metrics.entries(0, map.size());
    metrics.fillNanos(System.nanoTime() - start);
    return CompletableFuture.completedFuture(kept);
  }

  /** {@link #fill} under the lock. */
  private boolean keep(CacheKey key, CachedAnswer answer, int w) {
    int asked = sketch.increment(key.hashCode());
    Copy held = map.get(key);
    if (w > maxBytes) {
      if (held != null) {
        unslot(held);
      }
      return false;
    }
    long now = clock.getAsLong();
    long entriesOver = count + (held == null ? 1 : 0) - maxEntries;
    long bytesOver = weight - (held == null ? 0 : held.weight) + w - maxBytes;
    List<Copy> victims = new ArrayList<>();
    while (entriesOver > 0 || bytesOver > 0) {
      Copy victim = victim(now, held, victims);
      if (victim == null) {
        return false;
      }
      // A replacement always goes in: the copy it replaces was kept already.
      if (held == null && !victim.answer.expiredAt(now) && victim.uses >= asked) {
        return false;
      }
      victims.add(victim);
      entriesOver--;
      bytesOver -= victim.weight;
    }
    for (Copy v : victims) {
      unslot(v);
    }
    Copy copy = new Copy(key, answer, w, held == null ? asked : Math.max(asked, held.uses));
    if (held != null) {
      copy.slot = held.slot;
      slots[held.slot] = copy;
      weight += w - held.weight;
    } else {
      if (count == slots.length) {
        slots = Arrays.copyOf(slots, (int) Math.min(maxEntries, 2L * slots.length));
      }
      copy.slot = count;
      slots[count++] = copy;
      weight += w;
    }
    map.put(key, copy);
    if (++keptSinceAging >= agingPeriod) {
      keptSinceAging = 0;
      sketch.halve();
      for (int i = 0; i < count; i++) {
        slots[i].uses >>= 1;
      }
    }
    return true;
  }

  /**
   * The copy to evict: an expired one, or the least used of {@link #SAMPLE} picked at random;
   * never {@code keep} nor one already {@code chosen}. Null when there is none but those.
   */
  private Copy victim(long now, Copy keep, List<Copy> chosen) {
    Copy best = null;
    ThreadLocalRandom random = ThreadLocalRandom.current();
    boolean all = count <= SAMPLE;
    for (int i = 0; i < (all ? count : SAMPLE); i++) {
      Copy c = slots[all ? i : random.nextInt(count)];
      if (c == keep || chosen.contains(c)) {
        continue;
      }
      if (c.answer.expiredAt(now)) {
        return c;
      }
      if (best == null || c.uses < best.uses) {
        best = c;
      }
    }
    if (best == null && !all) {
      for (int i = 0; i < count && best == null; i++) {
        Copy c = slots[i];
        best = c == keep || chosen.contains(c) ? null : c;
      }
    }
    return best;
  }

  /**
   * Takes {@code copy} out of the map and the slots, leaving its count in the sketch; under the
   * lock. False when it was no longer held.
   */
  private boolean unslot(Copy copy) {
    if (!map.remove(copy.key, copy)) {
      return false;
    }
    sketch.raise(copy.key.hashCode(), copy.uses);
    Copy last = slots[--count];
    slots[copy.slot] = last;
    last.slot = copy.slot;
    slots[count] = null;
    weight -= copy.weight;
    return true;
  }

  /** Removes {@code copy} if it is still held; whether it was. */
  private boolean remove(Copy copy, boolean countEntries) {
    boolean removed;
    lock.lock();
    try {
      removed = unslot(copy);
    } finally {
      lock.unlock();
    }
    if (countEntries) {
      metrics.entries(0, map.size());
    }
    return removed;
  }

  @Override
  public CompletionStage<Integer> flushName(String flushed, int qtype) {
    return flushNameStoredBefore(flushed, qtype, Long.MAX_VALUE);
  }

  @Override
  public CompletionStage<Integer> flushNameStoredBefore(String flushed, int qtype, long storedBeforeMillis) {
    CacheKey target = CacheKey.of(flushed, 1, 1, 0);
    int removed = 0;
    for (Copy c : map.values()) {
      if (c.answer.storedAtMillis() < storedBeforeMillis && named(c.key, target, qtype) && remove(c, false)) {
        removed++;
      }
    }
    metrics.entries(0, map.size());
    return CompletableFuture.completedFuture(removed);
  }

  /** Whether {@code key} asks for {@code target}'s name (any case, class and flags), of type {@code qtype} (0: any). */
  private static boolean named(CacheKey key, CacheKey target, int qtype) {
    byte[] k = key.bytes();
    int n = k.length - 5;
    return Arrays.equals(k, 0, n, target.bytes(), 0, target.nameLength())
        && (qtype == 0 || ((k[n] & 0xFF) << 8 | (k[n + 1] & 0xFF)) == qtype);
  }

  @Override
  public CompletionStage<Boolean> removeIfStoredBy(CacheKey key, long storedAtMillis) {
    boolean removed;
    lock.lock();
    try {
      Copy held = map.get(key);
      removed = held != null && held.answer.storedAtMillis() <= storedAtMillis && unslot(held);
    } finally {
      lock.unlock();
    }
    metrics.entries(0, map.size());
    return CompletableFuture.completedFuture(removed);
  }

  @Override
  public void entries(BiConsumer<CacheKey, CachedAnswer> sink) {
    for (Map.Entry<CacheKey, Copy> e : map.entrySet()) {
      sink.accept(e.getKey(), e.getValue().answer);
    }
  }

  @Override
  public long size() {
    return map.size();
  }

  @Override
  public void close() {
    // Nothing to release: copies live only as long as the process.
  }

  /**
   * How often names were asked, lately: a count-min sketch of four rows of byte counters (at most
   * 127), four to eight counters a row per copy the cache holds (16 to 32 bytes a copy), used
   * under the cache's lock only.
   */
  static final class Sketch {
    private static final int[] SEEDS = {0x9E3779B9, 0x85EBCA6B, 0xC2B2AE35, 0x27D4EB2F};
    private static final int MAX = 127;
    private final byte[] counters;
    private final int width;

    Sketch(long entries) {
      int w = 16;
      while (w < 4 * entries && w < (1 << 22)) {
        w <<= 1;
      }
      this.width = w;
      this.counters = new byte[4 * w];
    }

    private int index(int row, int hash) {
      int h = hash * SEEDS[row];
      h ^= h >>> 16;
      return row * width + (h & (width - 1));
    }

    /** The count of {@code hash}: at least what it was asked (more only where names collide). */
    int frequency(int hash) {
      int f = MAX;
      for (int row = 0; row < 4; row++) {
        f = Math.min(f, counters[index(row, hash)]);
      }
      return f;
    }

    /** Counts one more ask of {@code hash}; its count now. */
    int increment(int hash) {
      int next = Math.min(MAX, frequency(hash) + 1);
      raise(hash, next);
      return next;
    }

    /** Makes {@code hash}'s count at least {@code count} (capped). */
    void raise(int hash, int count) {
      byte c = (byte) Math.min(MAX, count);
      for (int row = 0; row < 4; row++) {
        int i = index(row, hash);
        if (counters[i] < c) {
          counters[i] = c;
        }
      }
    }

    /** Halves every count: what was asked long ago weighs less than what is asked now. */
    void halve() {
      for (int i = 0; i < counters.length; i++) {
        counters[i] = (byte) (counters[i] >> 1);
      }
    }
  }
}
