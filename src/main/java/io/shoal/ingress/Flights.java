package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.ingress.IngressWorker.Resolve;
import io.shoal.profile.Profile;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ExtendedError;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * A worker's misses in flight, one per key, and the queries that wait for each: however many
 * clients ask for a key while it is fetched, it is fetched once, and each waiter is answered once
 * on the path it came in on. Used by its worker's thread only.
 */
final class Flights {
  /** Reasons of shoal_stale_answers_total. */
  static final String UPSTREAM_FAILED = "upstream_failed";
  static final String CLIENT_TIMEOUT = "client_timeout";

  /** One question on its way upstream (or to its owner node), and who waits for it. */
  static final class Flight {
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

  private final Map<CacheKey, Flight> inFlight = new HashMap<>();
  private final Prefetch prefetch;
  private final LongSupplier clock;
  private final AtomicInteger pending;

  /**
   * @param clock epoch milliseconds
   * @param pending the worker's count of queries not yet answered, shared with {@link Ingress}
   */
  Flights(Prefetch prefetch, LongSupplier clock, AtomicInteger pending) {
    this.prefetch = prefetch;
    this.clock = clock;
    this.pending = pending;
  }

  /** The flight of {@code key}, or null when none is in flight. */
  Flight get(CacheKey key) {
    return inFlight.get(key);
  }

  boolean contains(CacheKey key) {
    return inFlight.containsKey(key);
  }

  /** A new flight for {@code key} with its first waiter (null for a prefetch). */
  Flight start(CacheKey key, Resolve first) {
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
  Flight end(CacheKey key, boolean answered) {
    Flight flight = inFlight.remove(key);
    if (flight != null && flight.prefetch && answered) {
      prefetch.release(key);
    }
    return flight;
  }

  /** Ends the flight of {@code key}: every waiter gets {@code answer}, with its own ID and size limit. */
  void answerAll(CacheKey key, CachedAnswer answer) {
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

  /** Ends the flight of {@code key}: every waiter gets SERVFAIL saying {@code why}. */
  void servfailAll(CacheKey key, ExtendedError why) {
    Flight flight = end(key, false);
    if (flight != null) {
      for (Resolve r : flight.waiters) {
        reply(r, r.query().servfail(why));
      }
    }
  }

  /**
   * Ends the flight of {@code key}, which failed: every waiter gets {@code expired} stale, nodes
   * that asked this one as the key's owner too (see {@link Resolve}).
   */
  void staleAll(CacheKey key, CachedAnswer expired, Profile profile) {
    Flight flight = end(key, false);
    for (Resolve r : flight.waiters) {
      replyStale(r, expired, profile, UPSTREAM_FAILED);
    }
  }

  /** The client timeout passed for {@code flight}: its waiters get the stale answer now; the fetch goes on. */
  void staleToClients(Flight flight, Profile profile) {
    for (Resolve r : flight.waiters) {
      replyStale(r, flight.stale, profile, CLIENT_TIMEOUT);
    }
    flight.waiters.clear();
  }

  void replyStale(Resolve r, CachedAnswer stale, Profile profile, String reason) {
    profile.cacheMetrics().staleAnswer(reason);
    reply(r, stale.renderStale(r.query(), r.protocol().sizeLimit(r.query())));
  }

  /** Sends {@code wire} to the client of {@code r}: one query fewer pending. */
  void reply(Resolve r, byte[] wire) {
    pending.decrementAndGet();
    r.replyTo().send(wire, r.client());
  }
}
