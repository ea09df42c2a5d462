package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * A bounded in-heap copy of committed answers of one shard that readers read from LMDB, decoded:
 * a hit here costs a hash look-up instead of a JNI call into LMDB and a decode. It never holds
 * what the shard's environment no longer holds: the shard's store records every key its write
 * transaction overwrites, evicts or flushes, and after the commit replaces or removes those keys
 * here. Answers expire here at their own time, as in LMDB.
 *
 * <p>A hit does nothing but the look-up: no access order, no frequency count. Bookkeeping on
 * every hit (a library cache's reordering and frequency sketch) cost more than the LMDB call it
 * saves on one thread. The bound is kept at admission instead, first in first out: a key read
 * again and again is never admitted again while held, so a working set within the bound stays;
 * a larger one turns over.
 *
 * <p>Readers admit the answers they read from LMDB. A reader's snapshot may be older than a
 * commit that changed its key, so it admits only if no commit came between the snapshot and its
 * put; otherwise it takes back what it put. With {@code generation} the count of commits, read
 * before the snapshot: either the writer's update follows the reader's put (and replaces it), or
 * the writer's count increment precedes the reader's check (and the reader removes its put). The
 * full fences on both sides make that an either-or under the Java memory model.
 */
final class HotAnswers {
  /** What one committed write did to a key: {@code now} is its new answer, null when it was removed. */
  private record Change(CacheKey key, CachedAnswer now) {}

  private final ConcurrentHashMap<CacheKey, CachedAnswer> answers;
  /** Admitted keys in admission order, a ring of the bound's size; guarded by itself. */
  private final CacheKey[] admitted;
  private int next;
  /** Set when the store closes: from then on nothing is served from here. */
  private volatile boolean closed;
  /** Changes of the write transaction in progress; the writer's alone. */
  private final List<Change> changes = new ArrayList<>();

  /**
   * Holds up to {@code capacity} answers of this shard in {@code answers}, which the cache's other
   * shards share ({@link HotIndex}) and where this shard puts and removes only its own keys; 0
   * holds none (every read goes to LMDB).
   */
  HotAnswers(long capacity, ConcurrentHashMap<CacheKey, CachedAnswer> answers) {
    int bound = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(0, capacity));
    this.answers = answers;
    this.admitted = new CacheKey[bound];
  }

  /** The answer held for {@code key}, unexpired at {@code nowMillis}, or null. */
  CachedAnswer get(CacheKey key, long nowMillis) {
    CachedAnswer held = answers.get(key);
    if (held == null || closed || held.expiredAt(nowMillis)) {
      return null;
    }
    return held;
  }

  /**
   * Admits {@code answer}, read from a snapshot taken after {@code generation} commits, unless a
   * later commit may have changed its key ({@code commits} no longer says {@code generation}).
   */
  void admit(CacheKey key, CachedAnswer answer, long generation, LongSupplier commits) {
    if (admitted.length == 0 || closed) {
      return;
    }
    synchronized (admitted) {
      CacheKey out = admitted[next];
      if (out != null) {
        // Its answer may be a newer one than that admitted then: dropping it only costs a read.
        answers.remove(out);
      }
      admitted[next] = key;
      next = next + 1 == admitted.length ? 0 : next + 1;
      answers.put(key, answer);
    }
    VarHandle.fullFence();
    if (commits.getAsLong() != generation || closed) {
      answers.remove(key, answer);
    }
  }

  // ---- the writer (the shard's actor only) ----

  /** A write transaction starts: changes of one that aborted are forgotten. */
  void begin() {
    changes.clear();
  }

  /** The transaction stored {@code answer} under {@code key}. */
  void stored(CacheKey key, CachedAnswer answer) {
    if (admitted.length > 0) {
      changes.add(new Change(key, answer));
    }
  }

  /** The transaction removed the answer under the raw {@code key} (a flush). */
  void removed(byte[] key) {
    if (admitted.length > 0) {
      removed(CacheKey.ofBytes(key));
    }
  }

  /** The transaction removed the answer under {@code key} (an eviction). */
  void removed(CacheKey key) {
    if (admitted.length > 0) {
      changes.add(new Change(key, null));
    }
  }

  /**
   * The transaction committed and the commit count moved on: applies its changes in order. A
   * stored answer replaces one held (a key not held stays out: readers admit what they read).
   */
  void committed() {
    if (changes.isEmpty()) {
      return;
    }
    VarHandle.fullFence();
    for (Change c : changes) {
      if (c.now() == null) {
        answers.remove(c.key());
      } else {
        answers.replace(c.key(), c.now());
      }
    }
    changes.clear();
  }

  /**
   * The store closes: nothing is served or admitted from now on, and this shard's answers leave
   * the shared map (every one of them was admitted, so each is in the ring).
   */
  void close() {
    closed = true;
    synchronized (admitted) {
      for (CacheKey k : admitted) {
        if (k != null) {
          answers.remove(k);
        }
      }
    }
  }
}
