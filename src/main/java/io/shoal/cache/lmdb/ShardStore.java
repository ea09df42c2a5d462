package io.shoal.cache.lmdb;

import io.shoal.cache.AnswerCache;
import io.shoal.cache.CachedAnswer;
import io.shoal.metrics.CacheMetrics;
import io.shoal.metrics.LmdbShardMetrics;
import io.shoal.wire.CacheKey;
import java.nio.ByteBuffer;
import java.util.List;
import org.lmdbjava.Env;
import org.lmdbjava.Txn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard's open LMDB environment: reads from any thread (through its {@link HotAnswers}, then
 * its {@link ReaderPool}),
 * and the write transactions of its {@link CacheShard}, one at a time, with their recovery from
 * a full map. Opening it is {@link ShardFiles}' job.
 */
class ShardStore implements AutoCloseable {
  // Not final: a test hands a shard a store that fails, through the shard's opener.
  private static final Logger log = LoggerFactory.getLogger(ShardStore.class);

  /** Room-making rounds per fill that does not fit the map: two evictions, then growth. */
  private static final int MAX_MAP_ROUNDS = 6;
  private static final int EVICTION_ROUNDS = 2;

  /** What a commit reports to the shard that asked for it. */
  interface Outcome {
    /** {@code fills} are committed: the transaction took {@code nanos}, its commit {@code commitNanos}. */
    void committed(List<Fill> fills, long nanos, long commitNanos);

    /** {@code fills} could not be stored (too large for the map even after eviction and growth). */
    void dropped(List<Fill> fills);
  }

  private final ShardSettings settings;
  private final Env<ByteBuffer> env;
  private final ShardDatabases databases;
  private final EvictionPolicy eviction;
  private final ReaderPool readers;
  private final HotAnswers hot;
  private final CacheMetrics metrics;
  private final LmdbShardMetrics shardMetrics;

  private final ShardEdits edits;

  /** Entries as of the last commit; written by the writer, read by anyone. */
  private volatile long entries;
  /** Published with each commit for readers; null when the policy keeps no index. */
  private volatile Horizon horizon;
  private int horizonDepth = Horizon.DEPTH;

  ShardStore(ShardSettings settings, Env<ByteBuffer> env, ShardDatabases databases, CacheMetrics metrics) {
    this.settings = settings;
    this.env = env;
    this.databases = databases;
    this.eviction = EvictionPolicy.of(settings.whenFull(), databases);
    this.readers = new ReaderPool(env, databases.answers());
    this.hot = new HotAnswers(settings.hotEntries(), settings.hotIndex().answers);
    this.metrics = metrics;
    this.shardMetrics = metrics.lmdbShard(settings.shard());
    this.edits = new ShardEdits(settings, databases, eviction, hot, this::evict);
    for (int attempt = 0; ; attempt++) {
      try (Txn<ByteBuffer> txn = begin(); Ending policy = eviction::ending) {
        eviction.reconcile(txn);
        finish(txn, -1);
        return;
      } catch (Env.MapFullException e) {
        if (attempt >= 3) {
          throw e;
        }
        // No reader can have registered yet: resizing is safe without pausing them.
        env.setMapSize(env.info().mapSize * 2);
      }
    }
  }

  // ---- readers (any thread) ----

  /**
   * The unexpired answer under {@code key}, or null (absent, expired, or the map is busy
   * resizing): from the hot answers when they hold it, else from LMDB, admitting what it read. A
   * key the eviction policy knows LMDB does not hold is a miss without a read transaction: under
   * churn, most misses.
   */
  CachedAnswer read(CacheKey key, long nowMillis) {
    CachedAnswer held = hot.get(key, nowMillis);
    if (held != null) {
      return held;
    }
    if (!eviction.mayHold(key)) {
      return null;
    }
    long generation = readers.generation();
    CachedAnswer read = readers.read(key.bytes(), nowMillis);
    if (read != null) {
      hot.admit(key, read, generation, readers::generation);
    }
    return read;
  }

