package io.shoal.cache.lmdb;

import java.nio.ByteBuffer;
import java.util.List;
import org.lmdbjava.Env;
import org.lmdbjava.LmdbException;
import org.lmdbjava.Txn;

/**
 * {@code shoal cache flush --path}: removes answers from a cache directory no node runs on, one
 * write transaction per shard. The caller has checked that every shard opened for writing.
 */
final class OfflineFlush {
  private OfflineFlush() {}

  /** Removes the wire-form {@code name}'s answers of {@code qtype} (0: every type); returns how many. */
  static int name(List<OfflineShards.Shard> shards, byte[] name, int qtype) throws CacheDirectoryException {
    int removed = 0;
    for (OfflineShards.Shard s : shards) {
      removed += write(s, txn -> s.databases().removeName(txn, name, qtype, key -> { }));
    }
    return removed;
  }

  /** Removes every answer; returns how many there were. The files stay, emptied. */
  static long all(List<OfflineShards.Shard> shards) throws CacheDirectoryException {
    long removed = 0;
    for (OfflineShards.Shard s : shards) {
      removed += write(s, txn -> {
        long n = s.databases().answers().stat(txn).entries;
        s.databases().answers().drop(txn);
        s.databases().expiry().drop(txn);
        return (int) Math.min(Integer.MAX_VALUE, n);
      });
    }
    return removed;
  }

  private interface ShardWrite {
    int apply(Txn<ByteBuffer> txn);
  }

  private static int write(OfflineShards.Shard s, ShardWrite work) throws CacheDirectoryException {
    for (int attempt = 0; ; attempt++) {
      try (Txn<ByteBuffer> txn = s.env().txnWrite()) {
        int n = work.apply(txn);
        txn.commit();
        return n;
      } catch (Env.MapFullException e) {
        // Deleting copies pages too; a map filled to the brim needs room to shrink.
        if (attempt >= 2) {
          throw new CacheDirectoryException(s.label() + ": map full even after growing it");
        }
        s.env().setMapSize(s.env().info().mapSize * 2);
      } catch (LmdbException e) {
        throw new CacheDirectoryException(s.label() + ": cannot write: " + e.getMessage());
      }
    }
  }
}
