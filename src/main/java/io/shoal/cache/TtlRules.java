package io.shoal.cache;

import io.shoal.wire.Rcode;
import io.shoal.wire.ScannedAnswer;

/**
 * How long an upstream answer may be served from cache: the smallest TTL in it, clamped to
 * [min_ttl, max_ttl]; for NXDOMAIN and NODATA, min(SOA TTL, SOA minimum) capped by negative_ttl
 * (RFC 2308 section 5), and only with an SOA; SERVFAIL for servfail_ttl; never a truncated reply.
 * A positive answer keeps each record's own TTL within [min_ttl, max_ttl]; any other answer's
 * TTLs are capped by how long it is kept.
 */
public final class TtlRules {
  private final long minTtl;
  private final long maxTtl;
  private final long negativeTtl;
  private final long servfailTtl;

  public TtlRules(CacheSettings settings) {
    this(settings.minTtl().toSeconds(), settings.maxTtl().toSeconds(),
        settings.negativeTtl().toSeconds(), settings.servfailTtl().toSeconds());
  }

  public TtlRules(long minTtl, long maxTtl, long negativeTtl, long servfailTtl) {
    this.minTtl = minTtl;
    this.maxTtl = maxTtl;
    this.negativeTtl = negativeTtl;
    this.servfailTtl = servfailTtl;
  }

  /** Seconds to cache {@code answer}; 0 means do not cache it. */
  public long cacheSeconds(ScannedAnswer answer) {
    if (answer.truncated()) {
      return 0;
    }
    if (answer.rcode() == Rcode.SERVFAIL) {
      return servfailTtl;
    }
    if (answer.negative()) {
      if (answer.soaTtl() < 0) {
        return 0;
      }
      long ttl = Math.min(answer.soaTtl(), answer.soaMinimum());
      return Math.min(Math.max(ttl, minTtl), negativeTtl);
    }
    if (answer.rcode() != Rcode.NOERROR) {
      return 0;
    }
    if (answer.minTtl() == 0 && minTtl == 0) {
      return 0;
    }
    return Math.min(Math.max(answer.minTtl(), minTtl), maxTtl);
  }

  /**
   * The entry to cache for {@code answer}, kept {@code seconds} (from {@link #cacheSeconds}) from
   * {@code nowMillis}. Each record keeps its own TTL and counts it down from there: a CNAME chain
   * of 3600, 1800 and 600 is served as such, and the entry goes with the smallest.
   */
  public CachedAnswer cachedAnswer(ScannedAnswer answer, long nowMillis, long seconds) {
    ScannedAnswer stored = ScannedAnswer.positive(answer.wire())
        ? answer.withTtlsWithin(minTtl, maxTtl)
        : answer.withTtlsWithin(0, seconds);
    return CachedAnswer.of(stored, nowMillis, nowMillis + seconds * 1000);
  }
}
