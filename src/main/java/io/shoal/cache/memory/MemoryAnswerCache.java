package io.shoal.cache.memory;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.cache.EvictedKeys;
import io.shoal.cache.WhenFull;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import io.shoal.wire.WireException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;

/**
 * The in-memory answer cache. Reads go straight to an open-addressing table from any thread,
 * without a lock; writes take one lock and keep the structure that {@code when_full} needs: a
 * binary heap by expiry for {@code evict_one}, a dense array for random sampling in {@code
 * sample}.
 *
 * <p>Memory per answer is what this class is built around ({@link Entry}): one small object per
 * answer besides the answer itself, no map node, and no copy of the key when the answer's own
 * question is the key (all but always: the key is the question, lowercased), so a million cached
 * answers cost little more than their wire bytes.
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

  private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Entry[].class);
  /** A removed entry's slot: probes go on past it, inserts may reuse it. */
  private static final Entry TOMBSTONE = new Entry(null, 0, 0, null, 0);
  private static final int MIN_TABLE = 16;

  private final String name;
  private final long maxEntries;
  private final WhenFull whenFull;
  private final CacheMetrics metrics;
  private final ReentrantLock writeLock = new ReentrantLock();
  private final long maxNegatives;
  private final EvictedKeys evicted = new EvictedKeys();

  /** The table readers probe; replaced whole (and published by this write) when it grows. */
  private volatile Entry[] table = new Entry[MIN_TABLE];
  /** Live entries and tombstones in {@code table}: it is rebuilt before they fill 3/4 of it. */
  private int occupied;
  private volatile int size;
  private long negatives;
  /** {@code evict_one}: every entry, and the negative ones, as heaps by expiry; {@code sample}: {@code all} as a dense array. */
  private Entry[] all = new Entry[MIN_TABLE];
  private int allCount;
  private Entry[] negativeHeap = new Entry[MIN_TABLE];
  private int negativeCount;
  private int seq;

  /**
   * One cached answer. {@code key} is null when the answer's question is the key ({@link
   * CacheKey#matchesQuestion}); the index fields are the entry's place in {@code all} and {@code
   * negativeHeap}, written under the lock only.
   */
  private static final class Entry {
    final byte[] key;
    final int hash;
    final byte flags;
    final CachedAnswer answer;
    /** Fill order, the tie-break between equal expiries (compared as a difference, so it may wrap). */
    final int seq;
    int allIndex = -1;
    int negativeIndex = -1;

    Entry(byte[] key, int hash, int flags, CachedAnswer answer, int seq) {
      this.key = key;
      this.hash = hash;
      this.flags = (byte) flags;
      this.answer = answer;
      this.seq = seq;
    }

    boolean is(CacheKey k) {
      if (hash != k.hashCode()) {
        return false;
      }
      return key != null ? Arrays.equals(key, k.bytes()) : flags == k.flags() && k.matchesQuestion(answer.wire());
    }

    CacheKey cacheKey() {
      if (key != null) {
        return CacheKey.ofBytes(key);
      }
      try {
        return CacheKey.ofQuestion(answer.wire(), flags);
      } catch (WireException e) {
        throw new IllegalStateException("an entry kept without its key has no question", e);
      }
    }

    /** Whether this entry answers {@code target}'s name, of type {@code qtype} (0: any). */
    boolean named(CacheKey target, int qtype) {
      if (key == null) {
        return target.nameMatchesQuestion(answer.wire()) && (qtype == 0 || target.questionType(answer.wire()) == qtype);
      }
      int n = key.length - 5;
      return Arrays.equals(key, 0, n, target.bytes(), 0, target.nameLength())
          && (qtype == 0 || ((key[n] & 0xFF) << 8 | (key[n + 1] & 0xFF)) == qtype);
    }

    boolean negative() {
      return answer.negative();
    }

    /** Sooner expiry first, then the older fill. */
    boolean before(Entry o) {
      long a = answer.expiresAtMillis();
      long b = o.answer.expiresAtMillis();
      return a != b ? a < b : seq - o.seq < 0;
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
    Entry e = find(table, key);
    if (e == null || e.answer.expiredAt(nowMillis)) {
      return null;
    }
    return e.answer;
  }

  /** The live entry for {@code key} in {@code t}, or null; safe without the lock. */
  private static Entry find(Entry[] t, CacheKey key) {
    int mask = t.length - 1;
    int i = spread(key.hashCode()) & mask;
    for (int probes = 0; probes < t.length; probes++, i = (i + 1) & mask) {
      Entry e = (Entry) SLOTS.getAcquire(t, i);
      if (e == null) {
        return null;
      }
      if (e != TOMBSTONE && e.is(key)) {
        return e;
      }
    }
    return null;
  }

  /** The slot of {@code key} in the table, or -1; under the lock. */
  private int slotOf(CacheKey key) {
    Entry[] t = table;
    int mask = t.length - 1;
    int i = spread(key.hashCode()) & mask;
    for (int probes = 0; probes < t.length; probes++, i = (i + 1) & mask) {
      Entry e = t[i];
      if (e == null) {
        return -1;
      }
      if (e != TOMBSTONE && e.is(key)) {
        return i;
      }
    }
    return -1;
  }

  private static int spread(int h) {
    return (h ^ (h >>> 16)) * 0x9E3779B1;
  }

  @Override
  public CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer) {
    long start = System.nanoTime();
    writeLock.lock();
    try {
      byte[] keyBytes = key.matchesQuestion(answer.wire()) ? null : key.bytes();
      Entry entry = new Entry(keyBytes, key.hashCode(), key.flags(), answer, seq++);
      int at = slotOf(key);
      if (at >= 0) {
        Entry old = table[at];
        unlink(old);
        SLOTS.setRelease(table, at, entry);
        link(entry);
      } else {
        if (size >= maxEntries) {
          long evictStart = System.nanoTime();
          evictOne(entry.negative() && negatives >= maxNegatives);
          metrics.evictionNanos(System.nanoTime() - evictStart);
        }
        insert(entry);
        link(entry);
      }
      metrics.entries(0, size);
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
        int at = slotOf(key);
        if (at >= 0 && !table[at].answer.expiredAt(nowMillis)) {
          results[i] = Loaded.ALREADY_CACHED;
          continue;
        }
        byte[] keyBytes = key.matchesQuestion(answer.wire()) ? null : key.bytes();
        Entry entry = new Entry(keyBytes, key.hashCode(), key.flags(), answer, seq++);
        if (at >= 0) {
          unlink(table[at]);
          SLOTS.setRelease(table, at, entry);
          link(entry);
          results[i] = Loaded.STORED;
        } else if (roomFor(entry, nowMillis)) {
          insert(entry);
          link(entry);
          results[i] = Loaded.STORED;
        } else {
          results[i] = Loaded.NO_ROOM;
        }
      }
      metrics.entries(0, size);
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
    if (size < maxEntries) {
      return true;
    }
    if (whenFull != WhenFull.EVICT_ONE) {
      return false;
    }
    boolean negativeOnly = entry.negative() && negatives >= maxNegatives;
    Entry victim = negativeOnly ? (negativeCount > 0 ? negativeHeap[0] : null) : (allCount > 0 ? all[0] : null);
    if (victim == null || !victim.answer.expiredAt(nowMillis)) {
      return false;
    }
    removeAt(slotOf(victim.cacheKey()));
    return true;
  }

  /** Puts a new key's entry in the table, growing or cleaning it first when it is 3/4 occupied. */
  private void insert(Entry entry) {
    if ((occupied + 1) * 4L > table.length * 3L) {
      rebuild();
    }
    Entry[] t = table;
    int mask = t.length - 1;
    int i = spread(entry.hash) & mask;
    while (t[i] != null && t[i] != TOMBSTONE) {
      i = (i + 1) & mask;
    }
    if (t[i] == null) {
      occupied++;
    }
    SLOTS.setRelease(t, i, entry);
    size++;
  }

  /** A new table for the live entries (twice their number at least, no tombstones), then published. */
  private void rebuild() {
    int capacity = MIN_TABLE;
    while (capacity * 3L < (size + 1) * 8L) {
      capacity <<= 1;
    }
    Entry[] fresh = new Entry[capacity];
    int mask = capacity - 1;
    for (Entry e : table) {
      if (e != null && e != TOMBSTONE) {
        int i = spread(e.hash) & mask;
        while (fresh[i] != null) {
          i = (i + 1) & mask;
        }
        fresh[i] = e;
      }
    }
    occupied = size;
    table = fresh;
  }

  private void removeAt(int slot) {
    Entry e = table[slot];
    SLOTS.setRelease(table, slot, TOMBSTONE);
    size--;
    unlink(e);
  }

  /** Makes room for one answer; {@code negativeOnly}: a negative answer over its share takes another's place. */
  private void evictOne(boolean negativeOnly) {
    Entry victim;
    if (whenFull == WhenFull.EVICT_ONE) {
      victim = negativeOnly ? negativeHeap[0] : all[0];
    } else {
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      victim = null;
      // Negatives hold half the slots or more here: four times the samples all but always find one.
      int samples = negativeOnly ? 4 * SAMPLES : SAMPLES;
      for (int i = 0; i < samples; i++) {
        Entry candidate = all[rnd.nextInt(allCount)];
        if ((!negativeOnly || candidate.negative()) && (victim == null || candidate.before(victim))) {
          victim = candidate;
        }
      }
      if (victim == null) {
        victim = all[rnd.nextInt(allCount)];
      }
    }
    CacheKey key = victim.cacheKey();
    removeAt(slotOf(key));
    evicted.add(key);
  }

  @Override
  public boolean evictedLately(CacheKey key) {
    return evicted.contains(key);
  }

  private void link(Entry e) {
    all = add(all, allCount, e);
    e.allIndex = allCount++;
    if (whenFull == WhenFull.EVICT_ONE) {
      siftUp(all, e.allIndex, false);
    }
    if (e.negative()) {
      negatives++;
      if (whenFull == WhenFull.EVICT_ONE) {
        negativeHeap = add(negativeHeap, negativeCount, e);
        e.negativeIndex = negativeCount++;
        siftUp(negativeHeap, e.negativeIndex, true);
      }
    }
  }

  private void unlink(Entry e) {
    allCount = removeFrom(all, allCount, e.allIndex, false, whenFull == WhenFull.EVICT_ONE);
    if (e.negative()) {
      negatives--;
      if (whenFull == WhenFull.EVICT_ONE) {
        negativeCount = removeFrom(negativeHeap, negativeCount, e.negativeIndex, true, true);
      }
    }
  }

  private static Entry[] add(Entry[] a, int count, Entry e) {
    Entry[] to = count == a.length ? Arrays.copyOf(a, count * 2) : a;
    to[count] = e;
    return to;
  }

  /** Removes {@code a[at]}: the last entry takes its place (and, in a heap, moves to where it belongs). */
  private static int removeFrom(Entry[] a, int count, int at, boolean negative, boolean heap) {
    int last = count - 1;
    Entry moved = a[last];
    a[last] = null;
    if (at != last) {
      a[at] = moved;
      setIndex(moved, at, negative);
      if (heap) {
        siftDown(a, at, last, negative);
        siftUp(a, indexOf(moved, negative), negative);
      }
    }
    return last;
  }

  private static void siftUp(Entry[] h, int i, boolean negative) {
    Entry e = h[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      Entry p = h[parent];
      if (!e.before(p)) {
        break;
      }
      h[i] = p;
      setIndex(p, i, negative);
      i = parent;
    }
    h[i] = e;
    setIndex(e, i, negative);
  }

  private static void siftDown(Entry[] h, int i, int count, boolean negative) {
    Entry e = h[i];
    while (true) {
      int child = 2 * i + 1;
      if (child >= count) {
        break;
      }
      if (child + 1 < count && h[child + 1].before(h[child])) {
        child++;
      }
      if (!h[child].before(e)) {
        break;
      }
      h[i] = h[child];
      setIndex(h[i], i, negative);
      i = child;
    }
    h[i] = e;
    setIndex(e, i, negative);
  }

  private static void setIndex(Entry e, int i, boolean negative) {
    if (negative) {
      e.negativeIndex = i;
    } else {
      e.allIndex = i;
    }
  }

  private static int indexOf(Entry e, boolean negative) {
    return negative ? e.negativeIndex : e.allIndex;
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
      Entry[] t = table;
      for (int i = 0; i < t.length; i++) {
        Entry e = t[i];
        if (e != null && e != TOMBSTONE && e.answer.storedAtMillis() < storedBeforeMillis && e.named(target, qtype)) {
          removeAt(i);
          removed++;
        }
      }
      metrics.entries(0, size);
    } finally {
      writeLock.unlock();
    }
    return CompletableFuture.completedFuture(removed);
  }

  @Override
  public CompletionStage<Boolean> removeIfStoredBy(CacheKey key, long storedAtMillis) {
    writeLock.lock();
    try {
      int at = slotOf(key);
      if (at < 0 || table[at].answer.storedAtMillis() > storedAtMillis) {
        return CompletableFuture.completedFuture(Boolean.FALSE);
      }
      removeAt(at);
      metrics.entries(0, size);
    } finally {
      writeLock.unlock();
    }
    return CompletableFuture.completedFuture(Boolean.TRUE);
  }

  @Override
  public void entries(BiConsumer<CacheKey, CachedAnswer> sink) {
    // The table as it is now, without the lock: fills go on while a dump runs (an entry filled
    // meanwhile may be missed, or a replaced one given in its old form).
    Entry[] t = table;
    for (int i = 0; i < t.length; i++) {
      Entry e = (Entry) SLOTS.getAcquire(t, i);
      if (e != null && e != TOMBSTONE) {
        sink.accept(e.cacheKey(), e.answer);
      }
    }
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public void close() {
    // Nothing to release: the answers live only as long as the process.
  }
}
