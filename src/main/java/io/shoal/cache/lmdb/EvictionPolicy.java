package io.shoal.cache.lmdb;

import io.shoal.cache.WhenFull;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.lmdbjava.Txn;

/**
 * A shard's {@code when_full} policy, applied inside the shard's own write transaction: the
 * entries it removes go in the same commit as the answers that needed the room, so the cap is
 * exact at every commit and a crash can never leave the shard over it.
 */
interface EvictionPolicy {

  /** The policy for {@code whenFull} over {@code databases}. */
  static EvictionPolicy of(WhenFull whenFull, ShardDatabases databases) {
    SampledEviction sampled = new SampledEviction(databases);
    return whenFull == WhenFull.EVICT_ONE ? new ExpiryIndexEviction(databases, sampled) : sampled;
  }

  /** Makes what is on disk fit the policy at open (an index built or dropped). */
  void reconcile(Txn<ByteBuffer> txn);

  /** An answer was stored under {@code key}; {@code replacedExpiry} is the old one's, or -1 when new. */
  void stored(Txn<ByteBuffer> txn, byte[] key, long expiresAt, long replacedExpiry);

  /**
   * Removes at least one entry when there is one, telling {@code removed} each key that went;
   * returns how many went (0: the shard is empty).
   */
  int evict(Txn<ByteBuffer> txn, long nowMillis, Consumer<byte[]> removed);

  /**
   * The expiry times of up to {@code depth} entries that the policy would evict first, in order,
   * or null when it cannot tell (no index): what readers use to apply the cap to answers that
   * are not committed yet (see {@link Horizon}).
   */
  long[] soonest(Txn<ByteBuffer> txn, int depth);

  /**
   * The write transaction the policy worked in is about to commit or abort: what the policy keeps
   * open in it (a cursor) must be closed now, while the transaction still lives.
   */
  default void ending() {}
}
