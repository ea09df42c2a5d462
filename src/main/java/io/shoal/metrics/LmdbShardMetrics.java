package io.shoal.metrics;

import kamon.Kamon;
import kamon.metric.Counter;
import kamon.metric.Histogram;
import kamon.metric.Timer;
import kamon.tag.TagSet;

/** The instruments of one shard of an LMDB answer cache, labelled with the cache and the shard. */
public final class LmdbShardMetrics {
  private final Histogram batchSize;
  private final Timer commit;
  private final Timer sync;
  private final Counter mapGrown;
  private final Counter damaged;

  LmdbShardMetrics(String cache, int shard) {
    TagSet tags = TagSet.of("cache", cache).withTag("shard", String.valueOf(shard));
    this.batchSize = Kamon.histogram("shoal.lmdb.commit.batch.size", "Fills committed per LMDB write transaction")
        .withTags(tags);
    var durations = Kamon.timer("shoal.lmdb.sync", "LMDB commit and forced-sync durations");
    this.commit = durations.withTags(tags.withTag("kind", "commit"));
    this.sync = durations.withTags(tags.withTag("kind", "sync"));
    this.mapGrown = Kamon.counter("shoal.lmdb.map.grown", "LMDB maps grown because eviction could not make room")
        .withTags(tags);
    this.damaged = Kamon.counter("shoal.lmdb.damaged.shards",
        "LMDB shard files found damaged at open and set aside; the shard started empty").withTags(tags);
  }

  /** One write transaction committed {@code fills} answers; its commit (and fsync) took {@code nanos}. */
  public void committed(int fills, long nanos) {
    batchSize.record(fills);
    commit.record(nanos);
  }

  public void syncNanos(long nanos) {
    sync.record(nanos);
  }

  public void mapGrown() {
    mapGrown.increment();
  }

  /** The shard's data file failed its check before open and was moved aside. */
  public void damaged() {
    damaged.increment();
  }
}
