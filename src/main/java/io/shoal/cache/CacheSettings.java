package io.shoal.cache;

import io.shoal.cache.lmdb.LmdbSettings;
import java.time.Duration;

/** One named answer cache ({@code shoal.caches.<name>}). */
public record CacheSettings(
    String name,
    Backend backend,
    long maxEntries,
    WhenFull whenFull,
    Duration minTtl,
    Duration maxTtl,
    Duration negativeTtl,
    Duration servfailTtl,
    LmdbSettings lmdb) {

  /** Where the answers live. */
  public enum Backend {
    MEMORY("memory"),
    LMDB("lmdb");

    private final String configName;

    Backend(String configName) {
      this.configName = configName;
    }

    public String configName() {
      return configName;
    }
  }
}
