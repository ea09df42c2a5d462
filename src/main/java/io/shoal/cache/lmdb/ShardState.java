package io.shoal.cache.lmdb;

import akka.actor.typed.ActorRef;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What one shard shares between its {@link CacheShard} actor and the threads that read and fill
 * the cache: the only place that state lives.
 *
 * <p>Fills wait in {@link #queued} rather than in the shard actor's mailbox: a message per fill
 * would wake a thread per fill, most of them only to add the fill to a batch. A caller queues its
 * fill and wakes the shard only when nothing has woken it since its last commit (or when it waits
 * for the commit itself); the shard drains the whole queue into one transaction.
 */
final class ShardState {
  final int index;
  /** The shard's share of max_entries: no more answers than this are served, committed or not. */
  private final long capacity;
  /** Fills offered to the shard so far: the last one's {@link Fill#sequence}. */
  private final AtomicLong offered = new AtomicLong();

  /**
   * Fills waiting for the shard to take them into a transaction. Added by fillers, taken only by
   * the shard actor. Every fill in it is counted in {@link #pending} and its answer is in
   * {@link #uncommitted} (unless a newer answer for the same key replaced it there).
   */
  final Queue<Fill> queued = new ConcurrentLinkedQueue<>();

  /**
   * Fills handed to the shard and not yet settled (committed or dropped): those in
   * {@link #queued} plus those in the batch the shard is committing. Incremented before a fill is
   * queued, decremented before its future completes, so a reader woken by the completion never
   * counts it as still waiting. Bounded by the fill queue limit.
   */
  final AtomicInteger pending = new AtomicInteger();

  /** A removal waiting for the shard: a {@link Flush} or a {@link Release}. */
  sealed interface Removal permits Flush, Release {
    /** Completes it as having removed nothing (the shard stopped first). */
    void removedNothing();
  }

  /** A flush waiting for the shard: remove a wire-form name's answers, complete with how many went. */
  record Flush(byte[] name, int qtype, CompletableFuture<Integer> removed) implements Removal {
    @Override
    public void removedNothing() {
      removed.complete(0);
    }
  }

  /**
   * Remove the answer under {@code key} if it was stored at {@code storedAtMillis} or before;
   * complete with whether it went.
   */
  record Release(CacheKey key, long storedAtMillis, CompletableFuture<Boolean> removed) implements Removal {
    @Override
    public void removedNothing() {
      removed.complete(Boolean.FALSE);
    }
  }

  /**
   * Removals waiting for the shard, in arrival order. Like fills they wait here, not in the
   * mailbox, so that a restart of the shard loses none: the removal at the head is taken off only
   * once it ran, and a new incarnation starts with what is left.
   */
  final Queue<Removal> flushes = new ConcurrentLinkedQueue<>();

  /**
   * Answers of {@code shoal cache load} to store into free room only ({@link
   * AnswerCache#loadIntoRoom}), one result each into {@code done}. They wait here rather than
   * with the fills: a queued fill is served at once and counts against the capacity (see
   * {@link Horizon}), so it would push live answers out of readers' sight, which a load must not.
   */
  record Load(List<AnswerCache.Keyed> answers, long nowMillis, CompletableFuture<AnswerCache.Loaded[]> done) {
    /** Completes it as having stored nothing (the shard stopped first). */
    void storedNothing() {
      AnswerCache.Loaded[] none = new AnswerCache.Loaded[answers.size()];
      Arrays.fill(none, AnswerCache.Loaded.NOT_STORED);
      done.complete(none);
    }
  }

  /** Loads waiting for the shard, in arrival order; the head is taken off once it ran, as flushes are. */
  final Queue<Load> loads = new ConcurrentLinkedQueue<>();

  /** Set by the filler that wakes the shard for queued fills; cleared by the shard before it drains the queue. */
  final AtomicBoolean woken = new AtomicBoolean();

  /**
   * Answers handed to the shard and not yet settled, served to readers at once: a slow commit
   * (an fsync in sync = full) delays durability, never the hit, as long as fewer than the shard's
   * capacity were filled after it. An entry is removed when its fill settles, unless a newer
   * answer for the key took its place.
   */
  private final ConcurrentHashMap<CacheKey, Fill> uncommitted = new ConcurrentHashMap<>();

  /** The open store, or null while the shard is opening, down or closed; set only by the shard actor. */
  private final AtomicReference<ShardStore> store = new AtomicReference<>();

  /** The shard's actor; null until the supervisor spawned it. */
  volatile ActorRef<CacheShard.Command> writer;

  /** Failures of the shard so far: a shard that opens after one says it reopened. */
  final AtomicInteger failures = new AtomicInteger();

  /** Entries as of the shard's last commit (expired ones included until evicted). */
  volatile long entries;

  /** Fills pending in every shard of the cache: moved with {@link #pending} (see {@link HotIndex}). */
  private final AtomicInteger allPending;

  ShardState(int index, long capacity, AtomicInteger allPending) {
    this.index = index;
    this.capacity = capacity;
    this.allPending = allPending;
  }

  /** {@code n} fills settled (committed or dropped): no longer pending, here or cache-wide. */
  private void settled(int n) {
    pending.addAndGet(-n);
    allPending.addAndGet(-n);
  }

  /** After a shard restart: only the {@code n} fills still queued are pending. */
  void resetPending(int n) {
    int was = pending.getAndSet(n);
    allPending.addAndGet(n - was);
  }

  /**
   * The answer for {@code key} at {@code nowMillis}: an uncommitted one first (no LMDB call then),
   * else the committed one unless the uncommitted answers ahead of it displaced it.
   */
  CachedAnswer lookup(CacheKey key, long nowMillis) {
    // With no fill pending, every answer still in the map has settled (it is committed, or it was
    // dropped): the common case of a warm cache skips the look-up there.
    int waiting = pending.get();
    if (waiting > 0) {
      Fill waitingFill = uncommitted.get(key);
      if (waitingFill != null && !waitingFill.answer().expiredAt(nowMillis)) {
        // Past the shard's capacity, the newer answers ahead of it have evicted it already, as the
        // commit that takes them all will: a long commit window under churn never makes the
        // cache hold more than max_entries.
        return offered.get() - waitingFill.sequence() < capacity ? waitingFill.answer() : null;
      }
    }
    ShardStore s = store.get();
    if (s == null) {
      return null;
    }
    CachedAnswer committed = s.read(key, nowMillis);
    if (committed != null && waiting > 0 && s.displaced(waiting, committed.expiresAtMillis())) {
      // Evicted, as far as anyone can see, by answers still on their way to this shard.
      return null;
    }
    return committed;
  }

  /**
   * Queues a fill unless {@code limit} fills are pending already; returns it, or null when it was
   * refused. The answer is served from the moment it is queued. Only an {@code awaited} fill has a
   * future to complete ({@link Fill#committed}).
   */
  Fill offer(CacheKey key, CachedAnswer answer, boolean awaited, int limit) {
    // Cache-wide first: from here on hits take the shard's path, which sees this fill.
    allPending.incrementAndGet();
    if (pending.incrementAndGet() > limit) {
      pending.decrementAndGet();
      allPending.decrementAndGet();
      return null;
    }
    Fill fill = new Fill(key, answer, awaited ? new CompletableFuture<>() : null, offered.incrementAndGet());
    uncommitted.put(key, fill);
    queued.add(fill);
    return fill;
  }

  /**
   * {@code fills} settled (committed when {@code stored}, else dropped): no longer pending, their
   * answers no longer served from here (unless a newer fill of the key took their place), and
   * their waiters told.
   */
  void settle(List<Fill> fills, boolean stored) {
    // No longer pending first: whoever a completed fill wakes must not see it still displacing
    // a committed answer (see Horizon).
    settled(fills.size());
    for (Fill f : fills) {
      uncommitted.remove(f.key(), f);
      f.settle(stored);
    }
  }

  ShardStore store() {
    return store.get();
  }

  void opened(ShardStore opened) {
    store.set(opened);
    entries = opened.entries();
  }

  /** Unpublishes {@code closing} unless a newer store already took its place. */
  void closing(ShardStore closing) {
    store.compareAndSet(closing, null);
  }
}
