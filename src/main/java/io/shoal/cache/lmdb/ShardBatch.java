package io.shoal.cache.lmdb;

import akka.actor.typed.ActorRef;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.LmdbShardMetrics;
import java.util.ArrayList;
import java.util.List;

/**
 * The group commit of one {@link CacheShard}: takes every fill waiting in the shard's queue into
 * one batch, has the store commit it, and settles each fill (its future, the pending count, the
 * metrics) with the outcome. Runs only inside the shard actor's messages.
 */
final class ShardBatch implements ShardStore.Outcome {
  private final ShardSettings settings;
  private final ShardState state;
  private final ShardStore store;
  private final CacheMetrics metrics;
  private final LmdbShardMetrics shardMetrics;
  private final ActorRef<CacheShard.Event> events;
  /** Fills of the batch being committed that are settled already: they are settled in order. */
  private int settledOfBatch;

  ShardBatch(ShardSettings settings, ShardState state, ShardStore store, CacheMetrics metrics,
      LmdbShardMetrics shardMetrics, ActorRef<CacheShard.Event> events) {
    this.settings = settings;
    this.state = state;
    this.store = store;
    this.metrics = metrics;
    this.shardMetrics = shardMetrics;
    this.events = events;
  }

  /**
   * Takes every queued fill into one batch and commits it. The wake-up flag is cleared before
   * the queue is drained, so a fill queued after the drain wakes the shard again. If the store
   * throws, the fills not yet settled are answered as not stored and the exception goes on.
   */
  void commitQueued() {
    state.woken.set(false);
    List<Fill> fills = takeQueued();
    if (fills.isEmpty()) {
      return;
    }
    settledOfBatch = 0;
    try {
      store.commit(fills, System.currentTimeMillis(), this);
    } catch (RuntimeException e) {
      settle(fills.subList(settledOfBatch, fills.size()), false);
      throw e;
    }
  }

  /** At stop: every fill still queued is answered as not stored. */
  void abandonQueued() {
    settle(takeQueued(), false);
  }

  private List<Fill> takeQueued() {
    List<Fill> fills = new ArrayList<>();
    for (Fill f = state.queued.poll(); f != null; f = state.queued.poll()) {
      fills.add(f);
    }
    return fills;
  }

  @Override
  public void committed(List<Fill> fills, long nanos, long commitNanos) {
    int n = fills.size();
    shardMetrics.committed(n, commitNanos);
    // shoal_cache_fill_seconds here is the amortised cost of one answer: the whole transaction
    // (puts, evictions, commit and its fsync) divided by the answers it carried. A write-through
    // caller also waits for the fills queued ahead of it, which this does not show.
    long perFill = nanos / n;
    for (int i = 0; i < n; i++) {
      metrics.fillNanos(perFill);
    }
    // Counts first: whoever the settled fill wakes may look at size() at once.
    entriesChanged();
    events.tell(new CacheShard.Committed(settings.shard(), n, nanos));
    settle(fills, true);
  }

  @Override
  public void dropped(List<Fill> fills) {
    settle(fills, false);
  }

  void entriesChanged() {
    long n = store.entries();
    state.entries = n;
    metrics.entries(settings.shard(), n);
  }

  private void settle(List<Fill> fills, boolean stored) {
    settledOfBatch += fills.size();
    state.settle(fills, stored);
  }
}
