package io.shoal.cache.lmdb;

import akka.actor.typed.ActorRef;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What the shards of one LMDB cache publish for callers on other threads: the environment each
 * shard has open (null while it is down, so reads are misses), the actor that takes its fills,
 * how many fills wait for it, and its entry count.
 */
final class OpenShards {
  private final AtomicReferenceArray<ShardEnvironment> environments;
  private final AtomicReferenceArray<ActorRef<CacheShard.Command>> writers;
  private final AtomicInteger[] pendingFills;
  private final AtomicLongArray entries;

  OpenShards(int shardCount) {
    environments = new AtomicReferenceArray<>(shardCount);
    writers = new AtomicReferenceArray<>(shardCount);
    pendingFills = new AtomicInteger[shardCount];
    for (int i = 0; i < shardCount; i++) {
      pendingFills[i] = new AtomicInteger();
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

  /** Fills sent to the shard and not yet committed or dropped by it. */
  AtomicInteger pendingFills(int shard) {
    return pendingFills[shard];
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
