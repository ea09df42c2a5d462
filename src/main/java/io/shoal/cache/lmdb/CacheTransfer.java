package io.shoal.cache.lmdb;

import io.shoal.cache.AnswerCache.Keyed;
import io.shoal.cache.AnswerCache.Loaded;
import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

/**
 * An LMDB cache's answers in bulk, for {@code shoal cache dump} and {@code load}: a load goes
 * through each shard's writer with its fills, a dump reads committed answers shard by shard.
 */
final class CacheTransfer {
  private final String name;
  private final ShardState[] shards;
  private final int shardCount;
  private final CompletableFuture<Void> started;
  private final AtomicBoolean closed;
  private final Duration maxBackoff;
  private final Duration flushTimeout;
  private final Duration closeTimeout;

  CacheTransfer(String name, ShardState[] shards, CompletableFuture<Void> started, AtomicBoolean closed,
      Duration maxBackoff, Duration flushTimeout, Duration closeTimeout) {
    this.name = name;
    this.shards = shards;
    this.shardCount = shards.length;
    this.started = started;
    this.closed = closed;
    this.maxBackoff = maxBackoff;
    this.flushTimeout = flushTimeout;
    this.closeTimeout = closeTimeout;
  }

  /**
   * Queued for each key's shard after the fills and in one transaction per shard: see {@link
   * ShardStore#loadIntoRoom}. Loaded answers are not served before they are committed, and never
   * count against the capacity while they wait, so a load never hides a live answer from readers.
   */
  CompletionStage<Loaded[]> loadIntoRoom(List<Keyed> answers, long nowMillis) {
    Loaded[] results = new Loaded[answers.size()];
    if (closed.get()) {
      java.util.Arrays.fill(results, Loaded.NOT_STORED);
      return CompletableFuture.completedFuture(results);
    }
    List<List<Integer>> byShard = new ArrayList<>(shardCount);
    for (int i = 0; i < shardCount; i++) {
      byShard.add(new ArrayList<>());
    }
    for (int i = 0; i < answers.size(); i++) {
      byShard.get(LmdbAnswerCache.shardOf(answers.get(i).key(), shardCount)).add(i);
    }
    CompletableFuture<Void> all = started.thenApply(v -> null);
    for (int s = 0; s < shardCount; s++) {
      List<Integer> at = byShard.get(s);
      if (at.isEmpty()) {
        continue;
      }
      ShardState shard = shards[s];
      List<Keyed> part = at.stream().map(answers::get).toList();
      CompletionStage<Void> placed = started.thenCompose(v -> {
        CompletableFuture<Loaded[]> done = new CompletableFuture<>();
        shard.loads.add(new ShardState.Load(part, nowMillis, done));
        shard.writer.tell(CacheShard.LoadsQueued.INSTANCE);
        return done.orTimeout(flushTimeout.toMillis(), TimeUnit.MILLISECONDS);
      }).thenAccept(r -> {
        for (int j = 0; j < r.length; j++) {
          results[at.get(j)] = r[j];
        }
      });
      all = all.thenCombine(placed, (a, b) -> null);
    }
    // Also when the shards never open: the load says so rather than wait for ever.
    return all.thenApply(v -> results).orTimeout(flushTimeout.toMillis() + closeTimeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Answers copied per read snapshot while a dump walks a shard. */
  private static final int DUMP_CHUNK = 512;

  /**
   * Committed answers, shard by shard in key order, {@link #DUMP_CHUNK} per read snapshot (see
   * {@link ReaderPool#scan}); fills still waiting for their commit are not included. A shard that
   * restarts during the dump is resumed where it was; one that stays down fails the dump with
   * {@link IllegalStateException}, rather than let it pass for the whole cache.
   */
  void entries(BiConsumer<CacheKey, CachedAnswer> sink) {
    started.orTimeout(closeTimeout.toMillis(), TimeUnit.MILLISECONDS).join();
    for (ShardState shard : shards) {
      byte[] after = null;
      while (true) {
        ShardStore store = openStore(shard);
        List<ReaderPool.Stored> chunk;
        try {
          chunk = store.scan(after, DUMP_CHUNK);
        } catch (IllegalStateException e) {
          // Closed under the scan: a restart reopens it, a close of the cache ends the dump below.
          continue;
        }
        if (chunk.isEmpty()) {
          break;
        }
        for (ReaderPool.Stored s : chunk) {
          sink.accept(CacheKey.ofBytes(s.key()), s.answer());
        }
        after = chunk.get(chunk.size() - 1).key();
      }
    }
  }

  /** The shard's open store, waiting while it opens or restarts (with back-off, up to maxBackoff). */
  private ShardStore openStore(ShardState shard) {
    long deadline = System.nanoTime() + maxBackoff.plusSeconds(5).toNanos();
    while (true) {
      ShardStore store = shard.store();
      if (store != null) {
        return store;
      }
      if (closed.get() || System.nanoTime() > deadline) {
        throw new IllegalStateException("shard " + shard.index + " of LMDB cache " + name + " is not open");
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for shard " + shard.index, e);
      }
    }
  }
}
