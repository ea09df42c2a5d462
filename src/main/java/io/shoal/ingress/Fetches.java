package io.shoal.ingress;

import akka.actor.typed.javadsl.ActorContext;
import io.shoal.cache.CachedAnswer;
import io.shoal.cluster.OwnerDirectory;
import io.shoal.ingress.Flights.Flight;
import io.shoal.logging.FailureLog;
import io.shoal.metrics.ServerMetrics;
import io.shoal.profile.Profile;
import io.shoal.upstream.Upstream;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.Rcode;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * A worker's fetches for its flights: asking the upstreams, the key's owner node or its previous
 * owner, and what each answer becomes once it is back on the worker's thread (filled into the
 * cache and sent to the waiters, kept as a near-cache copy, served stale, or SERVFAIL). Used by
 * its worker's thread only: the answers arrive as the worker's own messages.
 */
final class Fetches {
  /** The upstreams' outcome for {@code key}. */
  record UpstreamDone(CacheKey key, Profile profile, Upstream.Outcome outcome) implements IngressWorker.Command {}

  /** The owner node's reply to a lookup of {@code key} asked at {@code askedNanos}; null when none came in time. */
  record OwnerDone(CacheKey key, Profile profile, byte[] reply, long askedNanos) implements IngressWorker.Command {}

  /**
   * A key's previous owner's reply (null: none in time) to a lookup in its cache, asked while this
   * node has just entered the ring ({@link OwnerDirectory#previousOwnerOf}); {@code query} goes
   * upstream if it held no answer.
   */
  record PreviousOwnerDone(CacheKey key, Profile profile, DnsQuery query, byte[] reply)
      implements IngressWorker.Command {}

  /** A write-through fill ended: {@code failure} is null when the cache stored the answer. */
  record FillDone(CacheKey key, Profile profile, CachedAnswer answer, Throwable failure)
      implements IngressWorker.Command {}

  /**
   * The longest a write-through reply waits for its fill. A commit takes milliseconds; a shard
   * that is down and restarting with back-off takes seconds, and clients must not wait for that.
   */
  static final Duration FILL_WAIT = Duration.ofSeconds(1);

  private final ActorContext<IngressWorker.Command> context;
  private final FillMode fillMode;
  private final LongSupplier clock;
  private final ServerMetrics metrics;
  private final OwnerLookups owners;
  private final Flights flights;
  private final FailedFetch failedFetch;
  private final FailureLog failures;

  /** @param clock epoch milliseconds */
  Fetches(ActorContext<IngressWorker.Command> context, FillMode fillMode, LongSupplier clock, ServerMetrics metrics,
      OwnerLookups owners, Flights flights, FailedFetch failedFetch, FailureLog failures) {
    this.context = context;
    this.fillMode = fillMode;
    this.clock = clock;
    this.metrics = metrics;
    this.owners = owners;
    this.flights = flights;
    this.failedFetch = failedFetch;
    this.failures = failures;
  }

  void askUpstream(CacheKey key, Profile profile, DnsQuery query) {
    context.pipeToSelf(profile.upstream().forward(query), (outcome, failure) -> new UpstreamDone(key, profile,
        outcome != null ? outcome : new Upstream.Failed("no upstream answer: " + failure)));
  }

  /** Asks {@code owner}, the key's owner node, for {@code query}'s answer. */
  void askOwner(CacheKey key, Profile profile, OwnerDirectory.Owner owner, DnsQuery query) {
    long asked = System.nanoTime();
    context.pipeToSelf(owners.ask(owner, query), (reply, failure) -> new OwnerDone(key, profile, reply, asked));
  }

  /** Asks {@code previous}, the key's owner before this node entered the ring, for the answer in its cache. */
  void askPreviousOwner(CacheKey key, Profile profile, OwnerDirectory.Owner previous, DnsQuery query) {
    context.pipeToSelf(owners.askCache(previous, query),
        (reply, failure) -> new PreviousOwnerDone(key, profile, query, reply));
  }

  /**
   * The previous owner answered from its cache (or did not): what it held goes into this node's
   * own cache (this node owns the key now) and to every waiter, as an upstream answer would;
   * anything else and the query goes upstream.
   */
  void previousOwnerDone(PreviousOwnerDone done) {
    if (!flights.contains(done.key())) {
      return;
    }
    try {
      ScannedAnswer held = owners.heldByPrevious(done.reply());
      if (held == null) {
        askUpstream(done.key(), done.profile(), done.query());
      } else {
        fillAndAnswer(done.key(), done.profile(), held);
      }
    } catch (RuntimeException e) {
      failed(done.key(), e);
    }
  }