  /** A chunk of the committed answers after {@code after}, for a dump: see {@link ReaderPool#scan}. */
  List<ReaderPool.Stored> scan(byte[] after, int max) {
    return readers.scan(after, max);
  }

  /**
   * Whether the committed answer expiring at {@code expiresAt} counts as evicted because
   * {@code waiting} answers are queued for this shard and not committed yet (see {@link Horizon}).
   */
  boolean displaced(long waiting, long expiresAt) {
    Horizon h = horizon;
    return h != null && h.displaces(waiting, expiresAt);
  }

  long entries() {
    return entries;
  }

  long mapSize() {
    return env.info().mapSize;
  }

  // ---- writers (the shard's actor only) ----

  /**
   * Commits {@code fills}, in one transaction when they fit. A full map splits the batch (smaller
   * transactions can reuse the pages their predecessors freed), then, for a single fill, evicts
   * to free pages and at last grows the map; a fill that still does not fit is dropped. No fill
   * ever fails a query. Throws on any other LMDB failure, with the rest of the fills unsettled.
   */
  void commit(List<Fill> fills, long nowMillis, Outcome outcome) {
    int from = 0;
    int chunk = fills.size();
    int mapRounds = 0;
    while (from < fills.size()) {
      List<Fill> part = fills.subList(from, Math.min(fills.size(), from + chunk));
      long start = System.nanoTime();
      try {
        long commitNanos = store(part, nowMillis);
        outcome.committed(part, System.nanoTime() - start, commitNanos);
        from += part.size();
        mapRounds = 0;
      } catch (Env.MapFullException e) {
        if (part.size() > 1) {
          chunk = Math.max(1, part.size() / 2);
        } else if (mapRounds < MAX_MAP_ROUNDS) {
          makeRoom(++mapRounds, nowMillis);
        } else {
          log.warn("answer of {} bytes does not fit shard {} of cache {} even after eviction and growth; dropped",
              part.get(0).answer().encodedSize(), settings.shard(), settings.cache());
          outcome.dropped(part);
          from += 1;
          mapRounds = 0;
        }
      }
    }
  }

  /**
   * Stores every fill in one write transaction and commits it, evicting by when_full so the shard
   * stays within its capacity. Returns the nanoseconds the commit itself took (the fsync, in
   * sync = full). On {@link Env.MapFullException} nothing was committed.
   */
  long store(List<Fill> fills, long nowMillis) {
    try (Txn<ByteBuffer> txn = begin(); Ending policy = eviction::ending) {
      long count = databases.answers().stat(txn).entries;
      for (Fill fill : fills) {
        count += put(txn, fill.key(), fill.answer(), count, nowMillis);
      }
      horizonDepth = Math.max(Horizon.DEPTH, 2 * fills.size());
      return finish(txn, count);
    }
  }

  /** Stores one answer; returns the change in the entry count. */
  private long put(Txn<ByteBuffer> txn, CacheKey cacheKey, CachedAnswer answer, long count, long nowMillis) {
    boolean fresh = eviction.expiryOf(txn, cacheKey) < 0;
    long removed = 0;
    while (fresh && count - removed >= settings.capacity()) {
      int n = evict(txn, nowMillis);
      if (n == 0) {
        break;
      }
      removed += n;
    }
    eviction.store(txn, cacheKey, answer);
    hot.stored(cacheKey, answer);
    return fresh ? 1 - removed : 0;
  }

  private int evict(Txn<ByteBuffer> txn, long nowMillis) {
    long start = System.nanoTime();
    int removed = eviction.evict(txn, nowMillis, hot::removed);
    if (removed > 0) {
      metrics.evictionNanos(System.nanoTime() - start);
    }
    return removed;
  }

