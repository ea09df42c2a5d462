package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.ingress.Flights.Flight;
import io.shoal.logging.FailureLog;
import io.shoal.profile.Profile;
import io.shoal.wire.CacheKey;
import io.shoal.wire.ExtendedError;
import io.shoal.wire.WireException;
import java.util.function.LongSupplier;

/**
 * What the waiters of a fetch that brought no usable answer get: the stale answer when
 * serve-stale has one (RFC 8767), else SERVFAIL; an upstream REFUSED is remembered as a SERVFAIL.
 */
final class FailedFetch {
  private final Flights flights;
  private final StaleAnswers stale;
  private final LongSupplier clock;
  private final FailureLog failures;

  /**
   * @param clock epoch milliseconds
   * @param failures where a failure that cannot be remembered is logged
   */
  FailedFetch(Flights flights, StaleAnswers stale, LongSupplier clock, FailureLog failures) {
    this.flights = flights;
    this.stale = stale;
    this.clock = clock;
    this.failures = failures;
  }

  /**
   * No usable answer came for {@code key}: the stale answer if serve-stale has one; else SERVFAIL
   * saying {@code why}, and an upstream REFUSED is remembered as a SERVFAIL for servfail_ttl.
   *
   * @param nameFailed an upstream answered, and it is this name that fails there (SERVFAIL,
   *     REFUSED, an answer that cannot be made valid); false when no upstream answered
   */
  void answer(CacheKey key, Profile profile, ExtendedError why, boolean nameFailed) {
    if (serveStale(key, profile, nameFailed)) {
      return;
    }
    if (why == ExtendedError.UPSTREAM_REFUSED) {
      remember(key, profile, flights.get(key));
    }
    flights.servfailAll(key, why);
  }

  /** Stores a SERVFAIL for {@code key} for servfail_ttl, so repeats do not go upstream again. */
  private void remember(CacheKey key, Profile profile, Flight flight) {
    if (flight == null || flight.waiters.isEmpty()) {
      return;
    }
    try {
      CacheFill.rememberFailure(profile, key, flight.waiters.get(0).query(), clock);
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
  boolean serveStale(CacheKey key, Profile profile, boolean nameFailed) {
    Flight flight = flights.get(key);
    long now = clock.getAsLong();
    CachedAnswer expired = flight.stale != null ? flight.stale : stale.find(key, profile, now);
    if (expired == null) {
      return false;
    }
    if (nameFailed) {
      stale.failed(key, now);
    }
    flights.staleAll(key, expired, profile);
    return true;
  }
}
