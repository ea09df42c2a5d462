package io.shoal.cache.lmdb;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.nio.ByteBuffer;
import java.util.List;
import org.lmdbjava.Txn;

/**
 * What a load, a flush and a release of a {@link ShardStore} do inside its write transaction.
 * The store begins and commits the transaction (and makes room when the map is full); these
 * change the answers and keep the eviction policy's order and the hot answers in step. Only the
 * shard's actor writes, never two messages at once.
 */
final class ShardEdits {
  /** The store's eviction inside a transaction, counted in its metrics. */
  @FunctionalInterface
  interface Evictor {
    int evict(Txn<ByteBuffer> txn, long nowMillis);
  }

  private final ShardSettings settings;
  private final ShardDatabases databases;
  private final EvictionPolicy eviction;
  private final HotAnswers hot;
  private final Evictor evictor;
  private final ByteBuffer keyScratch = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY);
  private final ByteBuffer indexScratch = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY + 8);

  ShardEdits(ShardSettings settings, ShardDatabases databases, EvictionPolicy eviction, HotAnswers hot, Evictor evictor) {
    this.settings = settings;
    this.databases = databases;
    this.eviction = eviction;
    this.hot = hot;
    this.evictor = evictor;
  }

  /**
   * Stores the answers of a load, each only where it takes no live answer's place (see {@link
   * AnswerCache#loadIntoRoom}): a key held live keeps its answer; a new key needs room under the
   * shard's capacity, or (with an expiry order) a soonest entry that has expired, which goes. It
   * never makes room by evicting a live answer.
   */
  AnswerCache.Loaded[] loadIntoRoom(Txn<ByteBuffer> txn, List<AnswerCache.Keyed> answers, long nowMillis) {
    AnswerCache.Loaded[] results = new AnswerCache.Loaded[answers.size()];
    long count = databases.answers().stat(txn).entries;
    for (int i = 0; i < results.length; i++) {
      CacheKey cacheKey = answers.get(i).key();
      CachedAnswer answer = answers.get(i).answer();
      long replaced = eviction.expiryOf(txn, cacheKey);
      if (replaced > nowMillis) {
        results[i] = AnswerCache.Loaded.ALREADY_CACHED;
        continue;
      }
      if (replaced < 0 && count >= settings.capacity()) {
        long[] head = eviction.soonest(txn, 1);
        if (head == null || head.length == 0 || head[0] > nowMillis) {
          results[i] = AnswerCache.Loaded.NO_ROOM;
          continue;
        }
        // Only expired entries: the head of the expiry order and the expired ones behind it.
        count -= evictor.evict(txn, nowMillis);
      }
      eviction.store(txn, cacheKey, answer);
      hot.stored(cacheKey, answer);
      if (replaced < 0) {
        count++;
      }
      results[i] = AnswerCache.Loaded.STORED;
    }
    return results;
  }

  /** Removes every answer for the wire-form {@code name} of {@code qtype} (0: every type). */
  int removeName(Txn<ByteBuffer> txn, byte[] name, int qtype) {
    return databases.removeName(txn, name, qtype, key -> {
      hot.removed(key);
      eviction.removed(key);
    });
  }

  /**
   * Removes the answer under each release's key that was stored at its {@code storedAtMillis} or
   * before; returns, release by release, whether one went.
   */
  boolean[] removeStored(Txn<ByteBuffer> txn, List<ShardState.Release> releases) {
    boolean[] removed = new boolean[releases.size()];
    for (int i = 0; i < removed.length; i++) {
      ShardState.Release release = releases.get(i);
      byte[] key = release.key().bytes();
      ByteBuffer held = databases.answers().get(txn, AnswerCodec.copyInto(keyScratch, key));
      if (held == null || held.remaining() < 16 || AnswerCodec.storedAt(held) > release.storedAtMillis()) {
        continue;
      }
      databases.delete(txn, key, AnswerCodec.expiresAt(held), keyScratch, indexScratch);
      hot.removed(key);
      eviction.removed(key);
      removed[i] = true;
    }
    return removed;
  }
}
