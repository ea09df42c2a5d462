package io.shoal.config;

import io.shoal.cache.CacheSettings;
import io.shoal.cache.WhenFull;
import io.shoal.cache.lmdb.LmdbSettings;
import io.shoal.cache.lmdb.SyncMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads {@code shoal.caches}: each cache's settings, checked; and, over all of them, that each
 * LMDB cache has a directory of its own and that their maps fit in the address space left.
 */
final class CachesSection {
  private static final Duration DAY = Duration.ofDays(1);
  private static final Duration WEEK = Duration.ofDays(7);

  private CachesSection() {}

  /**
   * The caches of section {@code cs}, by name, in the order given.
   *
   * @param addressSpaceLeft virtual memory the LMDB maps may use at most half of
   */
  static Map<String, CacheSettings> read(Section cs, long addressSpaceLeft) {
    Map<String, CacheSettings> caches = new LinkedHashMap<>();
    for (String name : cs.children()) {
      caches.put(name, cache(cs.section(name), name));
    }
    if (caches.isEmpty()) {
      throw new InvalidConfigException("shoal.caches", "at least one cache is needed");
    }
    checkDistinctLmdbPaths(caches);
    checkLmdbMapsFit(caches, addressSpaceLeft);
    return caches;
  }

  private static CacheSettings cache(Section s, String name) {
    s.allowOnly("backend", "max_entries", "when_full", "min_ttl", "max_ttl", "negative_ttl", "servfail_ttl", "lmdb");
    CacheSettings.Backend backend = s.choice("backend", CacheSettings.Backend.class, CacheSettings.Backend::configName);
    long maxEntries = s.integer("max_entries", 1, 1L << 31);
    WhenFull whenFull = s.choice("when_full", WhenFull.class, WhenFull::configName);
    Duration minTtl = s.duration("min_ttl", Duration.ZERO, DAY);
    Duration maxTtl = s.duration("max_ttl", Duration.ofSeconds(1), WEEK);
    if (minTtl.compareTo(maxTtl) > 0) {
      throw new InvalidConfigException(
          s.key("min_ttl"), "must not exceed max_ttl (" + Section.show(maxTtl) + "), got " + Section.show(minTtl));
    }
    Duration negativeTtl = s.duration("negative_ttl", Duration.ZERO, DAY);
    Duration servfailTtl = s.duration("servfail_ttl", Duration.ZERO, Duration.ofSeconds(30));
    Section l = s.section("lmdb");
    l.allowOnly("path", "shard_count", "sync", "sync_interval", "map_size", "commit_window", "hot_entries");
    LmdbSettings lmdb = new LmdbSettings(
        Path.of(l.string("path")),
        (int) l.integer("shard_count", 1, 256),
        l.choice("sync", SyncMode.class, SyncMode::configName),
        l.duration("sync_interval", Duration.ofMillis(10), Duration.ofMinutes(10)),
        l.bytes("map_size", 1L << 20, 1L << 40),
        l.duration("commit_window", Duration.ZERO, Duration.ofSeconds(1)),
        l.integer("hot_entries", 0, 100_000_000));
    return new CacheSettings(name, backend, maxEntries, whenFull, minTtl, maxTtl, negativeTtl, servfailTtl, lmdb);
  }

  private static void checkDistinctLmdbPaths(Map<String, CacheSettings> caches) {
    Map<Path, String> owners = new HashMap<>();
    for (CacheSettings c : caches.values()) {
      if (c.backend() != CacheSettings.Backend.LMDB) {
        continue;
      }
      String other = owners.putIfAbsent(c.lmdb().path().toAbsolutePath().normalize(), c.name());
      if (other != null) {
        throw new InvalidConfigException(
            "shoal.caches." + c.name() + ".lmdb.path", "same path as cache '" + other + "'; each LMDB cache needs its own directory");
      }
    }
  }

  /**
   * Every LMDB shard maps {@code map_size} of address space when it opens; maps that do not fit
   * fail one shard after another with ENOMEM while the node runs on without them. Refuse at
   * start instead, leaving half the space for the maps to grow into (a full map grows) and for
   * the JVM.
   */
  private static void checkLmdbMapsFit(Map<String, CacheSettings> caches, long addressSpaceLeft) {
    long total = 0;
    List<String> terms = new ArrayList<>();
    String firstKey = null;
    for (CacheSettings c : caches.values()) {
      if (c.backend() != CacheSettings.Backend.LMDB) {
        continue;
      }
      String key = "shoal.caches." + c.name() + ".lmdb";
      firstKey = firstKey == null ? key + ".map_size" : firstKey;
      long maps = Math.multiplyHigh(c.lmdb().mapSize(), c.lmdb().shardCount()) != 0
          ? Long.MAX_VALUE : c.lmdb().mapSize() * c.lmdb().shardCount();
      total = maps > Long.MAX_VALUE - total ? Long.MAX_VALUE : total + maps;
      terms.add(key + ".map_size (" + gib(c.lmdb().mapSize()) + ") x " + key + ".shard_count ("
          + c.lmdb().shardCount() + ")");
    }
    long budget = addressSpaceLeft / 2;
    if (firstKey != null && total > budget) {
      throw new InvalidConfigException(firstKey, String.join(" + ", terms) + " = " + gib(total)
          + " of address space, but this process has " + gib(addressSpaceLeft)
          + " left (ulimit -v or the CPU's user address space) and LMDB maps may take at most half of it ("
          + gib(budget) + "); lower map_size or shard_count");
    }
  }

  private static String gib(long bytes) {
    return bytes == Long.MAX_VALUE ? "more than 8 EiB" : String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
  }
}
