package io.shoal.ingress;

import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.config.ServeStaleSettings;
import io.shoal.ingress.Flights.Flight;
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
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;

/**
 * Answers the misses of one partition of the key space (hits never come here: the socket that
 * read them answers them). A miss goes upstream once per key however many clients ask while it is
 * in flight ({@link Flights}); every waiter gets the answer on the socket or connection it came in
 * on, and the answer fills the cache ({@link CacheFill}). A query that finds its key filled
 * meanwhile is answered from the cache. In cluster mode a miss is asked of its key's owner node
 * first ({@link OwnerLookups}).
 *
 * <p>When the upstreams fail, a recently expired answer is served stale (RFC 8767) if the cache
 * still holds one; a client whose miss waits longer than the client timeout gets it too while the
 * fetch goes on. An upstream REFUSED becomes SERVFAIL, remembered like one ({@link FailedFetch}).
 * Hits near expiry arrive as {@link Refresh}: fetched in the background, no client waiting.
 */
public final class IngressWorker extends AbstractBehavior<IngressWorker.Command> {

  /** Messages to a worker. */
  public interface Command {}

  /**
   * Answer {@code query}, which missed the cache, from {@code client}; the reply goes to
   * {@code replyTo}. The client may be another cluster node asking this one, the key's owner
   * ({@link DnsQuery#fromPeer()}): such a query is resolved here, from the cache or upstream, never
   * passed on to yet another node. It is answered stale as a client would be (serve-stale, when
   * the upstreams fail or are slow): the stale answer says so in an extended error, and the
   * asking node passes it on to its clients as stale without keeping a copy.
   */
  public record Resolve(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath replyTo)
      implements Command {}

  /**
   * A miss that the thread that read it asked of its key's owner ({@link DirectOwnerLookups}), whose
   * {@code reply} (null: none in time) was not a plain answer to send at once: resolved here as if
   * this worker had asked the owner, asked at {@code askedNanos}.
   */
  public record OwnerAnswered(Resolve resolve, byte[] reply, long askedNanos) implements Command {}

  /** A hit found its answer near expiry: fetch it again, nobody waits (see {@link Prefetch}). */
  public record Refresh(DnsQuery query) implements Command {}

  /**
   * A reload's new profiles and serve-stale settings, for the messages after this one; flights
   * under way end with the profile they started with.
   */
  public record Replan(ProfileTable profiles, ServeStaleSettings serveStale) implements Command {}

  /** The client timeout of serve-stale ran out for {@code flight}. */
  private record StaleDeadline(CacheKey key, Flight flight) implements Command {}

  private record UpstreamDone(CacheKey key, Profile profile, Upstream.Outcome outcome) implements Command {}

  /** The owner node's reply to a lookup of {@code key} asked at {@code askedNanos}; null when none came in time. */
  private record OwnerDone(CacheKey key, Profile profile, byte[] reply, long askedNanos) implements Command {}

  /**
   * A key's previous owner's reply (null: none in time) to a lookup in its cache, asked while this
   * node has just entered the ring ({@link OwnerDirectory#previousOwnerOf}); {@code query} goes
   * upstream if it held no answer.
   */
  private record PreviousOwnerDone(CacheKey key, Profile profile, DnsQuery query, byte[] reply) implements Command {}

  /** A write-through fill ended: {@code failure} is null when the cache stored the answer. */
  private record FillDone(CacheKey key, Profile profile, CachedAnswer answer, Throwable failure) implements Command {}

