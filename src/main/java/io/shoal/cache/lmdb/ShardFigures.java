package io.shoal.cache.lmdb;

import static java.nio.ByteOrder.BIG_ENDIAN;

import java.nio.ByteBuffer;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.EnvInfo;
import org.lmdbjava.LmdbException;
import org.lmdbjava.Txn;

/** The figures {@code shoal cache stat} prints for one shard, read from one read snapshot. */
final class ShardFigures {
  private ShardFigures() {}

  /** {@code shard}'s entries, index size, expired answers at {@code nowMillis} and map use; or why it could not be read. */
  static CacheDirectory.ShardStat read(OfflineShards.Shard shard, long nowMillis) {
    if (shard.error() != null) {
      return unreadable(shard, shard.error());
    }
    try {
      EnvInfo info = shard.env().info();
      long pageSize = shard.env().stat().pageSize;
      long entries;
      long indexed;
      long expired = 0;
      try (Txn<ByteBuffer> txn = shard.env().txnRead()) {
        entries = shard.databases().answers().stat(txn).entries;
        indexed = shard.databases().expiry().stat(txn).entries;
        try (CursorIterable<ByteBuffer> all = shard.databases().answers().iterate(txn)) {
          for (CursorIterable.KeyVal<ByteBuffer> kv : all) {
            ByteBuffer v = kv.val();
            if (v.remaining() >= 8 && v.order(BIG_ENDIAN).getLong(v.position()) <= nowMillis) {
              expired++;
            }
          }
        }
      }
      return new CacheDirectory.ShardStat(shard.index(), shard.directory(), null, entries, indexed, expired,
          info.mapSize, (info.lastPageNumber + 1) * pageSize, info.lastTransactionId, info.numReaders);
    } catch (LmdbException e) {
      return unreadable(shard, "cannot read: " + e.getMessage());
    }
  }

  private static CacheDirectory.ShardStat unreadable(OfflineShards.Shard shard, String error) {
    return new CacheDirectory.ShardStat(shard.index(), shard.directory(), error, 0, 0, 0, 0, 0, 0, 0);
  }
}
