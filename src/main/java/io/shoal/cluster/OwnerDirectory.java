package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.routing.ConsistentHash;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.CacheMetrics;
import io.shoal.wire.CacheKey;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Which node owns which cache key: a consistent-hash ring over the reachable members' addresses,
 * rebuilt by {@link Membership} when they change and read lock-free by the workers.
 */
public final class OwnerDirectory {
  /** Virtual nodes per member: enough for an even spread over a handful of nodes. */
  private static final int VIRTUAL_NODES = 64;

  private final AtomicReference<Ring> ring = new AtomicReference<>(Ring.EMPTY);
  /** Copies of answers owned by other nodes; null: none are kept. */
  private final AnswerCache nearCache;
  private final CacheMetrics nearMetrics;

  /** A directory that keeps no copies of other nodes' answers (and a single node's, empty). */
  public OwnerDirectory() {
    this(null, null);
  }

  /**
   * @param nearCache where copies of answers fetched from their owners are kept, apart from the
   *     node's own caches so they never take room from the answers it owns; null for none
   * @param nearMetrics the near cache's hits and misses
   */
  public OwnerDirectory(AnswerCache nearCache, CacheMetrics nearMetrics) {
    this.nearCache = nearCache;
    this.nearMetrics = nearMetrics;
  }

  /** This node's copy of an answer another node owns, or null. */
  public CachedAnswer nearCopy(CacheKey key, long nowMillis) {
    if (nearCache == null) {
      return null;
    }
    CachedAnswer copy = nearCache.get(key, nowMillis);
    if (copy != null) {
      nearMetrics.hit();
    } else {
      nearMetrics.miss();
    }
    return copy;
  }

  /** Keeps a copy of an answer another node owns, until its TTL ends or the near cache is full. */
  public void keepCopy(CacheKey key, CachedAnswer answer) {
    if (nearCache != null) {
      nearCache.fillBehind(key, answer);
    }
  }

  private record Ring(ConsistentHash<String> hash, Map<String, ActorRef<PeerLookup>> owners, String self) {
    static final Ring EMPTY = new Ring(null, Map.of(), "");
  }

  /** The owner to ask for {@code key}, or null when this node owns it (or there are no peers). */
  public ActorRef<PeerLookup> ownerOf(CacheKey key) {
    Ring r = ring.get();
    if (r.hash == null || r.hash.isEmpty()) {
      return null;
    }
    String owner = r.hash.nodeFor(key.bytes());
    return owner.equals(r.self) ? null : r.owners.get(owner);
  }

  /** Replaces the ring: {@code owners} maps each member's address to its owner endpoint. */
  void update(Map<String, ActorRef<PeerLookup>> owners, String self) {
    ConsistentHash<String> hash = ConsistentHash.create(List.copyOf(owners.keySet()), VIRTUAL_NODES);
    ring.set(new Ring(hash, Map.copyOf(owners), self));
  }

  /** Forgets every owner: this node answers every key itself (it is out of the cluster). */
  void clear() {
    ring.set(Ring.EMPTY);
  }

  /** Number of nodes in the ring (this one included when registered). */
  public int size() {
    return ring.get().owners.size();
  }
}
