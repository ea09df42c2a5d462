package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Which hits send their name upstream again before it expires: a hit in the last tenth of its
 * answer's lifetime, for answers kept at least {@link #MIN_LIFETIME_MILLIS}, like Unbound's
 * {@code prefetch}. At most one prefetch per key is under way at a time: the reading threads
 * claim a key here, and the worker releases it when the fetch refreshed the answer (a failed one
 * keeps its claim until it lapses).
 */
public final class Prefetch {
  /** Shorter-lived answers are not prefetched: their last tenth is under a second. */
  static final long MIN_LIFETIME_MILLIS = 10_000;

  /** How long a claim holds without being released. */
  static final long CLAIM_MILLIS = 30_000;

  /** No prefetching. */
  public static final Prefetch OFF = new Prefetch(false, 0);

  private volatile boolean enabled;
  /** The node is stopping: no prefetch from now on, whatever a reload says. */
  private volatile boolean stopping;
  private final int maxUnderWay;
  /**
   * Claimed keys and when. A claim lapses after {@link #CLAIM_MILLIS}: one whose prefetch failed
   * is kept until then (a name whose upstreams are down is not prefetched on every hit), and one
   * whose worker restarted is taken over.
   */
  private final ConcurrentHashMap<CacheKey, Long> underWay = new ConcurrentHashMap<>();

  /** @param maxUnderWay prefetches in flight at once; more are skipped (they are an optimisation) */
  public Prefetch(boolean enabled, int maxUnderWay) {
    this.enabled = enabled;
    this.maxUnderWay = maxUnderWay;
  }

  /**
   * No prefetch from now on: the node is stopping, and in a cluster it is handing the answers it
   * owns over to the nodes that own them next. An answer it refreshed after its hand-over read the
   * old one would not go with it, and the next owner would fetch the name again seconds later.
   */
  void stop() {
    stopping = true;
  }

  /** Turns prefetching on or off (a reload); the claims under way stay until released or lapsed. */
  void enable(boolean on) {
    if (this != OFF) {
      enabled = on;
    }
  }

  /**
   * True when a hit on {@code answer} at {@code nowMillis} should refresh it and this caller got the
   * key; never for a key that {@code refreshedHere} says another node refreshes (in a cluster, only
   * a key's owner prefetches it: a node that holds an answer it no longer owns, such as one it
   * carried while the owner was away, serves it until it expires and then asks the owner, where a
   * prefetch would fetch it upstream beside the owner every TTL).
   */
  boolean claim(CacheKey key, CachedAnswer answer, long nowMillis, Predicate<CacheKey> refreshedHere) {
    if (!enabled || stopping) {
      return false;
    }
    long lifetime = answer.expiresAtMillis() - answer.storedAtMillis();
    long left = answer.expiresAtMillis() - nowMillis;
    if (lifetime < MIN_LIFETIME_MILLIS || left * 10 >= lifetime || underWay.size() >= maxUnderWay
        || !refreshedHere.test(key)) {
      return false;
    }
    Long claimed = underWay.putIfAbsent(key, nowMillis);
    return claimed == null || (nowMillis - claimed > CLAIM_MILLIS && underWay.replace(key, claimed, nowMillis));
  }

  /** The prefetch of {@code key} refreshed the answer: a later hit may prefetch again. */
  void release(CacheKey key) {
    underWay.remove(key);
  }
}
