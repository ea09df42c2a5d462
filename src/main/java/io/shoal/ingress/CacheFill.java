package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.profile.Profile;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import io.shoal.wire.ScannedAnswer;
import io.shoal.wire.WireException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Whether an answer from upstream (or from a key's owner) is kept, for how long, and how it goes
 * into the cache: what a profile's TTL rules keep is filled; what they keep not at all is passed
 * on with the upstream's own TTLs.
 */
final class CacheFill {
  private CacheFill() {}

  /** {@code scan} as {@code profile}'s TTL rules keep it from {@code now}; null when they keep it not at all. */
  static CachedAnswer kept(Profile profile, ScannedAnswer scan, long now) {
    long seconds = profile.ttlRules().cacheSeconds(scan);
    return seconds <= 0 ? null : profile.ttlRules().cachedAnswer(scan, now, seconds);
  }

  /** An answer nobody keeps, passed on with the upstream's own TTLs. */
  static CachedAnswer passedOn(ScannedAnswer scan, long now) {
    return CachedAnswer.of(scan, now, now + 0xFFFF_FFFFL * 1000);
  }

  /**
   * Fills {@code answer} in write-through: completes true once stored, or fails when the fill
   * does or when it takes longer than {@code wait}.
   */
  static CompletableFuture<Boolean> writeThrough(Profile profile, CacheKey key, CachedAnswer answer, Duration wait) {
    // A copy, so the bound times out this wait only, never the cache's own fill.
    return profile.cache().fill(key, answer).toCompletableFuture()
        .copy().orTimeout(wait.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Stores a SERVFAIL for {@code asked}'s key for servfail_ttl, so repeats do not go upstream again. */
  static void rememberFailure(Profile profile, CacheKey key, DnsQuery asked, LongSupplier clock) throws WireException {
    ScannedAnswer servfail = ScannedAnswer.fromUpstream(asked.servfailToCache());
    long seconds = profile.ttlRules().cacheSeconds(servfail);
    if (seconds > 0) {
      long now = clock.getAsLong();
      profile.cache().fillBehind(key, profile.ttlRules().cachedAnswer(servfail, now, seconds));
    }
  }
}
