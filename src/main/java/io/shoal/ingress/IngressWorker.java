package io.shoal.ingress;

import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.ServeStaleSettings;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.upstream.Upstream;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.Rcode;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;

/**
 * Answers the misses of one partition of the key space (hits never come here: the socket that
 * read them answers them). A miss goes upstream once per key however many clients ask while it is
 * in flight; every waiter gets the answer on the socket or connection it came in on, and the
 * answer fills the cache. A query that finds its key filled meanwhile is answered from the cache.
 *
 * <p>When the upstreams fail, a recently expired answer is served stale (RFC 8767) if the cache
 * still holds one; a client whose miss waits longer than the client timeout gets it too while the
 * fetch goes on. An upstream REFUSED becomes SERVFAIL, remembered like one. Hits near expiry
 * arrive as {@link Refresh}: fetched in the background, no client waiting.
 */
public final class IngressWorker extends AbstractBehavior<IngressWorker.Command> {

  /** Messages to a worker. */
  public interface Command {}

  /**
   * Answer {@code query}, which missed the cache, from {@code client}; the reply goes to
   * {@code replyTo}. The client may be another cluster node asking this one, the key's owner
   * ({@link DnsQuery#fromPeer()}): such a query is resolved here, from the cache or upstream, never
   * passed on to yet another node, and never answered stale (the asking node would keep the stale
   * answer as a fresh copy; it serves its own stale answer if it has one).
   */
  public record Resolve(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath replyTo)
      implements Command {}

  /** A hit found its answer near expiry: fetch it again, nobody waits (see {@link Prefetch}). */
  public record Refresh(DnsQuery query) implements Command {}

  /** The client timeout of serve-stale ran out for {@code flight}. */
  private record StaleDeadline(CacheKey key, Flight flight) implements Command {}

  private record UpstreamDone(CacheKey key, Profile profile, Upstream.Outcome outcome) implements Command {}

  /** The owner node's reply to a lookup of {@code key} asked at {@code askedNanos}; null when none came in time. */
  private record OwnerDone(CacheKey key, Profile profile, byte[] reply, long askedNanos) implements Command {}

  /** Reasons of shoal_stale_answers_total. */
  static final String UPSTREAM_FAILED = "upstream_failed";
  static final String CLIENT_TIMEOUT = "client_timeout";

  /** A write-through fill ended: {@code failure} is null when the cache stored the answer. */
  private record FillDone(CacheKey key, Profile profile, CachedAnswer answer, Throwable failure) implements Command {}

  /**
   * The longest a write-through reply waits for its fill. A commit takes milliseconds; a shard
   * that is down and restarting with back-off takes seconds, and clients must not wait for that.
   */
  static final Duration FILL_WAIT = Duration.ofSeconds(1);

