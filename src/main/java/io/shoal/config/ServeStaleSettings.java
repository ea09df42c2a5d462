package io.shoal.config;

import java.time.Duration;

/**
 * Serving expired answers when the upstreams fail (RFC 8767), {@code shoal.serve_stale}.
 *
 * @param maxStale how long past its expiry an answer may still be served
 * @param clientTimeout how long a client waits for the upstream before it gets the stale answer
 *     (the fetch goes on and refreshes the cache)
 */
public record ServeStaleSettings(boolean enabled, Duration maxStale, Duration clientTimeout) {
  /** Serve-stale off. */
  public static final ServeStaleSettings OFF = new ServeStaleSettings(false, Duration.ZERO, Duration.ZERO);
}
