package io.shoal.ingress;

import akka.actor.typed.ActorRef;
import io.shoal.metrics.ServerMetrics;
import io.shoal.wire.CacheKey;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The workers misses go to, each owning a partition of the key space, and how many misses each
 * holds: at most {@code maxPending}; beyond that a query is dropped and counted, so overload costs
 * answers, never unbounded memory.
 */
final class Workers {
  private final List<ActorRef<IngressWorker.Command>> refs;
  private final AtomicInteger[] pending;
  private final int maxPending;
  private final ServerMetrics metrics;

  /** @param pending each worker's count of queries not yet answered, shared with the worker */
  Workers(List<ActorRef<IngressWorker.Command>> refs, AtomicInteger[] pending, int maxPending, ServerMetrics metrics) {
    this.refs = List.copyOf(refs);
    this.pending = pending;
    this.maxPending = maxPending;
    this.metrics = metrics;
  }

  /** The worker that owns {@code key}: identical questions must meet in one worker to coalesce. */
  int partition(CacheKey key) {
    // Spread the key's hash.
    int h = key.hashCode() * 0x9E3779B9;
    return Math.floorMod(h ^ (h >>> 16), refs.size());
  }

  /** Counts one more query for {@code worker}: false (counted as dropped) when it holds its most already. */
  boolean admit(int worker) {
    if (pending[worker].incrementAndGet() > maxPending) {
      pending[worker].decrementAndGet();
      metrics.dropped(ServerMetrics.OVERLOAD);
      return false;
    }
    return true;
  }

  ActorRef<IngressWorker.Command> get(int worker) {
    return refs.get(worker);
  }

  /** {@code worker}'s count of queries not yet answered. */
  AtomicInteger pending(int worker) {
    return pending[worker];
  }

  void tellAll(IngressWorker.Command command) {
    for (ActorRef<IngressWorker.Command> w : refs) {
      w.tell(command);
    }
  }

  /** Misses accepted but not yet answered, over all workers. */
  int pending() {
    int sum = 0;
    for (AtomicInteger p : pending) {
      sum += p.get();
    }
    return sum;
  }
}
