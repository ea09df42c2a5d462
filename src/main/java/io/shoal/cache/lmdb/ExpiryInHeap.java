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
import java.util.concurrent.ConcurrentHashMap;
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
 *
 * <p>The keys of the order are also what lets a reader answer a miss without reading LMDB
 * ({@link #mayHold}): every key LMDB holds is among them, but for those the running transaction
 * has evicted or removed. A key joins them when a transaction stores it, before the commit that
 * writes it (and before its fill settles, until which readers find the answer in the shard's
 * uncommitted ones), and leaves when it is evicted or removed, before the commit that deletes it;
 * an abort brings back what the transaction removed. A reader that asks in between misses a key
 * a moment early, as if after that commit; it never misses a key no transaction is taking out.
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
  /** The writer's alone to change; readers only ask it whether a key is there ({@link #mayHold}). */
  private final ConcurrentHashMap<CacheKey, Slot> byKey = new ConcurrentHashMap<>();
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

  /** Any thread: false when LMDB surely holds no answer under {@code key} (see the class comment). */
  @Override
  public boolean mayHold(CacheKey key) {
    return byKey.containsKey(key);
  }

  @Override
  public void store(Txn<ByteBuffer> txn, CacheKey key, CachedAnswer answer) {
    Slot slot = new Slot(answer.expiresAtMillis(), key);
    // Put before the old slot leaves the order: a reader must never find the key missing.
    Slot old = byKey.put(key, slot);
    noteBefore(key, old);
    if (old != null) {
      order.remove(old);
    }
    order.add(slot);
    pending.put(key, answer);
  }

  @Override
  public void removed(byte[] key) {
    CacheKey k = CacheKey.ofBytes(key);
    Slot old = byKey.remove(k);
    noteBefore(k, old);
    if (old != null) {
      order.remove(old);
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
      order.pollFirst();
      byKey.remove(key);
      if (before.putIfAbsent(key, head) == ABSENT) {
        // Stored by this transaction only: LMDB never held it, so nothing to delete there.
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
      // Replaced in one step where the key stays: LMDB still holds it.
      Slot now = was.getValue() == ABSENT ? byKey.remove(was.getKey()) : byKey.put(was.getKey(), was.getValue());
      if (now != null) {
        order.remove(now);
      }
      if (was.getValue() != ABSENT) {
        order.add(was.getValue());
      }
    }
    before.clear();
  }

  /** Notes {@code was} (null: none) as the key's slot when the transaction began, unless it touched the key before. */
  private void noteBefore(CacheKey key, Slot was) {
    before.putIfAbsent(key, was == null ? ABSENT : was);
  }
}
