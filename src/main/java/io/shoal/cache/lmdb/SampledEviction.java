package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.lmdbjava.Cursor;
import org.lmdbjava.GetOp;
import org.lmdbjava.Txn;

/**
 * {@code when_full = sample}: looks at {@link #SAMPLES} entries found by seeking to random keys
 * and removes the one that expires soonest, with any sampled entry already expired. No index to
 * maintain. LMDB cannot jump to the n-th key, so a random seek picks an entry with a probability
 * that grows with the key-space gap before it: close enough for an approximate policy.
 */
final class SampledEviction implements EvictionPolicy {
  /** Entries looked at per eviction, as the memory backend does. */
  static final int SAMPLES = 5;

  private final ShardDatabases databases;
  private final AnswerWrites writes;
  // Writer-side buffers: only the shard's actor writes, never two messages at once.
  private final ByteBuffer seekKey = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY);
  private final ByteBuffer victimKey = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY);
  private final ByteBuffer indexKey = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY + 8);

  SampledEviction(ShardDatabases databases) {
    this.databases = databases;
    this.writes = new AnswerWrites(databases.answers());
  }

  /** Stale index entries would linger if the mode changed back later: drop them. */
  @Override
  public void reconcile(Txn<ByteBuffer> txn) {
    databases.dropExpiryIndex(txn);
  }

  @Override
  public long expiryOf(Txn<ByteBuffer> txn, CacheKey key) {
    return writes.expiryOf(txn, key.bytes());
  }

  @Override
  public void store(Txn<ByteBuffer> txn, CacheKey key, CachedAnswer answer) {
    writes.put(txn, key.bytes(), answer);
  }

  @Override
  public void removed(byte[] key) {
    // Nothing kept beside LMDB.
  }

  @Override
  public int evict(Txn<ByteBuffer> txn, long nowMillis, Consumer<CacheKey> removedKeys) {
    List<byte[]> keys = new ArrayList<>(SAMPLES);
    List<Long> expiries = new ArrayList<>(SAMPLES);
    try (Cursor<ByteBuffer> c = databases.answers().openCursor(txn)) {
      if (!c.first()) {
        return 0;
      }
      int low = c.key().get(c.key().position()) & 0xFF;
      c.last();
      int high = c.key().get(c.key().position()) & 0xFF;
      ThreadLocalRandom rnd = ThreadLocalRandom.current();
      for (int i = 0; i < SAMPLES; i++) {
        seekKey.clear();
        // Keys start with the first label's length, then lower-case label bytes.
        seekKey.put((byte) rnd.nextInt(low, high + 1));
        for (int j = 0; j < 7; j++) {
          seekKey.put((byte) rnd.nextInt('-', 'z' + 1));
        }
        seekKey.flip();
        if (!c.get(seekKey, GetOp.MDB_SET_RANGE)) {
          c.first();
        }
        byte[] key = AnswerCodec.bytes(c.key());
        if (keys.stream().noneMatch(seen -> Arrays.equals(seen, key))) {
          keys.add(key);
          expiries.add(AnswerCodec.expiresAt(c.val()));
        }
      }
    }
    int soonest = 0;
    for (int i = 1; i < keys.size(); i++) {
      if (expiries.get(i) < expiries.get(soonest)) {
        soonest = i;
      }
    }
    int removed = 0;
    for (int i = 0; i < keys.size(); i++) {
      if (i == soonest || expiries.get(i) <= nowMillis) {
        databases.delete(txn, keys.get(i), expiries.get(i), victimKey, indexKey);
        removedKeys.accept(CacheKey.ofBytes(keys.get(i)));
        removed++;
      }
    }
    return removed;
  }

  @Override
  public long[] soonest(Txn<ByteBuffer> txn, int depth) {
    return null;
  }
}
