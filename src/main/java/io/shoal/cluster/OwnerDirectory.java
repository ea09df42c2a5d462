package io.shoal.cluster;

import akka.actor.typed.ActorRef;
import akka.routing.ConsistentHash;
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
