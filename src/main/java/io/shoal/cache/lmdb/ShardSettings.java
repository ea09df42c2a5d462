package io.shoal.cache.lmdb;

import io.shoal.cache.WhenFull;
import java.nio.file.Path;

/**
 * What one shard of an LMDB cache is: its cache's name (a metric label), its index, its own
 * environment directory, how it syncs, its map size, its share of max_entries and its share of
 * hot_entries (answers held decoded in heap, {@link HotAnswers}) and the cache-wide map they are
 * held in.
 */
record ShardSettings(
    String cache, int shard, Path directory, SyncMode sync, long mapSize, WhenFull whenFull, long capacity,
    java.time.Duration commitWindow, long hotEntries, HotIndex hotIndex) {}
