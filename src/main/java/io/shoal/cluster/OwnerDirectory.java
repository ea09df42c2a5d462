package io.shoal.cluster;

import akka.routing.ConsistentHash;
import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.CacheMetrics;
import io.shoal.upstream.DatagramSender;
import io.shoal.upstream.UpstreamSelector;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/**
 * Which node owns which cache key, and how to ask it: a consistent-hash ring over the reachable
 * members, rebuilt by {@link Membership} when they change and read lock-free by the workers.
 *
 * <p>An owner is asked over DNS, on its own listeners, with the question marked by
 * {@link DnsQuery#PEER_OPTION} so that it resolves the question itself. The lookup takes the path
 * every client query takes (a hit is answered on the thread that read it), so a remote hit costs a
 * datagram each way: no serialization, no actor hop on either side. A lookup for a query that came
 * over UDP leaves from the listening socket it came in on, and the reply is read there with the
 * clients' queries ({@link #listenerReply}); other lookups leave from the node's upstream sockets.
 * A reply too large for UDP (TC=1) is asked again over TCP.
 */
public final class OwnerDirectory {
  /** Virtual nodes per member: enough for an even spread over a handful of nodes. */
  private static final int VIRTUAL_NODES = 64;

  /** Where one member answers DNS. */
  public record Owner(InetSocketAddress udp, InetSocketAddress tcp) {}

  private final AtomicReference<Ring> ring = new AtomicReference<>(Ring.EMPTY);
  /** The node's upstream sockets, which carry owner lookups too; null on a single node. */
  private final UpstreamSelector sockets;
  /** Copies of answers owned by other nodes; null: none are kept. */
  private final AnswerCache nearCache;
  private final CacheMetrics nearMetrics;
  /** Whether owner lookups may be sent from the listening sockets ({@link #ask(Owner, DnsQuery, Duration, DatagramSender)}). */
  private final boolean fromListeners;
  /** For how long after entering a ring this node asks its keys' previous owners; zero: never. */
  private final long previousOwnerWindowNanos;
  /** {@link System#nanoTime} at which the node last entered a ring, the ring it had been in gone. */
  private volatile long enteredRingAt;
  /** Whether the node has entered a ring at all since it started. */
  private volatile boolean enteredRing;
  /** Members whose warm-join transfer to this node has ended since it was last out of the cluster. */
  private final Set<String> transfersIn = ConcurrentHashMap.newKeySet();

  /** Whether the node's caches may answer now: not while its flush catch-up is pending. */
  private final NodeStatus status;

  /** A directory with no peers: every key is this node's own. */
  public OwnerDirectory() {
    this(null, null, null, Duration.ZERO, false);
  }

  /** As {@link #OwnerDirectory(UpstreamSelector, AnswerCache, CacheMetrics, Duration, boolean, NodeStatus)}, caches always servable. */
  public OwnerDirectory(UpstreamSelector sockets, AnswerCache nearCache, CacheMetrics nearMetrics,
      Duration previousOwnerWindow, boolean fromListeners) {
    this(sockets, nearCache, nearMetrics, previousOwnerWindow, fromListeners, new NodeStatus());
  }

  /**
   * @param sockets the node's upstream sockets, over which owners are asked
   * @param nearCache where copies of answers fetched from their owners are kept, apart from the
   *     node's own caches so they never take room from the answers it owns; null for none
   * @param nearMetrics the near cache's hits and misses
   * @param previousOwnerWindow for how long after this node enters a ring a miss for a key it owns
   *     is asked of the key's previous owner first ({@link #previousOwnerOf}); zero: never
   * @param fromListeners whether owner lookups are sent from the listening socket a query came in
   *     on, where they can be, rather than from an upstream socket of their own
   * @param status the node's readiness, whose flush catch-up holds its caches back ({@link #cachesServable})
   */
  public OwnerDirectory(UpstreamSelector sockets, AnswerCache nearCache, CacheMetrics nearMetrics,
      Duration previousOwnerWindow, boolean fromListeners, NodeStatus status) {
    this.status = status;
    this.sockets = sockets;
    this.fromListeners = fromListeners;
    this.nearCache = nearCache;
    this.nearMetrics = nearMetrics;
    this.previousOwnerWindowNanos = previousOwnerWindow.toNanos();
  }

  /** Whether this node is in cluster mode: it may have peers to ask, and their replies to take. */
  public boolean clustered() {
    return sockets != null;
  }

  /** Whether copies of answers other nodes own are kept here (a near cache). */
  public boolean keepsCopies() {
    return nearCache != null;
  }

  /**
   * Whether this node may answer from its caches now: false while it has not applied the flushes
   * the cluster recorded while it was away (see {@link NodeStatus#cachesServable}).
   */
  public boolean cachesServable() {
    return status.cachesServable();
  }