  /**
   * The longest a write-through reply waits for its fill. A commit takes milliseconds; a shard
   * that is down and restarting with back-off takes seconds, and clients must not wait for that.
   */
  static final Duration FILL_WAIT = Duration.ofSeconds(1);

  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(IngressWorker.class), 10);

  private ProfileTable profiles;
  private final FillMode fillMode;
  private final LongSupplier clock;
  private final ServerMetrics metrics;
  private final OwnerLookups owners;
  private final StaleAnswers stale;
  private final Prefetch prefetch;
  private final Flights flights;
  private final FailedFetch failedFetch;

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
    this.stale = new StaleAnswers(serveStale, owners::cachesServable);
    this.prefetch = prefetch;
    this.profiles = profiles;
    this.fillMode = fillMode;
    this.clock = clock;
    this.metrics = metrics;
    this.owners = new OwnerLookups(owners, ownerTimeout, metrics, failures);
    this.flights = new Flights(prefetch, clock, pending);
    this.failedFetch = new FailedFetch(flights, stale, clock, failures);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Resolve.class, this::onResolve)
        .onMessage(OwnerAnswered.class, this::onOwnerAnswered)
        .onMessage(Refresh.class, this::onRefresh)
        .onMessage(Replan.class, this::onReplan)
        .onMessage(StaleDeadline.class, this::onStaleDeadline)
        .onMessage(UpstreamDone.class, this::onUpstreamDone)
        .onMessage(OwnerDone.class, this::onOwnerDone)
        .onMessage(PreviousOwnerDone.class, this::onPreviousOwnerDone)
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
      flights.reply(r, r.query().servfail(ExtendedError.UPSTREAM_FAILED));
    }
    return this;
  }

  private Behavior<Command> onOwnerAnswered(OwnerAnswered a) {
    Resolve r = a.resolve();
    CacheKey key = r.query().key();
    try {
      Profile profile = profiles.match(key);
      if (joinedFlight(r, profile)) {
        return this;
      }
      flights.start(key, r);
      return onOwnerDone(new OwnerDone(key, profile, a.reply(), a.askedNanos()));
    } catch (RuntimeException e) {
      failures.warn("query " + key + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      flights.servfailAll(key, ExtendedError.UPSTREAM_FAILED);
      return this;
    }
  }

  /**
   * True if another query for {@code r}'s key is being resolved here already: {@code r} waits for
   * it, or gets the stale answer that flight already served its clients.
   */
  private boolean joinedFlight(Resolve r, Profile profile) {
    Flight flight = flights.get(r.query().key());
    if (flight == null) {
      return false;
    }
    if (flight.staleServed) {
      flights.replyStale(r, flight.stale, profile, Flights.CLIENT_TIMEOUT);
    } else {
      flight.waiters.add(r);
    }
    return true;
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
      flights.reply(r, found.render(r.query(), now, r.protocol().sizeLimit(r.query())));
      return;
    }
    // (The near cache of copies was looked at where the query was read.)
    OwnerDirectory.Owner owner = owners.ownerOf(r.query());
    if (joinedFlight(r, profile)) {
      return;
    }
    CachedAnswer expired = stale.servable(found);
    if (expired != null && stale.recheckPending(key, now)) {
      flights.replyStale(r, expired, profile, Flights.UPSTREAM_FAILED);
      return;
    }
    Flight flight = flights.start(key, r);
    if (expired != null) {
      flight.stale = expired;
      Duration wait = r.query().fromPeer() ? owners.peerStaleWait(stale.clientTimeout()) : stale.clientTimeout();
      getContext().scheduleOnce(wait, getContext().getSelf(), new StaleDeadline(key, flight));
    }
    if (owner != null) {
      long asked = System.nanoTime();
      getContext().pipeToSelf(owners.ask(owner, r.query()),
          (reply, failure) -> new OwnerDone(key, profile, reply, asked));
      return;
    }
    OwnerDirectory.Owner previous = owners.previousOwnerOf(r.query());
    if (previous != null) {
      DnsQuery query = r.query();
      getContext().pipeToSelf(owners.askCache(previous, query),
          (reply, failure) -> new PreviousOwnerDone(key, profile, query, reply));
      return;
    }
    askUpstream(key, profile, r.query());
  }

  /**
   * The previous owner answered from its cache (or did not): what it held goes into this node's
   * own cache (this node owns the key now) and to every waiter, as an upstream answer would;
   * anything else and the query goes upstream.
   */
  private Behavior<Command> onPreviousOwnerDone(PreviousOwnerDone done) {
    if (!flights.contains(done.key())) {
      return this;
    }
    try {
      ScannedAnswer held = owners.heldByPrevious(done.reply());
      if (held == null) {
        askUpstream(done.key(), done.profile(), done.query());
      } else {
        fillAndAnswer(done.key(), done.profile(), held);
      }
    } catch (RuntimeException e) {
      failures.warn("answer for " + done.key() + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      flights.servfailAll(done.key(), ExtendedError.UPSTREAM_FAILED);
    }
    return this;
  }

  private Behavior<Command> onReplan(Replan replan) {
    profiles = replan.profiles();
    stale.settings(replan.serveStale());
    return this;
  }

  private Behavior<Command> onRefresh(Refresh refresh) {
    CacheKey key = refresh.query().key();
    if (flights.contains(key)) {
      // Already being fetched: that fetch refreshes the cache.
      prefetch.release(key);
      return this;
    }
    try {
      Profile profile = profiles.match(key);
      Flight flight = flights.start(key, null);
      flight.prefetch = true;
      profile.cacheMetrics().prefetch();
      askUpstream(key, profile, refresh.query());
    } catch (RuntimeException e) {
      flights.end(key, false);
      failures.warn("prefetch of " + key + " failed", e);
    }
    return this;
  }

  private Behavior<Command> onStaleDeadline(StaleDeadline deadline) {
    Flight flight = flights.get(deadline.key());
    if (flight != deadline.flight()) {
      return this; // that flight ended in time
    }
    flight.staleServed = true;
    flights.staleToClients(flight, profiles.match(deadline.key()));
    return this;
  }

  /**
   * The owner answered (or did not): its answer goes to every waiter and into the near cache,
   * never into this node's own caches. No reply in time, or one this node cannot use, and the
   * node asks upstream itself; an owner's SERVFAIL is this node's failure too (the owner asked
   * the same upstreams), served stale here if this node has a stale answer. An owner's stale
   * answer (its upstreams failed) goes to the waiters as stale, and no copy is kept.
   */
  private Behavior<Command> onOwnerDone(OwnerDone done) {
    Flight flight = flights.get(done.key());
    if (flight == null) {
      return this;
    }
    ScannedAnswer scan = owners.usable(done.key(), done.reply());
    if (scan == null) {
      if (flight.waiters.isEmpty()) {
        flights.end(done.key(), false); // every waiter had the stale answer
      } else {
        askUpstream(done.key(), done.profile(), flight.waiters.get(0).query());
      }
      return this;
    }
    if (ScannedAnswer.saysStale(done.reply())) {
      owners.servedStale();
      flights.staleAll(done.key(), CacheFill.passedOn(scan, clock.getAsLong()), done.profile());
      return this;
    }
    if (scan.rcode() == Rcode.SERVFAIL) {
      owners.failed();
      failedFetch.answer(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, false);
      return this;
    }
    owners.answered(done.askedNanos());
    long now = clock.getAsLong();
    CachedAnswer copy = CacheFill.kept(done.profile(), scan, now);
    if (copy == null) {
      flights.answerAll(done.key(), CacheFill.passedOn(scan, now));
      return this;
    }
    owners.keepCopy(done.key(), copy);
    flights.answerAll(done.key(), copy);
    return this;
  }

  private void askUpstream(CacheKey key, Profile profile, DnsQuery query) {
    getContext().pipeToSelf(profile.upstream().forward(query), (outcome, failure) -> new UpstreamDone(key, profile,
        outcome != null ? outcome : new Upstream.Failed("no upstream answer: " + failure)));
  }

  private Behavior<Command> onUpstreamDone(UpstreamDone done) {
    if (!flights.contains(done.key())) {
      return this;
    }
    try {
      if (!(done.outcome() instanceof Upstream.Answered answered)) {
        failedFetch.answer(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, false);
        return this;
      }
      ScannedAnswer scan;
      try {
        scan = ScannedAnswer.fromUpstream(answered.wire());
      } catch (WireException e) {
        failures.warn("malformed answer from " + answered.server() + " for " + done.key(), e);
        metrics.dropped(ServerMetrics.BAD_UPSTREAM_ANSWER);
        failedFetch.answer(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, true);
        return this;
      }
      if (scan.rcode() == Rcode.REFUSED) {
        // The upstream will not resolve for us: to our client that is a failure, not a policy
        // of ours (RFC 8914's No Reachable Authority), remembered like a SERVFAIL.
        failedFetch.answer(done.key(), done.profile(), ExtendedError.UPSTREAM_REFUSED, true);
        return this;
      }
      if (scan.rcode() == Rcode.SERVFAIL && failedFetch.serveStale(done.key(), done.profile(), true)) {
        return this;
      }
      Flight flight = flights.get(done.key());
      flight.servfailWhy = answered.why();
      if (scan.rcode() == Rcode.SERVFAIL && flight.prefetch && flight.waiters.isEmpty()) {
        // A prefetch that failed: the answer in the cache is still good until it expires.
        flights.end(done.key(), false);
        return this;
      }
      fillAndAnswer(done.key(), done.profile(), scan);
    } catch (RuntimeException e) {
      failures.warn("answer for " + done.key() + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      flights.servfailAll(done.key(), ExtendedError.UPSTREAM_FAILED);
    }
    return this;
  }

  /**
   * Fills {@code scan}, an answer for {@code key} this node owns, into {@code profile}'s cache as
   * its TTL rules keep it (in the fill mode's way) and sends it to the flight's waiters.
   */
  private void fillAndAnswer(CacheKey key, Profile profile, ScannedAnswer scan) {
    long now = clock.getAsLong();
    CachedAnswer answer = CacheFill.kept(profile, scan, now);
    if (answer == null) {
      flights.answerAll(key, CacheFill.passedOn(scan, now));
      return;
    }
    if (fillMode == FillMode.WRITE_THROUGH) {
      getContext().pipeToSelf(CacheFill.writeThrough(profile, key, answer, FILL_WAIT),
          (ok, failure) -> new FillDone(key, profile, answer,
              failure != null || Boolean.TRUE.equals(ok) ? failure : new IllegalStateException("not stored")));
    } else {
      profile.cache().fillBehind(key, answer);
      flights.answerAll(key, answer);
    }
  }

  private Behavior<Command> onFillDone(FillDone done) {
    if (done.failure() != null) {
      // The answer still goes out (it is right); it is just not in the cache.
      boolean late = done.failure() instanceof TimeoutException;
      done.profile().cacheMetrics().fillFailed(late ? "timeout" : "failed");
      failures.warn("write-through fill of " + done.key() + (late ? " not committed within " + FILL_WAIT.toMillis()
          + " ms; answered anyway" : " failed; answered uncached"), done.failure());
    }
    flights.answerAll(done.key(), done.answer());
    return this;
  }
}
