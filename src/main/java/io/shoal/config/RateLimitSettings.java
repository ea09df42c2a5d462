package io.shoal.config;

/** Response rate limiting of UDP replies per client prefix ({@code shoal.rate_limit}). */
public record RateLimitSettings(int responsesPerSecond, int slip, boolean includeLoopback, int tableSize) {
  /** True when replies are limited at all ({@code responses_per_second > 0}). */
  public boolean enabled() {
    return responsesPerSecond > 0;
  }
}