  /**
   * This node's copy of an answer another node owns, counted as a near-cache hit; null (counted
   * nowhere) when it keeps none. Looked up before the node's own caches, without the ring: only
   * answers fetched from their owners are ever copied here.
   */
  public CachedAnswer nearHit(CacheKey key, long nowMillis) {
    if (nearCache == null) {
      return null;
    }
    CachedAnswer copy = nearCache.get(key, nowMillis);
    if (copy != null) {
      nearMetrics.hit();
    }
    return copy;
  }

  /**
   * Counts a near-cache miss for {@code key}, which neither the near cache nor the node's own
   * caches held, when another node owns it (a name this node owns was never the near cache's).
   */
  public void nearMissed(CacheKey key) {
    if (nearCache != null && ownerOf(key) != null) {
      nearMetrics.miss();
    }
  }

  /** Keeps a copy of an answer another node owns, until its TTL ends or the near cache is full. */
  public void keepCopy(CacheKey key, CachedAnswer answer) {
    if (nearCache != null) {
      nearCache.fillBehind(key, answer);
    }
  }

  /**
   * @param hash over every member in the ring, this node included
   * @param askable over this node and the members whose DNS address is known ({@code hash} when
   *     that is every member): where the keys of a member not known yet are looked up meanwhile
   * @param withoutSelf over every member but this node: where a key goes once this node has left,
   *     and where it was before this node came; null when this node is alone
   * @param others every member but this node
   * @param owners where the members answer DNS, as far as known; a member missing here owns its
   *     keys all the same, and they are looked up as {@code askable} places them meanwhile
   * @param size members in {@code hash} whose keys can be looked up: see {@link #size()}
   */
  private record Ring(
      ConsistentHash<String> hash, ConsistentHash<String> askable, ConsistentHash<String> withoutSelf,
      List<String> others, Map<String, Owner> owners, String self, int size) {
    static final Ring EMPTY = new Ring(null, null, null, List.of(), Map.of(), "", 0);
  }

  /**
   * The owner to ask for {@code key}, or null when this node owns it, there are no peers, or
   * the owner's DNS address is not known yet.
   */
  public Owner ownerOf(CacheKey key) {
    Ring r = ring.get();
    if (r.hash == null || sockets == null) {
      return null;
    }
    String owner = r.hash.nodeFor(key.bytes());
    if (owner.equals(r.self)) {
      return null;
    }
    Owner at = r.owners.get(owner);
    if (at != null) {
      return at;
    }
    // A member whose DNS address is not known yet (it is joining): its keys are looked up where the
    // ring without such members places them, on the node that owned them before it came, which
    // still holds them.
    String before = r.askable.nodeFor(key.bytes());
    return before.equals(r.self) ? null : r.owners.get(before);
  }

  /**
   * The member that owned {@code key} before this node entered the ring, to ask for the answer it
   * still holds while the answers warm join sends this node are on their way: when this node owns
   * {@code key}, entered the ring less than the previous-owner window ago, some other member in
   * the ring has not ended its transfer to this node yet ({@link #transferIn}), and the member's
   * DNS address is known. That member is the one the ring without this node places the key on: it
   * owned the key while this node was away, or took it over when this node handed over at its
   * stop. Null otherwise.
   */
  public Owner previousOwnerOf(CacheKey key) {
    if (!inPreviousOwnerWindow()) {
      return null;
    }
    Ring r = ring.get();
    if (r.withoutSelf == null || !r.hash.nodeFor(key.bytes()).equals(r.self) || transfersIn.containsAll(r.others)) {
      return null;
    }
    return r.owners.get(r.withoutSelf.nodeFor(key.bytes()));
  }

  /**
   * {@code member}'s warm-join transfer to this node has ended: it sent every answer it held that
   * this node now owns. True when that makes every other member in the ring done within the
   * window, and so ends the asking of previous owners ({@link #previousOwnerOf}) before the window does.
   */
  boolean transferIn(String member) {
    Ring r = ring.get();
    boolean before = transfersIn.containsAll(r.others);
    transfersIn.add(member);
    return !before && inPreviousOwnerWindow() && !r.others.isEmpty() && transfersIn.containsAll(r.others);
  }

  private boolean inPreviousOwnerWindow() {
    return enteredRing && System.nanoTime() - enteredRingAt < previousOwnerWindowNanos && sockets != null;
  }

  /**
   * The member that will own {@code key} once this node has left the ring, when this node owns it
   * now; null when another node owns it now, or no other node is in the ring.
   */
  String successorOf(CacheKey key) {
    Ring r = ring.get();
    if (r.withoutSelf == null || !r.hash.nodeFor(key.bytes()).equals(r.self)) {
      return null;
    }
    return r.withoutSelf.nodeFor(key.bytes());
  }

  /**
   * Whether this node owns {@code key} now: the ring places it here, or there is no ring (then
   * the node answers every key itself).
   */
  boolean ownedHere(CacheKey key) {
    Ring r = ring.get();
    return r.hash == null || r.hash.nodeFor(key.bytes()).equals(r.self);
  }

  /** Whether {@code cache} is the near cache: copies of answers other nodes own, not this node's own. */
  boolean isNearCache(AnswerCache cache) {
    return nearCache != null && cache == nearCache;
  }

