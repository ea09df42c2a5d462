package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.wire.CacheKey;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.lmdbjava.Txn;

/**
 * A shard's {@code when_full} policy, applied inside the shard's own write transaction: the
 * entries it removes go in the same commit as the answers that needed the room, so the cap is
 * exact at every commit and a crash can never leave the shard over it. The answers the shard
 * stores go through the policy too, which writes them to LMDB at once or when the transaction is
 * about to commit ({@link #flush}).
 */
interface EvictionPolicy {

  /** The policy for {@code whenFull} over {@code databases}. */
  static EvictionPolicy of(WhenFull whenFull, ShardDatabases databases) {
    return whenFull == WhenFull.EVICT_ONE ? new ExpiryInHeap(databases) : new SampledEviction(databases);
  }

  /** Makes what is on disk fit the policy at open (an index dropped, an order built). */
  void reconcile(Txn<ByteBuffer> txn);

  /** The expiry of the answer stored under {@code key} in this transaction, or -1 when none is. */
  long expiryOf(Txn<ByteBuffer> txn, CacheKey key);

  /**
   * Whether LMDB may hold an answer under {@code key}: false only when the policy knows it holds
   * none, so a reader answers the miss without a read. Called from any thread; a policy that keeps
   * no record of the keys (sampled eviction) says true.
   */
  default boolean mayHold(CacheKey key) {
    return true;
  }

  /** Stores {@code answer} under {@code key}, replacing the one there. */
  void store(Txn<ByteBuffer> txn, CacheKey key, CachedAnswer answer);

  /** The answer under {@code key} was deleted from LMDB by the caller (a flush or a release). */
  void removed(byte[] key);

  /**
   * Removes at least one entry when there is one, telling {@code removed} each key that went;
   * returns how many went (0: the shard is empty).
   */
  int evict(Txn<ByteBuffer> txn, long nowMillis, Consumer<CacheKey> removed);

  /**
   * The expiry times of up to {@code depth} entries that the policy would evict first, in order,
   * or null when it cannot tell (no order kept): what readers use to apply the cap to answers
   * that are not committed yet (see {@link Horizon}).
   */
  long[] soonest(Txn<ByteBuffer> txn, int depth);

  /** The transaction is about to commit: writes to LMDB what the policy has held back. */
  default void flush(Txn<ByteBuffer> txn) {}

  /** The transaction committed. */
  default void committed() {}

  /** The transaction ended, after {@link #committed} or aborted without it. */
  default void ending() {}
}
