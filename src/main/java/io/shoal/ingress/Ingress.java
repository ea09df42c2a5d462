package io.shoal.ingress;

import akka.actor.typed.ActorRef;
import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.metrics.ServerMetrics;
import io.shoal.policy.ResponsePolicy;
import io.shoal.profile.Profile;
import io.shoal.config.ServeStaleSettings;
import io.shoal.ratelimit.MissBudget;
import io.shoal.upstream.DatagramSender;
import io.shoal.upstream.Upstream;
import io.shoal.wire.BadQuery;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The front door shared by every transport (UDP sockets, TCP, TLS and HTTPS streams), run on the
 * thread that read the query: turns away clients that access control does not serve, validates
 * the query, answers bad ones (FORMERR, NOTIMP, REFUSED) or drops them, answers from local data or
 * the response policy (blocklists) when either has the name, answers a cache hit right there (in a
 * cluster, a hit in the near cache of copies too) and has a hit near its expiry prefetched when
 * this node owns the name,
 * refuses a miss that did not ask for recursion (RD=0), denies a miss that a kept DNSSEC denial
 * covers (RFC 8198), answers SERVFAIL to a miss over its
 * client's or zone's miss budget, asks a key's owner node itself in a cluster ({@link
 * DirectOwnerLookups}), and hands any other miss to the worker that owns its cache key.
 * Each worker holds at most {@code maxPending} misses; beyond that a query is dropped and counted,
 * so overload costs answers, never unbounded memory. What a reload changes comes in one {@link
 * QueryPlan}, read once per query.
 */
public final class Ingress {
  private static final ExtendedError OVER_CLIENT_BUDGET = new ExtendedError(0, "over this client's miss budget");
  private static final ExtendedError OVER_ZONE_BUDGET = new ExtendedError(0, "over this zone's miss budget");

  private final LongSupplier clock;
  private final List<ActorRef<IngressWorker.Command>> workers;
  private final AtomicInteger[] pending;
  private final int maxPending;
  private final ServerMetrics metrics;
  private final Prefetch prefetch;
  private final OwnerDirectory owners;
  private final DirectOwnerLookups direct;
  /** Keys this node asks no other node for: it owns them, or it is not in a cluster (see Prefetch). */
  private final Predicate<CacheKey> ownedHere;
  /** What a reload replaces; read once per query. */
  private volatile QueryPlan plan;

  /**
   * @param plan the profiles, access control, local data, policy and logs queries start with
   * @param clock epoch milliseconds (injected so tests can move time)
   * @param prefetch the claims of prefetches under way, kept across plans (a plan turns it on or off)
   * @param ownerTimeout how long an owner node's answer is waited for
   */
  public Ingress(
      QueryPlan plan, LongSupplier clock, List<ActorRef<IngressWorker.Command>> workers, AtomicInteger[] pending,
      int maxPending, ServerMetrics metrics, Prefetch prefetch, OwnerDirectory owners, Duration ownerTimeout) {
    this.plan = plan;
    this.owners = owners;
    this.direct = new DirectOwnerLookups(owners, ownerTimeout, metrics, clock);
    this.ownedHere = key -> owners.ownerOf(key) == null;
    this.prefetch = prefetch;
    this.clock = clock;
    this.workers = List.copyOf(workers);
    this.pending = pending;
    this.maxPending = maxPending;
    this.metrics = metrics;
    prefetch.enable(plan.prefetch());
  }

  /** The node is stopping: hits no longer prefetch (see {@link Prefetch#stop}). */
  public void stopPrefetching() {
    prefetch.stop();
  }

  /**
   * Makes {@code next} the plan of every query read from now on, and of the workers' next
   * messages; queries already in a worker finish with the profile they started with (its cache is
   * the same, only its upstreams may have changed).
   */
  public void replan(QueryPlan next) {
    prefetch.enable(next.prefetch());
    plan = next;
    for (ActorRef<IngressWorker.Command> w : workers) {
      w.tell(new IngressWorker.Replan(next.profiles(), next.serveStale()));
    }
  }

  /** The plan queries are answered by now. */
  public QueryPlan plan() {
    return plan;
  }

