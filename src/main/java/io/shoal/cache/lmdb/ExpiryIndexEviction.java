package io.shoal.cache.lmdb;

import static java.nio.ByteOrder.BIG_ENDIAN;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import java.util.Arrays;
import org.lmdbjava.Cursor;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.Txn;

/**
 * {@code when_full = evict_one}: removes the entry that expires soonest, found exactly through
 * the {@code expiry} index, and any already expired entries right behind it.
 */
final class ExpiryIndexEviction implements EvictionPolicy {
  /** Beyond the victim, expired entries at the head of the index removed in the same go. */
  private static final int EXPIRED_SWEEP = 16;

  private final ShardDatabases databases;
  /** Should the index ever be empty while answers are not. */
  private final SampledEviction fallback;
  // Writer-side buffers: only the shard's actor writes, never two messages at once.
  private final ByteBuffer indexKey = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY + 8);
  private final ByteBuffer victimKey = ByteBuffer.allocateDirect(AnswerCodec.KEY_CAPACITY);
  private final ByteBuffer noValue = ByteBuffer.allocateDirect(0);
  /**
   * One cursor on the index for the whole write transaction: under churn every fill evicts, and
   * opening a cursor per eviction (a JNI call and native key/value buffers each time) cost more
   * than the eviction's own reads. Closed by {@link #ending} before the transaction ends.
   */
  private Cursor<ByteBuffer> cursor;
  private Txn<ByteBuffer> cursorTxn;

  ExpiryIndexEviction(ShardDatabases databases, SampledEviction fallback) {
    this.databases = databases;
    this.fallback = fallback;
  }

  /** Rebuilds the index when it is out of step with the answers (the cache ran in sample mode before). */
  @Override
  public void reconcile(Txn<ByteBuffer> txn) {
    if (databases.expiry().stat(txn).entries == databases.answers().stat(txn).entries) {
      return;
    }
    databases.expiry().drop(txn);
    try (CursorIterable<ByteBuffer> all = databases.answers().iterate(txn)) {
      for (CursorIterable.KeyVal<ByteBuffer> kv : all) {
        stored(txn, AnswerCodec.bytes(kv.key()), AnswerCodec.expiresAt(kv.val()), -1);
      }
    }
  }

  @Override
  public void stored(Txn<ByteBuffer> txn, byte[] key, long expiresAt, long replacedExpiry) {
    if (replacedExpiry >= 0) {
      databases.expiry().delete(txn, AnswerCodec.indexKey(indexKey, replacedExpiry, key));
    }
    databases.expiry().put(txn, AnswerCodec.indexKey(indexKey, expiresAt, key), noValue);
  }

  @Override
  public int evict(Txn<ByteBuffer> txn, long nowMillis, Consumer<byte[]> removedKeys) {
    int removed = 0;
    Cursor<ByteBuffer> c = cursor(txn);
    while (removed < 1 + EXPIRED_SWEEP && c.first()) {
      ByteBuffer k = c.key().order(BIG_ENDIAN);
      int base = k.position();
      long expiresAt = k.getLong(base);
      if (removed > 0 && expiresAt > nowMillis) {
        break;
      }
      victimKey.clear();
      k.position(base + 8);
      victimKey.put(k).flip();
      c.delete();
      databases.answers().delete(txn, victimKey);
      removedKeys.accept(AnswerCodec.bytes(victimKey));
      removed++;
    }
    return removed > 0 ? removed : fallback.evict(txn, nowMillis, removedKeys);
  }

  @Override
  public long[] soonest(Txn<ByteBuffer> txn, int depth) {
    long[] soonest = new long[depth];
    int n = 0;
    Cursor<ByteBuffer> c = cursor(txn);
    for (boolean more = c.first(); more && n < depth; more = c.next()) {
      soonest[n++] = AnswerCodec.expiresAt(c.key());
    }
    return n == depth ? soonest : Arrays.copyOf(soonest, n);
  }

  @Override
  public void ending() {
    if (cursor != null) {
      Cursor<ByteBuffer> c = cursor;
      cursor = null;
      cursorTxn = null;
      c.close();
    }
  }

  /** This transaction's cursor on the index, opened on first use. */
  private Cursor<ByteBuffer> cursor(Txn<ByteBuffer> txn) {
    if (cursor == null || cursorTxn != txn) {
      // A cursor left from a transaction that ended without ending() is not closed: LMDB freed
      // it with its write transaction, and closing it now would touch freed memory.
      cursor = databases.expiry().openCursor(txn);
      cursorTxn = txn;
    }
    return cursor;
  }
}
