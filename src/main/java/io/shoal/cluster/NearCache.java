package io.shoal.cluster;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;

/**
 * A node's copies of answers other nodes own, kept by use: Caffeine's W-TinyLFU admits a new copy
 * only when its name has been asked more often, lately, than the copy it would push out, and
 * evicts the least used. The answer cache's own rule (the soonest expiry goes first) suits the
 * answers a node owns, but not copies: a copy keeps the owner's remaining TTL, so the names a node
 * has asked longest (the hot ones) always expired first, and a stream of names asked once (a crawl,
 * a mail server's lookups) pushed every hot copy out. Here such a stream churns through a small
 * window and the hot copies stay.
 *
 * <p>Bounded in bytes as well as entries: each copy weighs its wire and key bytes plus {@link
 * #OVERHEAD}, but never less than {@code maxBytes / maxEntries}, so that at most {@code maxEntries}
 * copies fit, and large answers fit fewer. TTLs are honoured on read: a copy past its expiry is a
 * miss, and goes.
 *
 * <p>A hit is a lookup in Caffeine's hash table plus an entry in its read buffer: no allocation and
 * no lock, as with the answer cache's own table. Eviction work runs on the thread that fills (a
 * miss's, never a hit's), so the bound holds as soon as a fill returns.
 */
public final class NearCache implements AnswerCache {
  /**
   * Bytes a copy costs beyond its wire and key bytes: Caffeine's node, the answer's record and its
   * TTL offsets, the key object and the map's table slot, as measured roughly on a 64-bit JVM
   * with compressed pointers.
   */
  static final int OVERHEAD = 160;

  private final String name;
  private final CacheMetrics metrics;
  private final Cache<CacheKey, CachedAnswer> copies;
  private final Map<CacheKey, CachedAnswer> map;

  /**
   * @param maxEntries copies at most
   * @param maxBytes bytes of copies at most, counted as the class comment says
   */
  public NearCache(String name, long maxEntries, long maxBytes, CacheMetrics metrics) {
    this.name = name;
    this.metrics = metrics;
    long floor = Math.max(1, maxBytes / Math.max(1, maxEntries));
    this.copies = Caffeine.newBuilder()
        .maximumWeight(maxBytes)
        .weigher((CacheKey key, CachedAnswer answer) -> (int) Math.min(Integer.MAX_VALUE,
            Math.max(floor, (long) answer.wire().length + key.bytes().length + OVERHEAD)))
        // Maintenance (eviction) on the thread that fills, at once: never on a reading thread's
        // time, and never behind a common pool that a busy node starves.
        .executor(Runnable::run)
        .build();
    this.map = copies.asMap();
    metrics.entries(0, 0);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public CachedAnswer get(CacheKey key, long nowMillis) {
    CachedAnswer copy = copies.getIfPresent(key);
    if (copy == null) {
      return null;
    }
    if (copy.expiredAt(nowMillis)) {
      map.remove(key, copy);
      return null;
    }
    return copy;
  }

  @Override
  public CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer) {
    long start = System.nanoTime();
    copies.put(key, answer);
    copies.cleanUp();
    metrics.entries(0, copies.estimatedSize());
    metrics.fillNanos(System.nanoTime() - start);
    return CompletableFuture.completedFuture(Boolean.TRUE);
  }

  @Override
  public CompletionStage<Integer> flushName(String flushed, int qtype) {
    return flushNameStoredBefore(flushed, qtype, Long.MAX_VALUE);
  }

  @Override
  public CompletionStage<Integer> flushNameStoredBefore(String flushed, int qtype, long storedBeforeMillis) {
    CacheKey target = CacheKey.of(flushed, 1, 1, 0);
    int removed = 0;
    for (Map.Entry<CacheKey, CachedAnswer> e : map.entrySet()) {
      if (e.getValue().storedAtMillis() < storedBeforeMillis && named(e.getKey(), target, qtype)
          && map.remove(e.getKey(), e.getValue())) {
        removed++;
      }
    }
    metrics.entries(0, copies.estimatedSize());
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
    CachedAnswer held = map.get(key);
    boolean removed = held != null && held.storedAtMillis() <= storedAtMillis && map.remove(key, held);
    metrics.entries(0, copies.estimatedSize());
    return CompletableFuture.completedFuture(removed);
  }

  @Override
  public void entries(BiConsumer<CacheKey, CachedAnswer> sink) {
    map.forEach(sink);
  }

  @Override
  public long size() {
    return copies.estimatedSize();
  }

  @Override
  public void close() {
    // Nothing to release: copies live only as long as the process.
  }
}
