package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.util.concurrent.CompletableFuture;

/**
 * An answer to store under {@code key}, queued for its shard ({@link ShardState#queued}).
 * A fill a caller waits on (write-through) has {@code committed}, which completes with true once
 * the transaction holding it committed, false if it was dropped, and is committed at once; a
 * write-behind fill has none (null: nobody would read it) and may wait for the commit window.
 * {@code sequence} numbers the fills its shard was offered, 1 for the first: how many fills came
 * after this one.
 */
record Fill(CacheKey key, CachedAnswer answer, CompletableFuture<Boolean> committed, long sequence) {

  /** Done with it: stored or not. */
  void settle(boolean stored) {
    if (committed != null) {
      committed.complete(stored);
    }
  }
}
