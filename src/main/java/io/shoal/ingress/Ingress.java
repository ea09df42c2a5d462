package io.shoal.ingress;

import akka.actor.typed.ActorRef;
import io.shoal.access.AccessControl;
import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.loop.LoopDetector;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.wire.BadQuery;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.ReplyPolicy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The front door shared by the UDP sockets and TCP connections, run on the thread that read the
 * query: turns away clients that access control does not serve, validates the query, answers bad
 * ones (FORMERR, NOTIMP, REFUSED) or drops them, answers a cache hit right there (and has a hit
 * near its expiry prefetched; in a cluster, a hit in the near cache of copies too), refuses a miss that did not ask for recursion (RD=0), and hands
 * any other miss to the worker that owns its cache key. Each worker holds at
 * most {@code maxPending} misses; beyond that a query is dropped and counted, so overload costs
 * answers, never unbounded memory.
 */
public final class Ingress {
  private final ProfileTable profiles;
  private final LongSupplier clock;
  private final List<ActorRef<IngressWorker.Command>> workers;
  private final AtomicInteger[] pending;
  private final int maxPending;
  private final ServerMetrics metrics;
  private final long tcpGuardMillis;
  private final AccessControl access;
  private final ReplyPolicy policy;
  private final Prefetch prefetch;
  private final LoopDetector loops;
  private final OwnerDirectory owners;

  /**
   * @param clock epoch milliseconds (injected so tests can move time)
   * @param tcpGuard how long a TCP query may wait for its worker before it gets SERVFAIL; longer
   *     than any upstream deadline, so it only fires if a worker lost the query (restarted)
   */
  public Ingress(
      ProfileTable profiles, LongSupplier clock, List<ActorRef<IngressWorker.Command>> workers,
      AtomicInteger[] pending, int maxPending, ServerMetrics metrics, Duration tcpGuard, AccessControl access,
      ReplyPolicy policy, Prefetch prefetch, LoopDetector loops, OwnerDirectory owners) {
    this.owners = owners;
    this.prefetch = prefetch;
    this.loops = loops;
    this.access = access;
    this.policy = policy;
    this.profiles = profiles;
    this.clock = clock;
    this.workers = List.copyOf(workers);
    this.pending = pending;
    this.maxPending = maxPending;
    this.metrics = metrics;
    this.tcpGuardMillis = tcpGuard.toMillis();
  }

  /** Takes a datagram read from a UDP socket; any reply goes out through {@code socket}. */
  public void offer(byte[] packet, InetSocketAddress client, ReplyPath socket) {
    Optional<byte[]> turnedAway = access.turnAway(packet, client.getAddress());
    if (turnedAway != null) {
      turnedAway.ifPresent(refused -> socket.send(refused, client));
      return;
    }
    DnsQuery query;
    try {
      query = DnsQuery.parse(packet, policy);
    } catch (BadQuery bad) {
      if (bad.dropped()) {
        metrics.dropped(bad.reason());
      } else {
        socket.send(bad.reply(), client);
      }
      return;
    }
    if (loops.cameBack(query)) {
      socket.send(query.servfail(), client);
      return;
    }
    byte[] hit = answerFromCache(query, Protocol.UDP);
    if (hit != null) {
      socket.send(hit, client);
      return;
    }
    if (!query.recursionDesired()) {
      socket.send(notRecursing(query), client);
      return;
    }
    int w = partition(query);
    if (admit(w)) {
      workers.get(w).tell(new IngressWorker.Resolve(query, client, Protocol.UDP, socket));
    }
  }

  /** Takes a query from a TCP stream; completes with the reply, or empty when it is dropped. */
  public CompletionStage<Optional<byte[]>> ask(byte[] packet, InetSocketAddress client) {
    Optional<byte[]> turnedAway = access.turnAway(packet, client.getAddress());
    if (turnedAway != null) {
      return CompletableFuture.completedFuture(turnedAway);
    }
    DnsQuery query;
    try {
      query = DnsQuery.parse(packet, policy);
    } catch (BadQuery bad) {
      if (bad.dropped()) {
        metrics.dropped(bad.reason());
        return CompletableFuture.completedFuture(Optional.empty());
      }
      return CompletableFuture.completedFuture(Optional.of(bad.reply()));
    }
    if (loops.cameBack(query)) {
      return CompletableFuture.completedFuture(Optional.of(query.servfail()));
    }
    byte[] hit = answerFromCache(query, Protocol.TCP);
    if (hit != null) {
      return CompletableFuture.completedFuture(Optional.of(hit));
    }
    if (!query.recursionDesired()) {
      return CompletableFuture.completedFuture(Optional.of(notRecursing(query)));
    }
    int w = partition(query);
    if (!admit(w)) {
      return CompletableFuture.completedFuture(Optional.of(query.servfail()));
    }
    CompletableFuture<Optional<byte[]>> reply = new CompletableFuture<>();
    workers.get(w).tell(new IngressWorker.Resolve(query, client, Protocol.TCP,
        (wire, to) -> reply.complete(Optional.of(wire))));
    return reply.completeOnTimeout(Optional.of(query.servfail()), tcpGuardMillis, TimeUnit.MILLISECONDS);
  }

  /** The rendered reply when the cache holds the answer, counted as a hit or a miss; else null. */
  private byte[] answerFromCache(DnsQuery query, Protocol protocol) {
    Profile profile = profiles.match(query.key());
    long now = clock.getAsLong();
    CachedAnswer hit = profile.cache().get(query.key(), now);
    if (hit == null) {
      profile.cacheMetrics().miss();
      // In a cluster: this node's copy of an answer another node owns, if it keeps one. An owner
      // lookup (fromPeer) is this node's to resolve, never answered from a copy.
      CachedAnswer copy = query.fromPeer() || owners.ownerOf(query.key()) == null
          ? null : owners.nearCopy(query.key(), now);
      return copy == null ? null : copy.render(query, now, protocol.sizeLimit(query));
    }
    profile.cacheMetrics().hit();
    // Not for RD=0: probing the cache must not cost the upstreams anything.
    if (query.recursionDesired() && prefetch.claim(query.key(), hit, now)) {
      workers.get(partition(query)).tell(new IngressWorker.Refresh(query));
    }
    return hit.render(query, now, protocol.sizeLimit(query));
  }

  /**
   * The reply to a miss with RD=0: such a client asks what is cached, and shoal has nothing of
   * its own to answer with, so REFUSED (with an extended error saying why). Nothing goes
   * upstream: probing the cache (snooping) costs the upstreams no load.
   */
  private byte[] notRecursing(DnsQuery query) {
    metrics.refused(ServerMetrics.NO_RECURSION);
    return query.refused(ExtendedError.NOT_AUTHORITATIVE);
  }

  private boolean admit(int worker) {
    if (pending[worker].incrementAndGet() > maxPending) {
      pending[worker].decrementAndGet();
      metrics.dropped(ServerMetrics.OVERLOAD);
      return false;
    }
    return true;
  }

  private int partition(DnsQuery query) {
    // Spread the key's hash: identical questions must meet in one worker to coalesce.
    int h = query.key().hashCode() * 0x9E3779B9;
    return Math.floorMod(h ^ (h >>> 16), workers.size());
  }

  /** Misses accepted but not yet answered, over all workers. */
  public int pending() {
    int sum = 0;
    for (AtomicInteger p : pending) {
      sum += p.get();
    }
    return sum;
  }
}
