package io.shoal.cache.lmdb;

import java.nio.file.Path;
import java.time.Duration;

/** The LMDB backend of one cache ({@code shoal.caches.<name>.lmdb}). */
public record LmdbSettings(
    Path path, int shardCount, SyncMode sync, Duration syncInterval, long mapSize, Duration commitWindow,
    long hotEntries) {}