  /** Whether keys the ring places on {@code member} (a member's cluster address) are looked up there now. */
  boolean looksUpOn(String member) {
    return ring.get().owners.containsKey(member);
  }

  /** Whether the ring now places {@code key} on {@code member} (a member's cluster address). */
  boolean ownedBy(CacheKey key, String member) {
    Ring r = ring.get();
    return r.hash != null && r.hash.nodeFor(key.bytes()).equals(member);
  }

  /**
   * Asks {@code owner} for {@code query}'s answer; completes with the owner's reply (its ID and
   * question checked), or exceptionally when none came within {@code timeout}.
   */
  public CompletableFuture<byte[]> ask(Owner owner, DnsQuery query, Duration timeout) {
    return ask(owner, query, timeout, query::peerQuery, null);
  }

  /**
   * As {@link #ask(Owner, DnsQuery, Duration)}, sent from {@code via}, the listening socket the
   * query came in on, when this node's settings allow it ({@code lookups_from_listeners}) and that
   * socket reaches the owner: the reply then comes back to the listeners, which read it with the
   * clients' queries ({@link #listenerReply}).
   */
  public CompletableFuture<byte[]> ask(Owner owner, DnsQuery query, Duration timeout, DatagramSender via) {
    return ask(owner, query, timeout, query::peerQuery, fromListeners ? via : null);
  }

  /**
   * Asks {@code previous} (see {@link #previousOwnerOf}) for the answer to {@code query} it holds
   * in its cache, without recursion: it answers from its cache or refuses. Completes as {@link #ask}.
   */
  public CompletableFuture<byte[]> askCache(Owner previous, DnsQuery query, Duration timeout) {
    return ask(previous, query, timeout, query::peerCacheQuery, null);
  }

  /**
   * Whether {@code reply}, a response that reached a listening UDP socket from {@code from}, is an
   * owner's reply to a lookup sent from the listeners; if so it is taken (true).
   */
  public boolean listenerReply(byte[] reply, InetSocketAddress from) {
    return sockets != null && sockets.listenerReply(reply, from);
  }

  private CompletableFuture<byte[]> ask(
      Owner owner, DnsQuery query, Duration timeout, IntFunction<byte[]> packet, DatagramSender via) {
    long deadline = System.nanoTime() + timeout.toNanos();
    CompletableFuture<byte[]> udp = via == null ? null : sockets.fromListener(via, owner.udp(), query, packet, deadline);
    if (udp == null) {
      int id = sockets.newQueryId();
      udp = sockets.udp(owner.udp(), packet.apply(id), id, query.key(), deadline);
    }
    return udp.thenCompose(reply -> {
      if ((reply[2] & 0x02) == 0) {
        return CompletableFuture.completedFuture(reply);
      }
      int tcpId = sockets.newQueryId();
      return sockets.tcp(owner.tcp(), packet.apply(tcpId), tcpId, query.key(), deadline);
    });
  }

  /**
   * Replaces the ring.
   *
   * @param members the address of every member that takes part, this node's ({@code self}) too
   * @param owners where those members answer DNS, where known
   */
  void update(List<String> members, Map<String, Owner> owners, String self) {
    if (members.isEmpty()) {
      // A membership that has just started lists no endpoint until its own registers; a hash
      // over no node cannot place a key, so the node answers every key itself meanwhile.
      ring.set(Ring.EMPTY);
      transfersIn.clear();
      return;
    }
    if (ring.get().hash == null) {
      // Entering a ring: at start, or back after the node was out of the cluster.
      enteredRingAt = System.nanoTime();
      enteredRing = true;
    }
    ConsistentHash<String> hash = ConsistentHash.create(List.copyOf(members), VIRTUAL_NODES);
    List<String> others = members.stream().filter(m -> !m.equals(self)).toList();
    ConsistentHash<String> withoutSelf = others.isEmpty() ? null : ConsistentHash.create(others, VIRTUAL_NODES);
    List<String> known = members.stream().filter(m -> m.equals(self) || owners.containsKey(m)).toList();
    ConsistentHash<String> askable = known.size() == members.size() ? hash
        : ConsistentHash.create(known.isEmpty() ? List.of(self) : known, VIRTUAL_NODES);
    ring.set(new Ring(hash, askable, withoutSelf, others, Map.copyOf(owners), self, known.size()));
  }

  /** Whether the ring lists {@code member} (a member's cluster address), its DNS address known or not. */
  boolean lists(String member) {
    Ring r = ring.get();
    return r.hash != null && (member.equals(r.self) || r.others.contains(member));
  }

  /**
   * Forgets every owner: this node answers every key itself (it is out of the cluster). When it
   * is back, the members send it their answers again.
   */
  void clear() {
    ring.set(Ring.EMPTY);
    transfersIn.clear();
  }

  /**
   * Nodes in the ring whose keys are looked up where they belong: this one (once registered) and
   * those whose DNS address is known.
   */
  public int size() {
    return ring.get().size;
  }
}
