package io.shoal.config;

import io.shoal.cache.lmdb.SyncMode;
import java.nio.file.Path;
import java.time.Duration;

/** The LMDB backend of one cache ({@code shoal.caches.<name>.lmdb}). */
public record LmdbSettings(
    Path path, int shardCount, SyncMode sync, Duration syncInterval, long mapSize, Duration commitWindow) {

  /** Settings that commit as soon as a shard's mailbox is drained (commit_window = 0). */
  public LmdbSettings(Path path, int shardCount, SyncMode sync, Duration syncInterval, long mapSize) {
    this(path, shardCount, sync, syncInterval, mapSize, Duration.ZERO);
  }
}
