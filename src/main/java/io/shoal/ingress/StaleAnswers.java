package io.shoal.ingress;

import io.shoal.cache.CachedAnswer;
import io.shoal.config.ServeStaleSettings;
import io.shoal.profile.Profile;
import io.shoal.wire.CacheKey;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Serve-stale (RFC 8767) for one worker: which expired answer may still be served, and which keys
 * are in their failure-recheck window (their upstreams failed less than {@link
 * #FAILURE_RECHECK_MILLIS} ago, so their stale answer is served without asking again). Used by
 * the worker's thread only.
 */
final class StaleAnswers {
  /** How long after a failure a key's stale answer is served without asking the upstreams (RFC 8767's failure recheck). */
  static final long FAILURE_RECHECK_MILLIS = 30_000;

  /** Keys in their failure-recheck window at most remembered (the oldest go first). */
  private static final int RECHECK_KEYS = 10_000;

  private ServeStaleSettings settings;
  /** False while the node's caches are held back (a cluster node's flush catch-up): nothing is read. */
  private final BooleanSupplier servable;
  private final Map<CacheKey, Long> recheckAfter = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<CacheKey, Long> eldest) {
      return size() > RECHECK_KEYS;
    }
  };

  StaleAnswers(ServeStaleSettings settings) {
    this(settings, () -> true);
  }

  /** @param servable whether the caches may be read now (see {@link io.shoal.cluster.NodeStatus#cachesServable}) */
  StaleAnswers(ServeStaleSettings settings, BooleanSupplier servable) {
    this.settings = settings;
    this.servable = servable;
  }

  /** Applies a reload's settings; the keys in their failure-recheck window stay there. */
  void settings(ServeStaleSettings next) {
    settings = next;
  }

  /** How long a client waits for the upstream before it gets the stale answer. */
  Duration clientTimeout() {
    return settings.clientTimeout();
  }

  /**
   * The answer for {@code key} that expired less than max_stale before {@code now} and may be
   * served stale, or null (serve-stale off, none, or a remembered failure).
   */
  CachedAnswer find(CacheKey key, Profile profile, long now) {
    return servable(read(key, profile, now));
  }

  /**
   * One cache read for {@code key} that serves both uses: the entry unexpired at {@code now}, or
   * (serve-stale on) expired less than max_stale before it; null when neither, or while the caches
   * are held back.
   */
  CachedAnswer read(CacheKey key, Profile profile, long now) {
    if (!servable.getAsBoolean()) {
      return null;
    }
    // An entry not expired at now - max_stale expired at most max_stale ago.
    return profile.cache().get(key, settings.enabled() ? now - settings.maxStale().toMillis() : now);
  }

  /** {@code answer} (from {@link #read}) when serve-stale may serve it, else null. */
  CachedAnswer servable(CachedAnswer answer) {
    return settings.enabled() && answer != null && answer.servableStale() ? answer : null;
  }

  /** The upstreams failed for {@code key} at {@code now} and its stale answer went out. */
  void failed(CacheKey key, long now) {
    recheckAfter.put(key, now + FAILURE_RECHECK_MILLIS);
  }

  /** True while {@code key} is in its failure-recheck window. */
  boolean recheckPending(CacheKey key, long now) {
    Long until = recheckAfter.get(key);
    if (until == null) {
      return false;
    }
    if (now < until) {
      return true;
    }
    recheckAfter.remove(key);
    return false;
  }
}