  /**
   * The owner answered (or did not): its answer goes to every waiter and into the near cache,
   * never into this node's own caches. No reply in time, or one this node cannot use, and the
   * node asks upstream itself; an owner's SERVFAIL is this node's failure too (the owner asked
   * the same upstreams), served stale here if this node has a stale answer. An owner's stale
   * answer (its upstreams failed) goes to the waiters as stale, and no copy is kept.
   */
  void ownerDone(OwnerDone done) {
    Flight flight = flights.get(done.key());
    if (flight == null) {
      return;
    }
    ScannedAnswer scan = owners.usable(done.key(), done.reply());
    if (scan == null) {
      if (flight.waiters.isEmpty()) {
        flights.end(done.key(), false); // every waiter had the stale answer
      } else {
        askUpstream(done.key(), done.profile(), flight.waiters.get(0).query());
      }
      return;
    }
    if (ScannedAnswer.saysStale(done.reply())) {
      owners.servedStale();
      flights.staleAll(done.key(), CacheFill.passedOn(scan, clock.getAsLong()), done.profile());
      return;
    }
    if (scan.rcode() == Rcode.SERVFAIL) {
      owners.failed();
      failedFetch.answer(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, false);
      return;
    }
    owners.answered(done.askedNanos());
    long now = clock.getAsLong();
    CachedAnswer copy = CacheFill.kept(done.profile(), scan, now);
    if (copy == null) {
      flights.answerAll(done.key(), CacheFill.passedOn(scan, now));
      return;
    }
    owners.keepCopy(done.key(), copy);
    flights.answerAll(done.key(), copy);
  }

  void upstreamDone(UpstreamDone done) {
    if (!flights.contains(done.key())) {
      return;
    }
    try {
      if (!(done.outcome() instanceof Upstream.Answered answered)) {
        failedFetch.answer(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, false);
        return;
      }
      ScannedAnswer scan;
      try {
        scan = ScannedAnswer.fromUpstream(answered.wire());
      } catch (WireException e) {
        failures.warn("malformed answer from " + answered.server() + " for " + done.key(), e);
        metrics.dropped(ServerMetrics.BAD_UPSTREAM_ANSWER);
        failedFetch.answer(done.key(), done.profile(), ExtendedError.UPSTREAM_FAILED, true);
        return;
      }
      if (scan.rcode() == Rcode.REFUSED) {
        // The upstream will not resolve for us: to our client that is a failure, not a policy
        // of ours (RFC 8914's No Reachable Authority), remembered like a SERVFAIL.
        failedFetch.answer(done.key(), done.profile(), ExtendedError.UPSTREAM_REFUSED, true);
        return;
      }
      if (scan.rcode() == Rcode.SERVFAIL && failedFetch.serveStale(done.key(), done.profile(), true)) {
        return;
      }
      Flight flight = flights.get(done.key());
      flight.servfailWhy = answered.why();
      if (scan.rcode() == Rcode.SERVFAIL && flight.prefetch && flight.waiters.isEmpty()) {
        // A prefetch that failed: the answer in the cache is still good until it expires.
        flights.end(done.key(), false);
        return;
      }
      fillAndAnswer(done.key(), done.profile(), scan);
    } catch (RuntimeException e) {
      failed(done.key(), e);
    }
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
      context.pipeToSelf(CacheFill.writeThrough(profile, key, answer, FILL_WAIT),
          (ok, failure) -> new FillDone(key, profile, answer,
              failure != null || Boolean.TRUE.equals(ok) ? failure : new IllegalStateException("not stored")));
    } else {
      profile.cache().fillBehind(key, answer);
      flights.answerAll(key, answer);
    }
  }

  void fillDone(FillDone done) {
    if (done.failure() != null) {
      // The answer still goes out (it is right); it is just not in the cache.
      boolean late = done.failure() instanceof TimeoutException;
      done.profile().cacheMetrics().fillFailed(late ? "timeout" : "failed");
      failures.warn("write-through fill of " + done.key() + (late ? " not committed within " + FILL_WAIT.toMillis()
          + " ms; answered anyway" : " failed; answered uncached"), done.failure());
    }
    flights.answerAll(done.key(), done.answer());
  }

  /** Handling {@code key}'s answer failed: its waiters get SERVFAIL, and the worker goes on. */
  private void failed(CacheKey key, RuntimeException e) {
    failures.warn("answer for " + key + " failed", e);
    metrics.dropped(ServerMetrics.WORKER_FAILURE);
    flights.servfailAll(key, ExtendedError.UPSTREAM_FAILED);
  }
}
