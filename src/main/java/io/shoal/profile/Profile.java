package io.shoal.profile;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.TtlRules;
import io.shoal.metrics.CacheMetrics;
import io.shoal.upstream.Upstream;

/** A lookup profile, resolved: the cache and upstream group that serve its names. */
public record Profile(
    String name,
    AnswerCache cache,
    CacheMetrics cacheMetrics,
    TtlRules ttlRules,
    Upstream upstream) {}