  /**
   * Commits {@code txn} holding {@code count} answers (-1: as many as LMDB then counts) and
   * publishes the result to readers.
   */
  private long finish(Txn<ByteBuffer> txn, long count) {
    eviction.flush(txn);
    if (count < 0) {
      count = databases.answers().stat(txn).entries;
    }
    long[] soonest = eviction.soonest(txn, (int) Math.min(horizonDepth, count));
    Horizon next = soonest == null ? null : new Horizon(Math.max(0, settings.capacity() - count), soonest);
    long start = System.nanoTime();
    txn.commit();
    long commitNanos = System.nanoTime() - start;
    eviction.committed();
    entries = count;
    horizon = next;
    readers.committed();
    hot.committed();
    return commitNanos;
  }

  /** Closed before its write transaction (resources close in reverse): the policy undoes an abort. */
  private interface Ending extends AutoCloseable {
    @Override
    void close();
  }

  /** Starts a write transaction; what an aborted one changed is forgotten. */
  private Txn<ByteBuffer> begin() {
    hot.begin();
    return env.txnWrite();
  }

  /** Frees pages for a fill that did not fit: evicts an eighth of the shard, or grows the map. */
  private void makeRoom(int round, long nowMillis) {
    long held = entries;
    if (round <= EVICTION_ROUNDS && held > 0) {
      try (Txn<ByteBuffer> txn = begin(); Ending policy = eviction::ending) {
        for (long removed = 0, wanted = Math.max(1, held / 8); removed < wanted; ) {
          int n = evict(txn, nowMillis);
          if (n == 0) {
            break;
          }
          removed += n;
        }
        finish(txn, -1);
        return;
      } catch (Env.MapFullException e) {
        // Even deleting needs fresh pages (copy-on-write): only growth helps now.
      }
    }
    long before = mapSize();
    growMap(before * 2);
    shardMetrics.mapGrown();
    log.warn("LMDB map of shard {} of cache {} full; grew it from {} to {} bytes",
        settings.shard(), settings.cache(), before, before * 2);
  }

  /** Stores the answers of a load where they take no live answer's place: see {@link ShardEdits#loadIntoRoom}. */
  AnswerCache.Loaded[] loadIntoRoom(List<AnswerCache.Keyed> answers, long nowMillis) {
    return removing(txn -> edits.loadIntoRoom(txn, answers, nowMillis));
  }

  /** Removes every answer for the wire-form {@code name} of {@code qtype} (0: every type). */
  int removeName(byte[] name, int qtype) {
    return removing(txn -> edits.removeName(txn, name, qtype));
  }

  /** Removes each release's answer unless it was stored since: see {@link ShardEdits#removeStored}. */
  boolean[] removeStored(List<ShardState.Release> releases) {
    return removing(txn -> edits.removeStored(txn, releases));
  }

  /**
   * Runs {@code removal} in a write transaction and commits it. Deleting needs fresh pages too
   * (copy-on-write): on a full map, room is made (evicting, then growing) and the removal run
   * again, at most {@link #MAX_MAP_ROUNDS} times.
   */
  private <T> T removing(java.util.function.Function<Txn<ByteBuffer>, T> removal) {
    for (int round = 1; ; round++) {
      try (Txn<ByteBuffer> txn = begin(); Ending policy = eviction::ending) {
        T result = removal.apply(txn);
        finish(txn, -1);
        return result;
      } catch (Env.MapFullException e) {
        if (round > MAX_MAP_ROUNDS) {
          throw e;
        }
        makeRoom(EVICTION_ROUNDS + 1, System.currentTimeMillis());
      }
    }
  }

  /** Forces written pages to disk (MDB_NOSYNC modes rely on this); returns the nanoseconds it took. */
  long sync() {
    long start = System.nanoTime();
    env.sync(true);
    return System.nanoTime() - start;
  }

  /**
   * Grows the map to {@code bytes}. LMDB allows this only while no transaction is active, so
   * readers are held off (they miss) until the new map is in place.
   */
  void growMap(long bytes) {
    readers.paused(() -> env.setMapSize(bytes));
  }

  /** Ends every reader's transaction and closes the environment; later reads are misses. */
  @Override
  public void close() {
    hot.close();
    readers.close();
    env.close();
  }
}
