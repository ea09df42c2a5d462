package io.shoal.cache.lmdb;

/** How an LMDB cache shard makes its commits durable. */
public enum SyncMode {
  /** fsync data and meta page on every commit (LMDB's default). */
  FULL("full"),
  /** MDB_NOMETASYNC: fsync data on commit, the meta page at the next commit. */
  NO_META("no_meta"),
  /** MDB_NOSYNC plus a forced environment sync every sync_interval. */
  PERIODIC("periodic"),
  /** MDB_NOSYNC: the operating system writes back when it likes. */
  NONE("none");

  private final String configName;

  SyncMode(String configName) {
    this.configName = configName;
  }

  public String configName() {
    return configName;
  }
}