  /**
   * The one way into the query path, for every transport: takes a query as read (a datagram, or
   * a message framed from a stream), on the thread that read it. Its reply, if any, goes to
   * {@code reply}, on this thread for a hit or from a worker for a miss; a query that gets no
   * reply (dropped: denied, malformed beyond an answer, over a worker's budget on UDP) is told to
   * {@code reply} as {@link ReplyPath#drop()}.
   */
  public void offer(byte[] packet, InetSocketAddress client, Protocol protocol, ReplyPath reply) {
    if (packet.length >= 12 && (packet[2] & 0x80) != 0 && protocol == Protocol.UDP
        && owners.listenerReply(packet, client)) {
      return; // an owner's reply to a lookup this node sent from a listening socket
    }
    ReplyPath arrivedOn = reply;
    QueryPlan p = plan;
    if (p.queryLog() != null) {
      reply = p.queryLog().watch(packet, client, protocol, reply);
    }
    Optional<byte[]> turnedAway = p.access().turnAway(packet, client.getAddress());
    if (turnedAway != null) {
      if (turnedAway.isPresent()) {
        reply.send(turnedAway.get(), client);
      } else {
        reply.drop();
      }
      return;
    }
    DnsQuery query;
    try {
      query = DnsQuery.parse(packet, p.replies());
    } catch (BadQuery bad) {
      if (bad.dropped()) {
        metrics.dropped(bad.reason());
        reply.drop();
      } else {
        reply.send(bad.reply(), client);
      }
      return;
    }
    if (p.loops().cameBack(query)) {
      reply.send(query.servfail(), client);
      return;
    }
    byte[] own = p.local() == null ? null : p.local().answer(query, protocol.sizeLimit(query));
    if (own == null && p.policy() != null) {
      own = p.policy().answer(query, protocol.sizeLimit(query));
    }
    if (own != null) {
      if (own == ResponsePolicy.DROP) {
        reply.drop();
      } else {
        reply.send(own, client);
      }
      return;
    }
    Profile profile = p.profiles().match(query.key());
    if (answerFromCache(profile, query, protocol, client, reply)) {
      return;
    }
    if (!query.recursionDesired()) {
      // A joining node asking what this one still holds (peerCacheQuery) is told it holds none;
      // that is warm join at work, not a client refused.
      reply.send(query.fromPeer() ? query.refused(ExtendedError.NOT_AUTHORITATIVE) : notRecursing(query), client);
      return;
    }
    byte[] denied = answerDenied(profile, query, protocol);
    if (denied != null) {
      reply.send(denied, client);
      return;
    }
    // A peer's owner lookup carries many clients' misses: the asking node applied their budgets.
    String over = query.fromPeer() ? null
        : p.missBudget().overBudget(query.key(), client.getAddress(), profile.cache().evictedLately(query.key()));
    if (over != null) {
      metrics.overMissBudget(over);
      byte[] stale = staleOverBudget(p.serveStale(), profile, query, protocol);
      reply.send(stale != null ? stale
          : query.servfail(over == MissBudget.CLIENT ? OVER_CLIENT_BUDGET : OVER_ZONE_BUDGET), client);
      return;
    }
    int w = partition(query);
    if (!admit(w)) {
      // A datagram over budget is dropped (the client retries); a stream's query holds a slot
      // of its connection's pipeline, so it is answered at once.
      if (protocol.stream()) {
        reply.send(query.servfail(), client);
      } else {
        reply.drop();
      }
      return;
    }
    reply.owed(query, p.streamGuard().toMillis());
    IngressWorker.Resolve resolve = new IngressWorker.Resolve(query, client, protocol, reply);
    // In a cluster, a key another node owns is asked of it from here: see DirectOwnerLookups.
    OwnerDirectory.Owner owner = direct.ownerOf(resolve);
    if (owner != null) {
      direct.ask(owner, profile, resolve, pending[w], workers.get(w),
          arrivedOn instanceof DatagramSender socket ? socket : null);
      return;
    }
    workers.get(w).tell(resolve);
  }

  /**
   * Whether a stream connection from {@code client} may be kept: false for a client that access
   * control denies (counted as dropped), whose connection is closed before anything is read, so it
   * never holds a slot. A refused client stays, to be answered REFUSED per query.
   */
  public boolean admitsConnection(InetAddress client) {
    return !plan.access().deniesConnection(client);
  }

