package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.Txn;

/**
 * {@code when_full = evict_one}: removes the entry that expires soonest, and any already expired
 * entries right behind it. The shard's expiry order lives in the heap, not in LMDB: it is built
 * from the {@code answers} database by one scan when the shard opens, and kept by the shard's
 * writer from then on (nothing else writes a shard a node holds). An LMDB index cost each fill
 * four B-tree operations through JNI (a put, and under churn the victim's look-up and delete
 * and the index's first entry) on top of the answer's own.
 *
 * <p>The answers a transaction stores and removes are written to LMDB only when it is about to
 * commit, and only as far as they change what the transaction started with: an answer stored and
 * evicted again within one transaction (under churn a commit window can fill a shard more than
 * once over) costs LMDB nothing. What the transaction commits is the same as if every step had
 * gone to LMDB at once. When the transaction aborts instead, the order in the heap goes back to
 * what LMDB holds.
 */
final class ExpiryInHeap implements EvictionPolicy {
  /** Beyond the victim, expired entries at the head of the order removed in the same go. */
  private static final int EXPIRED_SWEEP = 16;
  /** The shortest key {@link CacheKey} takes: the root name, type, class and flags. */
  private static final int MIN_KEY = 6;

  /** An answer's place in the order: soonest expiry first, then the key's bytes as LMDB sorts them. */
  private record Slot(long expiresAt, CacheKey key) {}

  private static final Comparator<Slot> SOONEST = Comparator.comparingLong(Slot::expiresAt)
      .thenComparing((a, b) -> Arrays.compareUnsigned(a.key().bytes(), b.key().bytes()));
  /** A key that was not stored when the transaction began. */
  private static final Slot ABSENT = new Slot(-1, null);

  private final ShardDatabases databases;
  private final AnswerWrites writes;
  private final HashMap<CacheKey, Slot> byKey = new HashMap<>();
  private final TreeSet<Slot> order = new TreeSet<>(SOONEST);
  /** Each key this transaction touched, with its slot when it began (ABSENT: none); to undo an abort. */
  private final HashMap<CacheKey, Slot> before = new HashMap<>();
  /** What the transaction leaves under each key it touched and LMDB does not hold yet: an answer, or null to delete. */
  private final LinkedHashMap<CacheKey, CachedAnswer> pending = new LinkedHashMap<>();

  ExpiryInHeap(ShardDatabases databases) {
    this.databases = databases;
    this.writes = new AnswerWrites(databases.answers());
  }

  /**
   * Builds the order from the answers. An expiry index that an earlier shoal kept in LMDB is
   * dropped: nothing would keep it in step from now on. An entry too short to be an answer
   * (damage: {@code shoal cache check} names it) is deleted, as it could never be served.
   */
  @Override
  public void reconcile(Txn<ByteBuffer> txn) {
    databases.dropExpiryIndex(txn);
    byKey.clear();
    order.clear();
    List<byte[]> damaged = new ArrayList<>();
    try (CursorIterable<ByteBuffer> all = databases.answers().iterate(txn)) {
      for (CursorIterable.KeyVal<ByteBuffer> kv : all) {
        byte[] key = AnswerCodec.bytes(kv.key());
        if (key.length < MIN_KEY || kv.val().remaining() < 8) {
          damaged.add(key);
          continue;
        }
        Slot slot = new Slot(AnswerCodec.expiresAt(kv.val()), CacheKey.ofBytes(key));
        byKey.put(slot.key(), slot);
        order.add(slot);
      }
    }
    for (byte[] key : damaged) {
      writes.delete(txn, key);
    }
  }

  @Override
  public long expiryOf(Txn<ByteBuffer> txn, CacheKey key) {
    Slot slot = byKey.get(key);
    return slot == null ? -1 : slot.expiresAt();
  }

  @Override
  public void store(Txn<ByteBuffer> txn, CacheKey key, CachedAnswer answer) {
    Slot old = touch(key);
    if (old != null) {
      order.remove(old);
    }
    Slot slot = new Slot(answer.expiresAtMillis(), key);
    byKey.put(key, slot);
    order.add(slot);
    pending.put(key, answer);
  }

  @Override
  public void removed(byte[] key) {
    CacheKey k = CacheKey.ofBytes(key);
    Slot old = touch(k);
    if (old != null) {
      order.remove(old);
      byKey.remove(k);
    }
    // The caller deleted it from LMDB itself.
    pending.remove(k);
  }

  @Override
  public int evict(Txn<ByteBuffer> txn, long nowMillis, Consumer<CacheKey> removedKeys) {
    int removed = 0;
    while (removed < 1 + EXPIRED_SWEEP && !order.isEmpty()) {
      Slot head = order.first();
      if (removed > 0 && head.expiresAt() > nowMillis) {
        break;
      }
      CacheKey key = head.key();
      touch(key);
      order.pollFirst();
      byKey.remove(key);
      if (before.get(key) == ABSENT) {
        pending.remove(key);
      } else {
        pending.put(key, null);
      }
      removedKeys.accept(key);
      removed++;
    }
    return removed;
  }

  @Override
  public long[] soonest(Txn<ByteBuffer> txn, int depth) {
    long[] soonest = new long[Math.min(depth, order.size())];
    Iterator<Slot> it = order.iterator();
    for (int i = 0; i < soonest.length; i++) {
      soonest[i] = it.next().expiresAt();
    }
    return soonest;
  }

  /** Writes the transaction's net changes into LMDB: its new answers, and deletes of what it removed. */
  @Override
  public void flush(Txn<ByteBuffer> txn) {
    for (Map.Entry<CacheKey, CachedAnswer> change : pending.entrySet()) {
      if (change.getValue() == null) {
        writes.delete(txn, change.getKey().bytes());
      } else {
        writes.put(txn, change.getKey().bytes(), change.getValue());
      }
    }
    pending.clear();
  }

  @Override
  public void committed() {
    before.clear();
  }

  /** The transaction ended without its commit: the order goes back to what LMDB holds. */
  @Override
  public void ending() {
    pending.clear();
    for (Map.Entry<CacheKey, Slot> was : before.entrySet()) {
      Slot now = byKey.remove(was.getKey());
      if (now != null) {
        order.remove(now);
      }
      if (was.getValue() != ABSENT) {
        byKey.put(was.getKey(), was.getValue());
        order.add(was.getValue());
      }
    }
    before.clear();
  }

  /** The key's current slot (null: none), noting what it was when the transaction began. */
  private Slot touch(CacheKey key) {
    Slot now = byKey.get(key);
    before.putIfAbsent(key, now == null ? ABSENT : now);
    return now;
  }
}
