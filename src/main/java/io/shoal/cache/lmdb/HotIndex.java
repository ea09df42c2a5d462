package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The hot answers of every shard of one LMDB cache in one map, so that a hit is a single look-up
 * made before the key's shard is even worked out (CRC-32 of the key). Each shard's
 * {@link HotAnswers} puts and removes only its own keys here, under its own bound and rules.
 *
 * <p>The look-up here stands in for the shard's own only while no fill is pending in any shard:
 * a pending fill's answer is newer than a hot one and is served from the shard's uncommitted
 * answers, and pending fills may displace committed answers (see {@link Horizon}). So
 * {@link #pendingFills} counts the fills of every shard, kept with each shard's own count by
 * {@link ShardState}. A warm cache has none pending most of the time; while fills are pending,
 * hits take the shard's path as before.
 */
final class HotIndex {
  final ConcurrentHashMap<CacheKey, CachedAnswer> answers;
  /** Fills pending in any shard of the cache: the sum of the shards' {@code pending}. */
  final AtomicInteger pendingFills = new AtomicInteger();

  /** For up to {@code capacity} answers over all shards. */
  HotIndex(long capacity) {
    int bound = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(0, capacity));
    this.answers = new ConcurrentHashMap<>(Math.max(16, bound * 4 / 3 + 1));
  }

  /** The hot answer for {@code key} at {@code nowMillis}, or null: ask the key's shard then. */
  CachedAnswer get(CacheKey key, long nowMillis) {
    if (pendingFills.get() != 0) {
      return null;
    }
    CachedAnswer held = answers.get(key);
    return held == null || held.expiredAt(nowMillis) ? null : held;
  }
}
