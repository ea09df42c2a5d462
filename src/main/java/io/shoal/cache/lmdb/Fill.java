package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.util.concurrent.CompletableFuture;

/**
 * An answer to store under {@code key}, queued for its shard ({@link ShardState#queued}).
 * {@code committed} completes with true once the transaction holding it committed, false if it
 * was dropped. An {@code awaited} fill has a caller waiting on it (write-through) and is committed
 * at once; the others may wait for the commit window. {@code sequence} numbers the fills its
 * shard was offered, 1 for the first: how many fills came after this one.
 */
record Fill(CacheKey key, CachedAnswer answer, CompletableFuture<Boolean> committed, boolean awaited, long sequence) {}