  /**
   * {@link #offer} for a stream transport (TCP, TLS, HTTPS): completes with the reply, or empty
   * when the query is dropped.
   */
  public CompletionStage<Optional<byte[]>> ask(byte[] packet, InetSocketAddress client, Protocol protocol) {
    StreamReply reply = new StreamReply();
    offer(packet, client, protocol, reply);
    return reply.future();
  }

  /**
   * The stale answer (RFC 8767) a miss over its budget gets instead of a SERVFAIL, when serve-stale
   * is on and the cache still holds the name expired less than max_stale ago; else null. It is
   * what the client would get if the upstreams failed, and it costs them nothing.
   */
  private byte[] staleOverBudget(ServeStaleSettings serveStale, Profile profile, DnsQuery query, Protocol protocol) {
    if (!serveStale.enabled() || !owners.cachesServable()) {
      return null;
    }
    CachedAnswer old = profile.cache().get(query.key(), clock.getAsLong() - serveStale.maxStale().toMillis());
    return old != null && old.servableStale() ? old.renderStale(query, protocol.sizeLimit(query)) : null;
  }

  /**
   * Sends the reply from the cache when it holds the answer (counted as a hit, else as a miss);
   * false when it does not.
   */
  private boolean answerFromCache(
      Profile profile, DnsQuery query, Protocol protocol, InetSocketAddress client, ReplyPath reply) {
    long now = clock.getAsLong();
    if (!owners.cachesServable()) {
      // A cluster node back from being away, that has not applied the flushes made meanwhile:
      // its caches may hold flushed answers, so every query is a miss until it has.
      if (!query.fromPeer() || query.recursionDesired()) {
        profile.cacheMetrics().miss();
      }
      return false;
    }
    // In a cluster, most names are other nodes' (two in three with three nodes): this node's copy
    // of such an answer is looked up first, so a hit on it costs one look-up, as a hit on an owned
    // name does, rather than a failed look-up in the answer cache and a ring look-up before it.
    // The near cache only holds copies of answers other nodes owned when they were fetched. An
    // owner lookup (fromPeer) is this node's to resolve, never answered from a copy.
    if (!query.fromPeer()) {
      CachedAnswer copy = owners.nearHit(query.key(), now);
      if (copy != null) {
        // as a hit on an owned name: rendered into the socket's own buffer on the reading thread
        reply.sendHit(copy, query, now, protocol.sizeLimit(query), client);
        return true;
      }
    }
    CachedAnswer hit = profile.cache().get(query.key(), now);
    if (hit == null) {
      if (!query.fromPeer()) {
        profile.cacheMetrics().miss();
        owners.nearMissed(query.key());
      } else if (query.recursionDesired()) {
        // A joining node asking what this one still holds (RD=0) is not a miss anyone waits on.
        profile.cacheMetrics().miss();
      }
      return false;
    }
    profile.cacheMetrics().hit();
    // Not for RD=0: probing the cache must not cost the upstreams anything.
    if (query.recursionDesired() && prefetch.claim(query.key(), hit, now, ownedHere)) {
      workers.get(partition(query)).tell(new IngressWorker.Refresh(query));
    }
    reply.sendHit(hit, query, now, protocol.sizeLimit(query), client);
    return true;
  }

  /**
   * The reply to a miss that a denial its upstream proved before covers (RFC 8198), else null.
   * On the thread that read the miss, before its miss budget, its worker and any owner node: a
   * flood of random names under a signed zone is answered where it arrived, costs no upstream
   * query and no budget, and never queues behind real misses. Not cached: the proof answers the
   * next such name as fast, and a flood's names would only push real answers out.
   */
  private byte[] answerDenied(Profile profile, DnsQuery query, Protocol protocol) {
    long now = clock.getAsLong();
    Upstream.Denial denial = profile.upstream().denial(query, now);
    if (denial == null) {
      return null;
    }
    try {
      CachedAnswer answer = CachedAnswer.of(ScannedAnswer.fromUpstream(denial.wire()), now, denial.expiresAtMillis());
      return answer.render(query, now, protocol.sizeLimit(query));
    } catch (WireException e) {
      return null; // not a denial we can send: the miss goes its usual way
    }
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
