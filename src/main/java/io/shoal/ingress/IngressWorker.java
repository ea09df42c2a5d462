package io.shoal.ingress;

import akka.actor.typed.Behavior;
import akka.actor.typed.Signal;
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
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;

/**
 * Answers the misses of one partition of the key space (hits never come here: the socket that
 * read them answers them). A miss goes upstream once per key however many clients ask while it is
 * in flight ({@link Flights}); every waiter gets the answer on the socket or connection it came in
 * on, and the answer fills the cache ({@link Fetches}, {@link CacheFill}). A query that finds its
 * key filled meanwhile is answered from the cache. In cluster mode a miss is asked of its key's
 * owner node first ({@link OwnerLookups}). This class starts the flights; {@link Fetches} handles
 * what comes back.
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

  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(IngressWorker.class), 10);

  private ProfileTable profiles;
  private final LongSupplier clock;
  private final ServerMetrics metrics;
  private final OwnerLookups owners;
  private final StaleAnswers stale;
  private final Prefetch prefetch;
  private final Flights flights;
  private final Fetches fetches;

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
    this.clock = clock;
    this.metrics = metrics;
    this.owners = new OwnerLookups(owners, ownerTimeout, metrics, failures);
    this.flights = new Flights(prefetch, clock, pending);
    this.fetches = new Fetches(context, fillMode, clock, metrics, this.owners, flights,
        new FailedFetch(flights, stale, clock, failures), failures);
  }

  /**
   * The messages are told apart by hand, not by Akka's receive builder: the builder's matcher
   * allocates three objects for every case it tries (a miss's answer from upstream was its
   * sixth case), and this actor takes two messages per miss. For the same reason every handler returns {@code
   * Behaviors.same()}, never {@code this}: the worker runs under a supervisor, which is an
   * interceptor, and a handler that returns a behavior object, even its own {@code this}, has a
   * new interceptor wrapped around it and the behavior stack searched, at every message.
   */
  @Override
  public Receive<Command> createReceive() {
    return new Receive<>() {
      @Override
      public Behavior<Command> receiveMessage(Command message) {
        return onMessage(message);
      }

      @Override
      public Behavior<Command> receiveSignal(Signal signal) {
        return Behaviors.unhandled();
      }
    };
  }

  /** The most frequent first: a query to resolve, then its answer from upstream, its fill. */
  private Behavior<Command> onMessage(Command message) {
    if (message instanceof Resolve r) {
      return onResolve(r);
    }
    // the fetches' answers, back on this worker's thread
    if (message instanceof Fetches.UpstreamDone done) {
      fetches.upstreamDone(done);
    } else if (message instanceof Fetches.FillDone done) {
      fetches.fillDone(done);
    } else if (message instanceof OwnerAnswered a) {
      return onOwnerAnswered(a);
    } else if (message instanceof Fetches.OwnerDone done) {
      fetches.ownerDone(done);
    } else if (message instanceof Fetches.PreviousOwnerDone done) {
      fetches.previousOwnerDone(done);
    } else if (message instanceof Refresh refresh) {
      return onRefresh(refresh);
    } else if (message instanceof Replan replan) {
      return onReplan(replan);
    } else if (message instanceof StaleDeadline deadline) {
      return onStaleDeadline(deadline);
    } else {
      return Behaviors.unhandled();
    }
    return Behaviors.same();
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
    return Behaviors.same();
  }

  private Behavior<Command> onOwnerAnswered(OwnerAnswered a) {
    Resolve r = a.resolve();
    CacheKey key = r.query().key();
    try {
      Profile profile = profiles.match(key);
      if (joinedFlight(r, profile)) {
        return Behaviors.same();
      }
      flights.start(key, r);
      fetches.ownerDone(new Fetches.OwnerDone(key, profile, a.reply(), a.askedNanos()));
      return Behaviors.same();
    } catch (RuntimeException e) {
      failures.warn("query " + key + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      flights.servfailAll(key, ExtendedError.UPSTREAM_FAILED);
      return Behaviors.same();
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
      fetches.askOwner(key, profile, owner, r.query());
      return;
    }
    OwnerDirectory.Owner previous = owners.previousOwnerOf(r.query());
    if (previous != null) {
      fetches.askPreviousOwner(key, profile, previous, r.query());
      return;
    }
    fetches.askUpstream(key, profile, r.query());
  }

  private Behavior<Command> onReplan(Replan replan) {
    profiles = replan.profiles();
    stale.settings(replan.serveStale());
    return Behaviors.same();
  }

  private Behavior<Command> onRefresh(Refresh refresh) {
    CacheKey key = refresh.query().key();
    if (flights.contains(key)) {
      // Already being fetched: that fetch refreshes the cache.
      prefetch.release(key);
      return Behaviors.same();
    }
    try {
      Profile profile = profiles.match(key);
      Flight flight = flights.start(key, null);
      flight.prefetch = true;
      profile.cacheMetrics().prefetch();
      fetches.askUpstream(key, profile, refresh.query());
    } catch (RuntimeException e) {
      flights.end(key, false);
      failures.warn("prefetch of " + key + " failed", e);
    }
    return Behaviors.same();
  }

  private Behavior<Command> onStaleDeadline(StaleDeadline deadline) {
    Flight flight = flights.get(deadline.key());
    if (flight != deadline.flight()) {
      return Behaviors.same(); // that flight ended in time
    }
    flight.staleServed = true;
    flights.staleToClients(flight, profiles.match(deadline.key()));
    return Behaviors.same();
  }
}