  /** One question on its way upstream (or to its owner node), and who waits for it. */
  private static final class Flight {
    final List<Resolve> waiters = new ArrayList<>(2);
    /** Started by a prefetch: its claim is released when the flight ends. */
    boolean prefetch;
    /** The expired answer to serve if the upstreams fail or are slow; null if there is none. */
    CachedAnswer stale;
    /** The client timeout passed: clients who ask now get the stale answer at once. */
    boolean staleServed;
    /** Why the answer is a SERVFAIL, when a stage before the cache made it one (DNSSEC); else null. */
    ExtendedError servfailWhy;
  }

  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(IngressWorker.class), 10);
  private static final FailureLog ownerRefusals = new FailureLog(LoggerFactory.getLogger(IngressWorker.class), 60);

  private final ProfileTable profiles;
  private final FillMode fillMode;
  private final LongSupplier clock;
  private final AtomicInteger pending;
  private final ServerMetrics metrics;
  private final OwnerDirectory owners;
  private final Duration ownerTimeout;
  private final StaleAnswers stale;
  private final Prefetch prefetch;
  private final Map<CacheKey, Flight> inFlight = new HashMap<>();

  /**
   * @param clock epoch milliseconds (injected so tests can move time)
   * @param pending this worker's count of queries not yet answered, shared with {@link Ingress}
   */
  public static Behavior<Command> create(
      ProfileTable profiles, FillMode fillMode, LongSupplier clock, AtomicInteger pending, ServerMetrics metrics) {
    return create(profiles, fillMode, clock, pending, metrics, new OwnerDirectory(), Duration.ZERO,
        ServeStaleSettings.OFF, Prefetch.OFF);
  }

  /**
   * A worker as a node runs it: in cluster mode misses for keys another node owns are asked of
   * that node first; {@code serveStale} and {@code prefetch} as configured.
   */
  public static Behavior<Command> create(
      ProfileTable profiles, FillMode fillMode, LongSupplier clock, AtomicInteger pending, ServerMetrics metrics,
      OwnerDirectory owners, Duration ownerTimeout, ServeStaleSettings serveStale, Prefetch prefetch) {
    return Behaviors.setup(ctx -> new IngressWorker(
        ctx, profiles, fillMode, clock, pending, metrics, owners, ownerTimeout, serveStale, prefetch));
  }

  private IngressWorker(
      ActorContext<Command> context, ProfileTable profiles, FillMode fillMode, LongSupplier clock,
      AtomicInteger pending, ServerMetrics metrics, OwnerDirectory owners, Duration ownerTimeout,
      ServeStaleSettings serveStale, Prefetch prefetch) {
    super(context);
    this.stale = new StaleAnswers(serveStale);
    this.prefetch = prefetch;
    this.profiles = profiles;
    this.fillMode = fillMode;
    this.clock = clock;
    this.pending = pending;
    this.metrics = metrics;
    this.owners = owners;
    this.ownerTimeout = ownerTimeout;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Resolve.class, this::onResolve)
        .onMessage(Refresh.class, this::onRefresh)
        .onMessage(StaleDeadline.class, this::onStaleDeadline)
        .onMessage(UpstreamDone.class, this::onUpstreamDone)
        .onMessage(OwnerDone.class, this::onOwnerDone)
        .onMessage(FillDone.class, this::onFillDone)
        .build();
  }

  private Behavior<Command> onResolve(Resolve r) {
    try {
      resolve(r);
    } catch (RuntimeException e) {
      // One bad query must not take the worker (and its in-flight waiters) down.
      failures.warn("query " + r.query().key() + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      reply(r, r.query().servfail(ExtendedError.UPSTREAM_FAILED));
    }
    return this;
  }

  private void resolve(Resolve r) {
    CacheKey key = r.query().key();
    Profile profile = profiles.match(key);
    long now = clock.getAsLong();
    // Counted as a miss where it was read; it may have been filled since (a waiter of the same
    // key queued behind the answer), and then the cache answers it without another fetch. The
    // same read finds the expired answer serve-stale may need.
    CachedAnswer found = stale.read(key, profile, now);
    if (found != null && !found.expiredAt(now)) {
      reply(r, found.render(r.query(), now, r.protocol().sizeLimit(r.query())));
      return;
    }
    // (The near cache of copies was looked at where the query was read.)
    OwnerDirectory.Owner owner = r.query().fromPeer() ? null : owners.ownerOf(key);
    Flight flight = inFlight.get(key);
    if (flight != null) {
      if (flight.staleServed && !r.query().fromPeer()) {
        replyStale(r, flight.stale, profile, CLIENT_TIMEOUT);
      } else {
        flight.waiters.add(r);
      }
      return;
    }
    CachedAnswer expired = stale.servable(found);
    if (expired != null && stale.recheckPending(key, now)) {
      if (r.query().fromPeer()) {
        reply(r, r.query().servfail(ExtendedError.UPSTREAM_FAILED));
      } else {
        replyStale(r, expired, profile, UPSTREAM_FAILED);
      }
      return;
    }
    flight = start(key, r);
    if (expired != null) {
      flight.stale = expired;
      getContext().scheduleOnce(stale.clientTimeout(), getContext().getSelf(), new StaleDeadline(key, flight));
    }
    if (owner != null) {
      long asked = System.nanoTime();
      getContext().pipeToSelf(owners.ask(owner, r.query(), ownerTimeout),
          (reply, failure) -> new OwnerDone(key, profile, reply, asked));
      return;
    }
    askUpstream(key, profile, r.query());
  }

  /** A new flight for {@code key} with its first waiter (null for a prefetch). */
  private Flight start(CacheKey key, Resolve first) {
    Flight flight = new Flight();
    if (first != null) {
      flight.waiters.add(first);
    }
    inFlight.put(key, flight);
    return flight;
  }

  /**
   * The flight of {@code key} ended: no longer in flight. A prefetch that {@code answered}
   * releases its claim; one that failed keeps it until it lapses, so hits on an entry whose
   * upstreams are down do not start a prefetch each.
   */
  private Flight end(CacheKey key, boolean answered) {
    Flight flight = inFlight.remove(key);
    if (flight != null && flight.prefetch && answered) {
      prefetch.release(key);
    }
    return flight;
  }

  private Behavior<Command> onRefresh(Refresh refresh) {
    CacheKey key = refresh.query().key();
    if (inFlight.containsKey(key)) {
      // Already being fetched: that fetch refreshes the cache.
      prefetch.release(key);
      return this;
    }
    try {
      Profile profile = profiles.match(key);
      Flight flight = start(key, null);
      flight.prefetch = true;
      profile.cacheMetrics().prefetch();
      askUpstream(key, profile, refresh.query());
    } catch (RuntimeException e) {
      end(key, false);
      failures.warn("prefetch of " + key + " failed", e);
    }
    return this;
  }

  private Behavior<Command> onStaleDeadline(StaleDeadline deadline) {
    Flight flight = inFlight.get(deadline.key());
    if (flight != deadline.flight()) {
      return this; // that flight ended in time
    }
    flight.staleServed = true;
    Profile profile = profiles.match(deadline.key());
    flight.waiters.removeIf(r -> {
      if (r.query().fromPeer()) {
        return false; // it waits for the fetch: see Resolve
      }
      replyStale(r, flight.stale, profile, CLIENT_TIMEOUT);
      return true;
    });
    return this;
  }

  private void replyStale(Resolve r, CachedAnswer stale, Profile profile, String reason) {
    profile.cacheMetrics().staleAnswer(reason);
    reply(r, stale.renderStale(r.query(), r.protocol().sizeLimit(r.query())));
  }

  /**
   * The owner answered (or did not): its answer goes to every waiter and into the near cache,
   * never into this node's own caches. No reply in time, or one this node cannot use, and the
   * node asks upstream itself; an owner's SERVFAIL is this node's failure too (the owner asked
   * the same upstreams), served stale here if this node has a stale answer.
   */
  private Behavior<Command> onOwnerDone(OwnerDone done) {
    Flight flight = inFlight.get(done.key());
    if (flight == null) {
      return this;
    }
    ScannedAnswer scan = null;
    if (done.reply() != null) {
      try {
        scan = ScannedAnswer.fromUpstream(done.reply());
      } catch (WireException e) {
        failures.warn("malformed answer from the owner node of " + done.key(), e);
      }
    }
    if (scan != null && scan.rcode() == Rcode.REFUSED) {
      ownerRefusals.warn("an owner node refused a lookup of " + done.key() + ": its access_control must allow"
          + " the other nodes' addresses (shoal_cluster_remote_lookups_total{outcome=\"refused\"})");
      metrics.remoteLookup("refused");
      scan = null;
    } else if (scan == null) {
      metrics.remoteLookup("timeout");
    }
    if (scan == null) {
      if (flight.waiters.isEmpty()) {
        end(done.key(), false); // every waiter had the stale answer
      } else {
        askUpstream(done.key(), done.profile(), flight.waiters.get(0).query());
      }
      return this;
    }
    if (scan.rcode() == Rcode.SERVFAIL) {
      metrics.remoteLookup("failed");
      failed(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, false);
      return this;
    }
    metrics.remoteLookup("answered");
    metrics.remoteLookupTime(System.nanoTime() - done.askedNanos());
    long now = clock.getAsLong();
    CachedAnswer copy = kept(done.profile(), scan, now);
    if (copy == null) {
      answerAll(done.key(), passedOn(scan, now));
      return this;
    }
    // A copy in the near cache, not in the profile's cache: that one holds what this node owns,
    // and the cluster's capacity is the sum of the nodes' caches only if copies stay out.
    owners.keepCopy(done.key(), copy);
    answerAll(done.key(), copy);
    return this;
  }

  private void askUpstream(CacheKey key, Profile profile, DnsQuery query) {
    getContext().pipeToSelf(profile.upstream().forward(query), (outcome, failure) -> new UpstreamDone(key, profile,
        outcome != null ? outcome : new Upstream.Failed("no upstream answer: " + failure)));
  }

  private Behavior<Command> onUpstreamDone(UpstreamDone done) {
    if (!inFlight.containsKey(done.key())) {
      return this;
    }
    try {
      if (!(done.outcome() instanceof Upstream.Answered answered)) {
        failed(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, false);
        return this;
      }
      ScannedAnswer scan;
      try {
        scan = ScannedAnswer.fromUpstream(answered.wire());
      } catch (WireException e) {
        failures.warn("malformed answer from " + answered.server() + " for " + done.key(), e);
        metrics.dropped(ServerMetrics.BAD_UPSTREAM_ANSWER);
        failed(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, true);
        return this;
      }
      if (scan.rcode() == Rcode.REFUSED) {
        // The upstream will not resolve for us: to our client that is a failure, not a policy
        // of ours (RFC 8914's No Reachable Authority), remembered like a SERVFAIL.
        failed(done.key(), done.profile(), ExtendedError.UPSTREAM_REFUSED, true);
        return this;
      }
      if (scan.rcode() == Rcode.SERVFAIL && serveStaleFor(done.key(), done.profile(), true)) {
        return this;
      }
      Flight flight = inFlight.get(done.key());
      flight.servfailWhy = answered.why();
      if (scan.rcode() == Rcode.SERVFAIL && flight.prefetch && flight.waiters.isEmpty()) {
        // A prefetch that failed: the answer in the cache is still good until it expires.
        end(done.key(), false);
        return this;
      }
      long now = clock.getAsLong();
      CachedAnswer answer = kept(done.profile(), scan, now);
      if (answer == null) {
        answerAll(done.key(), passedOn(scan, now));
        return this;
      }
      if (fillMode == FillMode.WRITE_THROUGH) {
        // A copy, so the bound times out this wait only, never the cache's own fill.
        CompletableFuture<Boolean> stored = done.profile().cache().fill(done.key(), answer).toCompletableFuture()
            .copy().orTimeout(FILL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        getContext().pipeToSelf(stored, (ok, failure) -> new FillDone(done.key(), done.profile(), answer,
            failure != null || Boolean.TRUE.equals(ok) ? failure : new IllegalStateException("not stored")));
      } else {
        done.profile().cache().fillBehind(done.key(), answer);
        answerAll(done.key(), answer);
      }
    } catch (RuntimeException e) {
      failures.warn("answer for " + done.key() + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      servfailAll(done.key(), ExtendedError.UPSTREAM_FAILED);
    }
    return this;
  }

  /** {@code scan} as {@code profile}'s TTL rules keep it from {@code now}; null when they keep it not at all. */
  private static CachedAnswer kept(Profile profile, ScannedAnswer scan, long now) {
    long seconds = profile.ttlRules().cacheSeconds(scan);
    return seconds <= 0 ? null : profile.ttlRules().cachedAnswer(scan, now, seconds);
  }

  /** An answer nobody keeps, passed on with the upstream's own TTLs. */
  private static CachedAnswer passedOn(ScannedAnswer scan, long now) {
    return CachedAnswer.of(scan, now, now + 0xFFFF_FFFFL * 1000);
  }

  /**
   * No usable answer came for {@code key}: the stale answer if serve-stale has one; else SERVFAIL
   * saying {@code why}, and an upstream REFUSED is remembered as a SERVFAIL for servfail_ttl.
   *
   * @param nameFailed an upstream answered, and it is this name that fails there (SERVFAIL,
   *     REFUSED, an answer that cannot be made valid); false when no upstream answered
   */
  private void failed(CacheKey key, Profile profile, ExtendedError why, boolean nameFailed) {
    if (serveStaleFor(key, profile, nameFailed)) {
      return;
    }
    if (why == ExtendedError.UPSTREAM_REFUSED) {
      remember(key, profile, inFlight.get(key));
    }
    servfailAll(key, why);
  }

  /** Stores a SERVFAIL for {@code key} for servfail_ttl, so repeats do not go upstream again. */
  private void remember(CacheKey key, Profile profile, Flight flight) {
    if (flight == null || flight.waiters.isEmpty()) {
      return;
    }
    try {
      ScannedAnswer servfail = ScannedAnswer.fromUpstream(flight.waiters.get(0).query().servfailToCache());
      long seconds = profile.ttlRules().cacheSeconds(servfail);
      if (seconds > 0) {
        long now = clock.getAsLong();
        profile.cache().fillBehind(key, profile.ttlRules().cachedAnswer(servfail, now, seconds));
      }
    } catch (WireException e) {
      failures.warn("cannot remember the failure of " + key, e);
    }
  }

  /**
   * Answers every waiter of {@code key} with its stale answer when serve-stale has one and ends
   * the flight; false (nothing done) when there is none. The stale answer stays in the cache as
   * it was: a failure never overwrites it. When the upstream answered and the name failed there,
   * the key's failure-recheck window opens (RFC 8767: do not ask again for 30 s); when no upstream
   * answered it does not, since upstream health already fails fast while they are down and the
   * name is fetched again as soon as they are back.
   */
  private boolean serveStaleFor(CacheKey key, Profile profile, boolean nameFailed) {
    Flight flight = inFlight.get(key);
    long now = clock.getAsLong();
    CachedAnswer expired = flight.stale != null ? flight.stale : stale.find(key, profile, now);
    if (expired == null) {
      return false;
    }
    if (nameFailed) {
      stale.failed(key, now);
    }
    end(key, false);
    for (Resolve r : flight.waiters) {
      if (r.query().fromPeer()) {
        reply(r, r.query().servfail(ExtendedError.UPSTREAM_FAILED));
      } else {
        replyStale(r, expired, profile, UPSTREAM_FAILED);
      }
    }
    return true;
  }

  private Behavior<Command> onFillDone(FillDone done) {
    if (done.failure() != null) {
      // The answer still goes out (it is right); it is just not in the cache.
      boolean late = done.failure() instanceof TimeoutException;
      done.profile().cacheMetrics().fillFailed(late ? "timeout" : "failed");
      failures.warn("write-through fill of " + done.key() + (late ? " not committed within " + FILL_WAIT.toMillis()
          + " ms; answered anyway" : " failed; answered uncached"), done.failure());
    }
    answerAll(done.key(), done.answer());
    return this;
  }

  private void answerAll(CacheKey key, CachedAnswer answer) {
    Flight flight = end(key, true);
    if (flight == null) {
      return;
    }
    long now = clock.getAsLong();
    ExtendedError why = flight.servfailWhy != null ? flight.servfailWhy : ExtendedError.UPSTREAM_FAILED;
    for (Resolve r : flight.waiters) {
      reply(r, answer.renderFetched(r.query(), now, r.protocol().sizeLimit(r.query()), why));
    }
  }

  private void servfailAll(CacheKey key, ExtendedError why) {
    Flight flight = end(key, false);
    if (flight != null) {
      for (Resolve r : flight.waiters) {
        reply(r, r.query().servfail(why));
      }
    }
  }

  private void reply(Resolve r, byte[] wire) {
    pending.decrementAndGet();
    r.replyTo().send(wire, r.client());
  }
}
