package io.shoal.ingress;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.logging.FailureLog;
import io.shoal.cluster.PeerAnswer;
import io.shoal.cluster.PeerLookup;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.profile.ProfileTable;
import io.shoal.upstream.Upstream;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
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
 */
public final class IngressWorker extends AbstractBehavior<IngressWorker.Command> {

  /** Messages to a worker. */
  public interface Command {}

  /** Someone waiting for the answer to a question that is in flight. */
  private sealed interface Waiter permits Resolve, PeerResolve {
    DnsQuery query();
  }

  /** Answer {@code query}, which missed the cache, from {@code client}; the reply goes to {@code replyTo}. */
  public record Resolve(DnsQuery query, InetSocketAddress client, Protocol protocol, ReplyPath replyTo)
      implements Command, Waiter {}

  /**
   * Another cluster node asks this node, the key's owner, for the answer. Resolved here (from
   * the cache or upstream), never passed on to yet another node, so rings that briefly disagree
   * cannot bounce a lookup around.
   */
  public record PeerResolve(DnsQuery query, ActorRef<PeerAnswer> replyTo) implements Command, Waiter {}

  private record UpstreamDone(CacheKey key, Profile profile, Upstream.Outcome outcome) implements Command {}

  private record OwnerDone(CacheKey key, Profile profile, PeerAnswer answer) implements Command {}

  /** A write-through fill ended: {@code failure} is null when the cache stored the answer. */
  private record FillDone(CacheKey key, Profile profile, CachedAnswer answer, Throwable failure) implements Command {}

  /**
   * The longest a write-through reply waits for its fill. A commit takes milliseconds; a shard
   * that is down and restarting with back-off takes seconds, and clients must not wait for that.
   */
  static final Duration FILL_WAIT = Duration.ofSeconds(1);

  private static final FailureLog failures = new FailureLog(LoggerFactory.getLogger(IngressWorker.class), 10);

  private final ProfileTable profiles;
  private final FillMode fillMode;
  private final LongSupplier clock;
  private final AtomicInteger pending;
  private final ServerMetrics metrics;
  private final OwnerDirectory owners;
  private final Duration ownerTimeout;
  private final Map<CacheKey, List<Waiter>> inFlight = new HashMap<>();

  /**
   * @param clock epoch milliseconds (injected so tests can move time)
   * @param pending this worker's count of queries not yet answered, shared with {@link Ingress}
   */
  public static Behavior<Command> create(
      ProfileTable profiles, FillMode fillMode, LongSupplier clock, AtomicInteger pending, ServerMetrics metrics) {
    return create(profiles, fillMode, clock, pending, metrics, new OwnerDirectory(), Duration.ZERO);
  }

  /** A worker in cluster mode: misses for keys another node owns are asked of that node first. */
  public static Behavior<Command> create(
      ProfileTable profiles, FillMode fillMode, LongSupplier clock, AtomicInteger pending, ServerMetrics metrics,
      OwnerDirectory owners, Duration ownerTimeout) {
    return Behaviors.setup(ctx -> new IngressWorker(ctx, profiles, fillMode, clock, pending, metrics, owners, ownerTimeout));
  }

