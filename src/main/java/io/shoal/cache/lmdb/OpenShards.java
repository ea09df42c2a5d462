package io.shoal.cache.lmdb;

import akka.actor.typed.ActorRef;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What the shards of one LMDB cache share with callers on other threads: the environment each
 * shard has open (null while it is down, so reads are misses), the actor that writes it, the
 * fills queued for it and how many there are, and its entry count.
 *
 * <p>Fills wait in a queue per shard rather than in the shard actor's mailbox: a message per
 * fill would wake a thread per fill, most of them only to add the fill to a batch. A caller
 * queues its fill and wakes the shard only when nothing has woken it since its last commit (or
 * when it waits for the commit itself); the shard drains the whole queue into one transaction.
 */
final class OpenShards {
  private final AtomicReferenceArray<ShardEnvironment> environments;
  private final AtomicReferenceArray<ActorRef<CacheShard.Command>> writers;
  private final AtomicInteger[] pendingFills;
  private final Queue<CacheShard.Fill>[] queued;
  private final AtomicBoolean[] woken;
  private final AtomicLongArray entries;

  OpenShards(int shardCount) {
    environments = new AtomicReferenceArray<>(shardCount);
    writers = new AtomicReferenceArray<>(shardCount);
    pendingFills = new AtomicInteger[shardCount];
    @SuppressWarnings("unchecked")
    Queue<CacheShard.Fill>[] queues = new Queue[shardCount];
    queued = queues;
    woken = new AtomicBoolean[shardCount];
    for (int i = 0; i < shardCount; i++) {
      pendingFills[i] = new AtomicInteger();
      queued[i] = new ConcurrentLinkedQueue<>();
      woken[i] = new AtomicBoolean();
    }
    entries = new AtomicLongArray(shardCount);
  }

  int count() {
    return pendingFills.length;
  }

  /** The shard's open environment, or null while it is opening, restarting or closed. */
  ShardEnvironment environment(int shard) {
    return environments.get(shard);
  }

  void opened(int shard, ShardEnvironment environment) {
    environments.set(shard, environment);
    entries.set(shard, environment.entries());
  }

  /** Unpublishes {@code environment} unless a newer one already took its place. */
  void closing(int shard, ShardEnvironment environment) {
    environments.compareAndSet(shard, environment, null);
  }

  ActorRef<CacheShard.Command> writer(int shard) {
    return writers.get(shard);
  }

  void writer(int shard, ActorRef<CacheShard.Command> ref) {
    writers.set(shard, ref);
  }

  /** Fills handed to the shard and not yet committed or dropped by it. */
  AtomicInteger pendingFills(int shard) {
    return pendingFills[shard];
  }

  /** Fills waiting for the shard to take them into a transaction. */
  Queue<CacheShard.Fill> queued(int shard) {
    return queued[shard];
  }

  /** Set by the caller that wakes the shard for queued fills; cleared by the shard as it drains. */
  AtomicBoolean woken(int shard) {
    return woken[shard];
  }

  void entries(int shard, long n) {
    entries.set(shard, n);
  }

  long totalEntries() {
    long sum = 0;
    for (int i = 0; i < entries.length(); i++) {
      sum += entries.get(i);
    }
    return sum;
  }
}
