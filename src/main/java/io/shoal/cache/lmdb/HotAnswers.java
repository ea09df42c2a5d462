package io.shoal.cache.lmdb;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * A bounded in-heap copy of one shard's most read committed answers, decoded: a hit here costs
 * a hash look-up instead of a JNI call into LMDB and a decode. It never holds what the shard's
 * environment no longer holds: the shard's store records every key its write transaction
 * overwrites, evicts or flushes, and after the commit replaces or removes those keys here.
 * Answers expire here at their own time, as in LMDB.
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
  record Change(CacheKey key, CachedAnswer now) {}

  /** Null when the overlay is off (hot_entries = 0): every read goes to LMDB. */
  private final Cache<CacheKey, CachedAnswer> answers;
  /** Set when the store closes: from then on nothing is served from here. */
  private volatile boolean closed;
  /** Changes of the write transaction in progress; the writer's alone. */
  private final List<Change> changes = new ArrayList<>();

  HotAnswers(long capacity) {
    // Maintenance (eviction to the bound) runs on the calling thread, never the common pool.
    this.answers = capacity <= 0 ? null : Caffeine.newBuilder()
        .maximumSize(capacity)
        .executor(Runnable::run)
        .build();
  }

  /** The answer held for {@code key}, unexpired at {@code nowMillis}, or null. */
  CachedAnswer get(CacheKey key, long nowMillis) {
    if (answers == null) {
      return null;
    }
    CachedAnswer held = answers.getIfPresent(key);
    if (held == null || closed) {
      return null;
    }
    return held.expiredAt(nowMillis) ? null : held;
  }

  /**
   * Admits {@code answer}, read from a snapshot taken after {@code generation} commits, unless a
   * later commit may have changed its key ({@code commits} no longer says {@code generation}).
   */
  void admit(CacheKey key, CachedAnswer answer, long generation, LongSupplier commits) {
    if (answers == null || closed) {
      return;
    }
    answers.put(key, answer);
    VarHandle.fullFence();
    if (commits.getAsLong() != generation || closed) {
      answers.asMap().remove(key, answer);
    }
  }

  // ---- the writer (the shard's actor only) ----

  /** A write transaction starts: changes of one that aborted are forgotten. */
  void begin() {
    changes.clear();
  }

  /** The transaction stored {@code answer} under {@code key}. */
  void stored(CacheKey key, CachedAnswer answer) {
    if (answers != null) {
      changes.add(new Change(key, answer));
    }
  }

  /** The transaction removed the answer under the raw {@code key} (eviction or flush). */
  void removed(byte[] key) {
    if (answers != null) {
      changes.add(new Change(CacheKey.ofBytes(key), null));
    }
  }

  /**
   * The transaction committed and the commit count moved on: applies its changes in order. A
   * stored answer replaces one held (a key not held stays out: readers admit what they read).
   */
  void committed() {
    if (answers == null || changes.isEmpty()) {
      return;
    }
    VarHandle.fullFence();
    for (Change c : changes) {
      if (c.now() == null) {
        answers.invalidate(c.key());
      } else {
        answers.asMap().replace(c.key(), c.now());
      }
    }
    changes.clear();
  }

  /** The store closes: nothing is served or admitted from now on. */
  void close() {
    closed = true;
    if (answers != null) {
      answers.invalidateAll();
    }
  }
}
