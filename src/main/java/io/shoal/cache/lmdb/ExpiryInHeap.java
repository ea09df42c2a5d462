package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.ExpiryOrder;
import io.shoal.wire.CacheKey;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
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

  /** What a key's answer is to LMDB at the transaction's commit: unchanged, put anew, deleted. */
  private enum Change { NONE, PUT, DELETE }

  /**
   * A key's place in the order (soonest expiry first, then the key's bytes as LMDB sorts them),
   * and what the running transaction did to it. One object per key, changed in place: a fill of
   * a key held moves it in the heap, no node is made or dropped.
   */
  private static final class Slot extends ExpiryOrder.Placed<Slot> {
    final CacheKey key;
    long expiresAt;
    /** Touched by the running transaction: the fields below say what it found and leaves. */
    boolean touched;
    /** Held (in LMDB and the order) when the transaction began, expiring then at {@code expiresBefore}. */
    boolean heldBefore;
    long expiresBefore;
    Change change = Change.NONE;
    CachedAnswer put;

    Slot(CacheKey key, long expiresAt) {
      this.key = key;
      this.expiresAt = expiresAt;
    }

    @Override
    public boolean before(Slot o) {
      return expiresAt != o.expiresAt
          ? expiresAt < o.expiresAt
          : Arrays.compareUnsigned(key.bytes(), o.key.bytes()) < 0;
    }

    boolean held() {
      return place() >= 0;
    }
  }

  private final ShardDatabases databases;
  private final AnswerWrites writes;
  /**
   * The held keys' slots. The writer's alone to change; readers only ask it whether a key is
   * there ({@link #mayHold}).
   */
  private final ConcurrentHashMap<CacheKey, Slot> byKey = new ConcurrentHashMap<>();
  private final ExpiryOrder<Slot> order = new ExpiryOrder<>(true);
  /**
   * The slots this transaction touched, held now or not (an evicted key's slot stays here, so a
   * fill of it later in the transaction still knows LMDB holds it): to write at the commit and to
   * undo at an abort.
   */
  private final HashMap<CacheKey, Slot> touched = new HashMap<>();

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
    touched.clear();
    List<byte[]> damaged = new ArrayList<>();
    try (CursorIterable<ByteBuffer> all = databases.answers().iterate(txn)) {
      for (CursorIterable.KeyVal<ByteBuffer> kv : all) {
        byte[] key = AnswerCodec.bytes(kv.key());
        if (key.length < MIN_KEY || kv.val().remaining() < 8) {
          damaged.add(key);
          continue;
        }
        Slot slot = new Slot(CacheKey.ofBytes(key), AnswerCodec.expiresAt(kv.val()));
        byKey.put(slot.key, slot);
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
    return slot == null ? -1 : slot.expiresAt;
  }

  /** Any thread: false when LMDB surely holds no answer under {@code key} (see the class comment). */
  @Override
  public boolean mayHold(CacheKey key) {
    return byKey.containsKey(key);
  }

  @Override
  public void store(Txn<ByteBuffer> txn, CacheKey key, CachedAnswer answer) {
    Slot slot = slotOf(key);
    if (slot == null) {
      slot = new Slot(key, answer.expiresAtMillis());
    }
    touch(slot);
    slot.change = Change.PUT;
    slot.put = answer;
    slot.expiresAt = answer.expiresAtMillis();
    if (slot.held()) {
      // Moved in place: a reader never finds the key missing.
      order.moved(slot);
    } else {
      order.add(slot);
      byKey.put(key, slot);
    }
  }

  @Override
  public void removed(byte[] key) {
    CacheKey k = CacheKey.ofBytes(key);
    Slot slot = slotOf(k);
    if (slot == null) {
      return;
    }
    touch(slot);
    if (slot.held()) {
      byKey.remove(k);
      order.remove(slot);
    }
    // The caller deleted it from LMDB itself.
    slot.change = Change.NONE;
    slot.put = null;
  }

  @Override
  public int evict(Txn<ByteBuffer> txn, long nowMillis, Consumer<CacheKey> removedKeys) {
    int removed = 0;
    while (removed < 1 + EXPIRED_SWEEP && order.size() > 0) {
      Slot head = order.first();
      if (removed > 0 && head.expiresAt > nowMillis) {
        break;
      }
      touch(head);
      order.remove(head);
      byKey.remove(head.key);
      // Stored by this transaction only: LMDB never held it, so nothing to delete there.
      head.change = head.heldBefore ? Change.DELETE : Change.NONE;
      head.put = null;
      removedKeys.accept(head.key);
      removed++;
    }
    return removed;
  }

  @Override
  public long[] soonest(Txn<ByteBuffer> txn, int depth) {
    if (depth >= order.size()) {
      // Every entry (the usual case: the depth is at least a commit's worth, a shard under churn
      // holds about that): their expiries sorted, no walk of the heap.
      long[] all = new long[order.size()];
      for (int i = 0; i < all.length; i++) {
        all[i] = order.get(i).expiresAt;
      }
      Arrays.sort(all);
      return all;
    }
    List<Slot> first = order.soonest(depth);
    long[] soonest = new long[first.size()];
    for (int i = 0; i < soonest.length; i++) {
      soonest[i] = first.get(i).expiresAt;
    }
    return soonest;
  }

  /** Writes the transaction's net changes into LMDB: its new answers, and deletes of what it removed. */
  @Override
  public void flush(Txn<ByteBuffer> txn) {
    for (Slot slot : touched.values()) {
      if (slot.change == Change.PUT) {
        writes.put(txn, slot.key.bytes(), slot.put);
      } else if (slot.change == Change.DELETE) {
        writes.delete(txn, slot.key.bytes());
      }
      slot.change = Change.NONE;
      slot.put = null;
    }
  }

  @Override
  public void committed() {
    for (Slot slot : touched.values()) {
      slot.touched = false;
    }
    touched.clear();
  }

  /** The transaction ended without its commit: the order goes back to what LMDB holds. */
  @Override
  public void ending() {
    for (Slot slot : touched.values()) {
      slot.touched = false;
      slot.change = Change.NONE;
      slot.put = null;
      if (slot.heldBefore) {
        // Back in place where the key stays: LMDB still holds it.
        slot.expiresAt = slot.expiresBefore;
        if (slot.held()) {
          order.moved(slot);
        } else {
          order.add(slot);
          byKey.put(slot.key, slot);
        }
      } else if (slot.held()) {
        byKey.remove(slot.key);
        order.remove(slot);
      }
    }
    touched.clear();
  }

  /** The key's slot: held, or touched by this transaction (evicted or removed in it); null when neither. */
  private Slot slotOf(CacheKey key) {
    Slot slot = byKey.get(key);
    return slot != null ? slot : touched.get(key);
  }

  /** Notes what the transaction found under {@code slot}'s key, unless it touched the key before. */
  private void touch(Slot slot) {
    if (!slot.touched) {
      slot.touched = true;
      slot.heldBefore = slot.held();
      slot.expiresBefore = slot.expiresAt;
      touched.put(slot.key, slot);
    }
  }
}