  private IngressWorker(
      ActorContext<Command> context, ProfileTable profiles, FillMode fillMode, LongSupplier clock,
      AtomicInteger pending, ServerMetrics metrics, OwnerDirectory owners, Duration ownerTimeout) {
    super(context);
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
        .onMessage(PeerResolve.class, this::onPeerResolve)
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
      reply(r, r.query().servfail());
    }
    return this;
  }

  private void resolve(Resolve r) {
    CacheKey key = r.query().key();
    Profile profile = profiles.match(key);
    long now = clock.getAsLong();
    // Counted as a miss where it was read; it may have been filled since (a waiter of the same
    // key queued behind the answer), and then the cache answers it without another fetch.
    CachedAnswer filled = profile.cache().get(key, now);
    if (filled != null) {
      reply(r, filled.render(r.query(), now, r.protocol().sizeLimit(r.query())));
      return;
    }
    ActorRef<PeerLookup> owner = owners.ownerOf(key);
    CachedAnswer copy = owner == null ? null : owners.nearCopy(key, now);
    if (copy != null) {
      reply(r, copy.render(r.query(), now, r.protocol().sizeLimit(r.query())));
      return;
    }
    if (!await(key, r)) {
      return;
    }
    if (owner != null) {
      try {
        getContext().ask(
            PeerAnswer.class,
            owner,
            ownerTimeout,
            replyTo -> new PeerLookup(r.query().packet(), replyTo),
            (answer, failure) -> new OwnerDone(key, profile, answer));
        return;
      } catch (IllegalStateException e) {
        // The owner's cluster system is shutting down (this node was downed): answer alone.
        metrics.remoteLookup("timeout");
      }
    }
    askUpstream(key, profile, r.query());
  }

  private Behavior<Command> onPeerResolve(PeerResolve p) {
    try {
      CacheKey key = p.query().key();
      Profile profile = profiles.match(key);
      long now = clock.getAsLong();
      CachedAnswer hit = profile.cache().get(key, now);
      if (hit != null) {
        profile.cacheMetrics().hit();
        p.replyTo().tell(PeerAnswer.of("hit", hit, true));
      } else {
        profile.cacheMetrics().miss();
        if (await(key, p)) {
          askUpstream(key, profile, p.query());
        }
      }
    } catch (RuntimeException e) {
      failures.warn("peer lookup " + p.query().key() + " failed", e);
      p.replyTo().tell(PeerAnswer.failed());
    }
    return this;
  }

  /** Adds a waiter for {@code key}; true when it is the first, so the caller must fetch. */
  private boolean await(CacheKey key, Waiter w) {
    List<Waiter> waiters = inFlight.get(key);
    if (waiters != null) {
      waiters.add(w);
      return false;
    }
    waiters = new ArrayList<>(2);
    waiters.add(w);
    inFlight.put(key, waiters);
    return true;
  }

  private Behavior<Command> onOwnerDone(OwnerDone done) {
    if (!inFlight.containsKey(done.key())) {
      return this;
    }
    PeerAnswer answer = done.answer();
    if (answer == null) {
      // The owner did not answer in time (dead, partitioned, slow): go upstream ourselves.
      metrics.remoteLookup("timeout");
      askUpstream(done.key(), done.profile(), inFlight.get(done.key()).get(0).query());
      return this;
    }
    metrics.remoteLookup(answer.source);
    if (!answer.answered()) {
      servfailAll(done.key());
      return this;
    }
    CachedAnswer copy = answer.decode();
    if (answer.cacheable && !copy.expiredAt(clock.getAsLong())) {
      // A copy in the near cache, not in the profile's cache: that one holds what this node
      // owns, and the cluster's capacity is the sum of the nodes' caches only if copies stay out.
      owners.keepCopy(done.key(), copy);
    }
    answerAll(done.key(), copy, answer.cacheable);
    return this;
  }

  private void askUpstream(CacheKey key, Profile profile, DnsQuery query) {
    getContext().pipeToSelf(profile.upstream().forward(query), (outcome, failure) -> new UpstreamDone(key, profile,
        outcome != null ? outcome : new Upstream.Failed("no upstream answer: " + failure)));
  }

  private Behavior<Command> onUpstreamDone(UpstreamDone done) {
    List<Waiter> waiters = inFlight.get(done.key());
    if (waiters == null) {
      return this;
    }
    try {
      if (!(done.outcome() instanceof Upstream.Answered answered)) {
        servfailAll(done.key());
        return this;
      }
      ScannedAnswer scan;
      try {
        scan = ScannedAnswer.fromUpstream(answered.wire());
      } catch (WireException e) {
        failures.warn("malformed answer from " + answered.server() + " for " + done.key(), e);
        metrics.dropped(ServerMetrics.BAD_UPSTREAM_ANSWER);
        servfailAll(done.key());
        return this;
      }
      long now = clock.getAsLong();
      long seconds = done.profile().ttlRules().cacheSeconds(scan);
      if (seconds <= 0) {
        // Not cacheable: pass it on with the upstream's own TTLs.
        answerAll(done.key(), CachedAnswer.of(scan, now, now + 0xFFFF_FFFFL * 1000), false);
        return this;
      }
      CachedAnswer answer = done.profile().ttlRules().cachedAnswer(scan, now, seconds);
      if (fillMode == FillMode.WRITE_THROUGH) {
        // A copy, so the bound times out this wait only, never the cache's own fill.
        CompletableFuture<Boolean> stored = done.profile().cache().fill(done.key(), answer).toCompletableFuture()
            .copy().orTimeout(FILL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        getContext().pipeToSelf(stored, (ok, failure) -> new FillDone(done.key(), done.profile(), answer,
            failure != null || Boolean.TRUE.equals(ok) ? failure : new IllegalStateException("not stored")));
      } else {
        done.profile().cache().fillBehind(done.key(), answer);
        answerAll(done.key(), answer, true);
      }
    } catch (RuntimeException e) {
      failures.warn("answer for " + done.key() + " failed", e);
      metrics.dropped(ServerMetrics.WORKER_FAILURE);
      servfailAll(done.key());
    }
    return this;
  }

  private Behavior<Command> onFillDone(FillDone done) {
    if (done.failure() != null) {
      // The answer still goes out (it is right); it is just not in the cache.
      boolean late = done.failure() instanceof TimeoutException;
      done.profile().cacheMetrics().fillFailed(late ? "timeout" : "failed");
      failures.warn("write-through fill of " + done.key() + (late ? " not committed within " + FILL_WAIT.toMillis()
          + " ms; answered anyway" : " failed; answered uncached"), done.failure());
    }
    answerAll(done.key(), done.answer(), true);
    return this;
  }

  private void answerAll(CacheKey key, CachedAnswer answer, boolean cacheable) {
    List<Waiter> waiters = inFlight.remove(key);
    if (waiters == null) {
      return;
    }
    long now = clock.getAsLong();
    PeerAnswer forPeers = null;
    for (Waiter w : waiters) {
      if (w instanceof Resolve r) {
        reply(r, answer.render(r.query(), now, r.protocol().sizeLimit(r.query())));
      } else if (w instanceof PeerResolve p) {
        if (forPeers == null) {
          forPeers = PeerAnswer.of("fetched", answer, cacheable);
        }
        p.replyTo().tell(forPeers);
      }
    }
  }

  private void servfailAll(CacheKey key) {
    List<Waiter> waiters = inFlight.remove(key);
    if (waiters != null) {
      for (Waiter w : waiters) {
        if (w instanceof Resolve r) {
          reply(r, r.query().servfail());
        } else if (w instanceof PeerResolve p) {
          p.replyTo().tell(PeerAnswer.failed());
        }
      }
    }
  }

  private void reply(Resolve r, byte[] wire) {
    pending.decrementAndGet();
    r.replyTo().send(wire, r.client());
  }
}
