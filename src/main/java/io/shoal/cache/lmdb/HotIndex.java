package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The hot answers of every shard of one LMDB cache in one map, sized once for them all. Each
 * shard's {@link HotAnswers} puts and removes only its own keys here, under its own bound and
 * rules, and a hit looks here through its key's shard ({@link ShardState#lookup}), which first
 * knows whether a fill of its own is pending.
 */
final class HotIndex {
  final ConcurrentHashMap<CacheKey, CachedAnswer> answers;

  /** For up to {@code capacity} answers over all shards. */
  HotIndex(long capacity) {
    int bound = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(0, capacity));
    this.answers = new ConcurrentHashMap<>(Math.max(16, bound * 4 / 3 + 1));
  }
}
