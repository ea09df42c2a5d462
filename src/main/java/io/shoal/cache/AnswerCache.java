package io.shoal.cache;

import io.shoal.wire.CacheKey;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;

/**
 * An answer cache. Reads are direct and thread-safe (no actor hop on the hit path); fills may be
 * asynchronous, and the returned stage completes when the answer is durable in the backend's own
 * sense (in memory: at once; in LMDB: when the shard committed it).
 */
public interface AnswerCache extends AutoCloseable {

  /** The cache's configured name, used as a metric label. */
  String name();

  /** The answer for {@code key}, or null when absent or expired at {@code nowMillis}. */
  CachedAnswer get(CacheKey key, long nowMillis);

  /**
   * Reads, and does nothing with, the memory a {@link #get} of a key with hash {@code keyHash}
   * reads first: its table slot, the entry there and its answer's wire bytes. A reader that has
   * a batch of queries calls it for each before it answers any, so the cache misses of the
   * batch's look-ups overlap instead of coming one after another. Returns a value to be
   * discarded (so the reads are not optimised away); a backend with nothing to warm returns 0.
   */
  default int warm(int keyHash) {
    return 0;
  }

  /**
   * Whether this cache evicted {@code key} lately to make room (so its name is one clients ask
   * again, not a made-up one); false where the backend does not keep track.
   */
  default boolean evictedLately(CacheKey key) {
    return false;
  }

  /**
   * Stores or replaces the answer for {@code key}, evicting by the cache's when_full rule. The
   * caller waits on the stage (write-through), so the backend makes the answer durable promptly.
   */
  CompletionStage<Boolean> fill(CacheKey key, CachedAnswer answer);

  /**
   * Stores like {@link #fill} for a caller that does not wait for durability (write-behind): the
   * answer is served at once, and a backend may gather such answers for a while before making
   * them durable (LMDB's {@code commit_window}).
   */
  default void fillBehind(CacheKey key, CachedAnswer answer) {
    fill(key, answer);
  }

  /** An answer for {@link #loadIntoRoom}: stored under {@code key}. */
  record Keyed(CacheKey key, CachedAnswer answer) {}

  /** What {@link #loadIntoRoom} did with one answer. */
  enum Loaded {
    /** Stored: into free room, or in place of an expired answer. */
    STORED,
    /** The cache holds a live answer for the key already; that one stays. */
    ALREADY_CACHED,
    /** Not stored: the cache (for LMDB, the key's shard) is full of live answers. */
    NO_ROOM,
    /** Not stored: the backend could not store it (its shard is down or closing). */
    NOT_STORED
  }

  /**
   * Stores {@code answers} for {@code shoal cache load}, one result each in order, without
   * ever taking a live answer's place: an answer goes into free room under max_entries (and, for
   * a negative answer, under its share), or in place of an answer that expired by {@code
   * nowMillis}; a key whose live answer is held keeps it. Unlike {@link #fill}, nothing is
   * evicted that has not expired, so a load can never push out what clients are being served. A
   * backend that does not implement it stores nothing and says so.
   */
  default CompletionStage<Loaded[]> loadIntoRoom(List<Keyed> answers, long nowMillis) {
    Loaded[] none = new Loaded[answers.size()];
    java.util.Arrays.fill(none, Loaded.NOT_STORED);
    return CompletableFuture.completedFuture(none);
  }

  /**
   * Removes the answers whose name equals {@code name} (any case, class and flags), of type
   * {@code qtype}, or of every type when {@code qtype} is 0; completes with how many.
   */
  CompletionStage<Integer> flushName(String name, int qtype);

  /**
   * Removes as {@link #flushName}, but only answers stored before {@code storedBeforeMillis}, so
   * a flush applied late (by a node that was away when it was issued) keeps what was fetched
   * since. A backend that cannot tell removes them all: that costs a refetch, never a stale
   * answer.
   */
  default CompletionStage<Integer> flushNameStoredBefore(String name, int qtype, long storedBeforeMillis) {
    return flushName(name, qtype);
  }

  /**
   * Removes the answer held for {@code key} if it was stored at {@code storedAtMillis} or before
   * (the one a caller read from this cache), never one stored since (fetched afresh meanwhile);
   * completes with whether one went. Warm join releases so the answers it handed to their owner.
   */
  CompletionStage<Boolean> removeIfStoredBy(CacheKey key, long storedAtMillis);

  /**
   * Hands {@code sink} every stored answer, expired ones included, for {@code shoal cache dump}.
   * Blocking and possibly long: callers run it off the query path. It never holds a lock or a
   * read snapshot that fills or hits wait on, so what it sees of concurrent fills is not defined.
   */
  void entries(BiConsumer<CacheKey, CachedAnswer> sink);

  /** Number of entries held, expired ones included until they are found. */
  long size();

  @Override
  void close();
}
