package io.shoal.cache.lmdb;

import static java.nio.ByteOrder.BIG_ENDIAN;

import io.shoal.cache.CachedAnswer;
import io.shoal.cache.WhenFull;
import io.shoal.metrics.CacheMetrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.lmdbjava.ByteBufferProxy;
import org.lmdbjava.Cursor;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.GetOp;
import org.lmdbjava.Txn;

/**
 * One shard's LMDB environment: the {@code answers} database (cache key to encoded answer), the
 * {@code expiry} index that {@code evict_one} needs (8-byte big-endian expiry then cache key, so
 * the first entry expires soonest), the read transactions of every thread that reads it, and
 * the write operations its {@link CacheShard} runs. Reads may come from any thread; writes only
 * from the shard's actor, one at a time.
 */
final class ShardEnvironment implements AutoCloseable {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ShardEnvironment.class);
  /** Database names; they also mark a directory as a shoal cache shard for offline tools. */
  static final String ANSWERS = "answers";
  static final String EXPIRY = "expiry";
  /** Entries looked at per eviction in {@code sample} mode, as the memory backend does. */
  static final int SAMPLES = 5;

  /**
   * Reader slots in the lock file. With MDB_NOTLS each reading thread holds one for as long as
   * the environment is open; Akka's fork-join pools have few threads, but other callers may too.
   */
  private static final int MAX_READERS = 512;
  /** LMDB's default maximum key size is 511 bytes; a cache key is at most 260. */
  private static final int KEY_CAPACITY = 512;
  /** Beyond the victim, expired entries at the head of the index removed in the same go. */
  private static final int EXPIRED_SWEEP = 16;
  /**
   * Expiry times a {@link Horizon} holds at least: how many uncommitted fills it can account for.
   * It holds twice the last batch if that is more, so a long commit window stays accounted for.
   */
  static final int HORIZON_DEPTH = 128;
  /** Mode LMDB creates its files with; {@link #PRIVATE_FILE} in POSIX notation. */
  private static final int FILE_MODE = 0600;
  static final String PRIVATE_FILE = "rw-------";
  static final String PRIVATE_DIRECTORY = "rwx------";

  private static final int OPEN = 0;
  private static final int PAUSED = 1;
  private static final int CLOSED = 2;

  private final Env<ByteBuffer> env;
  private final Dbi<ByteBuffer> answers;
  private final Dbi<ByteBuffer> expiry;
  private final boolean indexed;
  private final long capacity;
  private final CacheMetrics metrics;

  // Writer-side buffers: only the shard's actor writes, never two messages at once.
  private final ByteBuffer writeKey = ByteBuffer.allocateDirect(KEY_CAPACITY);
  private final ByteBuffer victimKey = ByteBuffer.allocateDirect(KEY_CAPACITY);
  private final ByteBuffer indexKey = ByteBuffer.allocateDirect(KEY_CAPACITY + 8);
  private final ByteBuffer seekKey = ByteBuffer.allocateDirect(KEY_CAPACITY);
  private final ByteBuffer noValue = ByteBuffer.allocateDirect(0);
  private ByteBuffer writeValue = ByteBuffer.allocateDirect(4096);

  /**
   * Whether readers may start a read: OPEN, PAUSED (the map is being resized) or CLOSED. A reader
   * marks its slot busy, then checks the gate; the writer sets the gate, then waits for every
   * busy slot. Both sides are volatile, so at least one of them sees the other and no read runs
   * on a map being resized or an environment being closed.
   */
  private volatile int gate = OPEN;
  private final Object readersLock = new Object();
  private final List<ReaderSlot> readers = new ArrayList<>();
  private final ThreadLocal<ReaderSlot> localReader = new ThreadLocal<>();
  private volatile long entries;
  /** Null in sample mode, which keeps no expiry index to take it from. */
  private volatile Horizon horizon;
  private int horizonDepth = HORIZON_DEPTH;

  /**
   * What the last commit left, for readers to apply {@code max_entries} to answers that are not
   * committed yet: {@code slack} free places under the shard's capacity, and the expiry times of
   * the entries that expire soonest, in order. With {@code n} answers waiting for their commit,
   * evict_one would already have removed the first {@code n - slack} of those entries; readers
   * treat them as gone, so uncommitted answers never add to the cache's capacity.
   */
  record Horizon(long slack, long[] soonest) {

    /** Whether an entry expiring at {@code expiresAt} is displaced by {@code waiting} uncommitted answers. */
    boolean displaces(long waiting, long expiresAt) {
      long over = waiting - slack;
      if (over <= 0 || soonest.length == 0) {
        return false;
      }
      return expiresAt <= soonest[(int) Math.min(over, soonest.length) - 1];
    }
  }

  /** One thread's reusable read transaction (reset between reads, renewed before each). */
  private static final class ReaderSlot {
    final WeakReference<Thread> owner;
    final Txn<ByteBuffer> txn;
    final ByteBuffer key = ByteBuffer.allocateDirect(KEY_CAPACITY);
    volatile boolean busy;

    ReaderSlot(Thread owner, Txn<ByteBuffer> txn) {
      this.owner = new WeakReference<>(owner);
      this.txn = txn;
    }

    boolean abandoned() {
      Thread t = owner.get();
      return t == null || !t.isAlive();
    }
  }

  private ShardEnvironment(
      ShardSettings settings, Env<ByteBuffer> env, Dbi<ByteBuffer> answers, Dbi<ByteBuffer> expiry,
      CacheMetrics metrics) {
    this.env = env;
    this.answers = answers;
    this.expiry = expiry;
    this.indexed = settings.whenFull() == WhenFull.EVICT_ONE;
    this.capacity = settings.capacity();
    this.metrics = metrics;
  }

  /** Opens (creating if needed) the shard's environment; the directory is 0700, its files 0600. */
  static ShardEnvironment open(ShardSettings settings, CacheMetrics metrics) {
    Path dir = settings.directory();
    try {
      if (!Files.isDirectory(dir)) {
        Files.createDirectories(dir);
      }
      restrict(dir, PRIVATE_DIRECTORY);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + dir, e);
    }
    setAsideIfDamaged(settings, metrics);
    Env<ByteBuffer> env = Env.create(ByteBufferProxy.PROXY_OPTIMAL)
        .setMapSize(settings.mapSize())
        .setMaxDbs(2)
        .setMaxReaders(MAX_READERS)
        .open(dir.toFile(), FILE_MODE, flags(settings.sync()));
    try {
      // LMDB creates files with the mode given, but files left by an older build or another
      // umask keep theirs: tighten them after open, cached answers are nobody else's business.
      try (var files = Files.list(dir)) {
        for (Iterator<Path> it = files.iterator(); it.hasNext(); ) {
          Path p = it.next();
          if (Files.isRegularFile(p)) {
            restrict(p, PRIVATE_FILE);
          }
        }
      }
      Dbi<ByteBuffer> answers = env.openDbi(ANSWERS, DbiFlags.MDB_CREATE);
      Dbi<ByteBuffer> expiry = env.openDbi(EXPIRY, DbiFlags.MDB_CREATE);
      ShardEnvironment shard = new ShardEnvironment(settings, env, answers, expiry, metrics);
      shard.reconcileIndex();
      return shard;
    } catch (IOException e) {
      env.close();
      throw new UncheckedIOException("cannot restrict permissions in " + dir, e);
    } catch (RuntimeException e) {
      env.close();
      throw e;
    }
  }

  /**
   * Moves the shard's files aside when its data file fails {@link DataFileCheck}: LMDB would
   * die of SIGBUS on it, taking the node with it on every start. The shard starts empty (cold),
   * which costs upstream queries, never answers.
   */
  private static void setAsideIfDamaged(ShardSettings settings, CacheMetrics metrics) {
    Path dir = settings.directory();
    String damage = DataFileCheck.damage(dir);
    if (damage == null) {
      return;
    }
    try {
      Path aside = DataFileCheck.setAside(dir, java.time.Instant.now());
      log.error("LMDB shard {} of cache {} is damaged ({}); its files were moved to {} and the shard starts empty",
          settings.shard(), settings.cache(), damage, aside);
      metrics.lmdbShard(settings.shard()).damaged();
    } catch (IOException e) {
      throw new UncheckedIOException("shard " + dir + " is damaged (" + damage + ") and cannot be moved aside", e);
    }
  }

  /** Every mode runs with MDB_NOTLS: actors hop between threads, so read txns must not be tied to one. */
  static EnvFlags[] flags(SyncMode sync) {
    return switch (sync) {
      case FULL -> new EnvFlags[] {EnvFlags.MDB_NOTLS};
      case NO_META -> new EnvFlags[] {EnvFlags.MDB_NOTLS, EnvFlags.MDB_NOMETASYNC};
      case PERIODIC, NONE -> new EnvFlags[] {EnvFlags.MDB_NOTLS, EnvFlags.MDB_NOSYNC};
    };
  }

  /** Sets POSIX permissions such as {@code rw-------}; a no-op on file systems without them. */
  static void restrict(Path p, String perms) throws IOException {
    try {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(perms));
    } catch (UnsupportedOperationException e) {
      // Not a POSIX file system: its own ACLs apply.
    }
  }

  /**
   * Makes the expiry index match the when_full mode: rebuilt when evict_one finds it out of step
   * with the answers (the cache ran in sample mode before), emptied in sample mode so stale
   * entries do not linger if the mode changes back later.
   */
  private void reconcileIndex() {
    for (int attempt = 0; ; attempt++) {
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        long n = answers.stat(txn).entries;
        long indexedEntries = expiry.stat(txn).entries;
        if (indexed && indexedEntries != n) {
          expiry.drop(txn);
          try (CursorIterable<ByteBuffer> all = answers.iterate(txn)) {
            for (CursorIterable.KeyVal<ByteBuffer> kv : all) {
              long expiresAt = kv.val().order(BIG_ENDIAN).getLong(0);
              expiry.put(txn, indexKey(expiresAt, bytes(kv.key())), noValue);
            }
          }
        } else if (!indexed && indexedEntries > 0) {
          expiry.drop(txn);
        }
        Horizon next = horizon(txn, n);
        txn.commit();
        published(n, next);
        return;
      } catch (Env.MapFullException e) {
        if (attempt >= 3) {
          throw e;
        }
        // No reader can have registered yet: resizing is safe without the gate.
        env.setMapSize(env.info().mapSize * 2);
      }
    }
  }

  /** The horizon of a write transaction about to commit with {@code count} answers. */
  private Horizon horizon(Txn<ByteBuffer> txn, long count) {
    if (!indexed) {
      return null;
    }
    long[] soonest = new long[(int) Math.min(horizonDepth, count)];
    int n = 0;
    try (Cursor<ByteBuffer> c = expiry.openCursor(txn)) {
      for (boolean more = c.first(); more && n < soonest.length; more = c.next()) {
        soonest[n++] = c.key().order(BIG_ENDIAN).getLong(c.key().position());
      }
    }
    return new Horizon(Math.max(0, capacity - count), n == soonest.length ? soonest : Arrays.copyOf(soonest, n));
  }

  private void published(long count, Horizon next) {
    entries = count;
    horizon = next;
  }

  /**
   * Whether the committed answer expiring at {@code expiresAt} counts as evicted because
   * {@code waiting} answers are queued for this shard and not committed yet (see {@link Horizon}).
   */
  boolean displaced(long waiting, long expiresAt) {
    Horizon h = horizon;
    return h != null && h.displaces(waiting, expiresAt);
  }

  /** Entries as of the last commit (expired ones included until evicted). */
  long entries() {
    return entries;
  }

  long mapSize() {
    return env.info().mapSize;
  }

  // ---- readers (any thread) ----

  /**
   * The unexpired answer under {@code key}, or null when absent, expired at {@code nowMillis}, or
   * the environment is closing or being resized (a miss is cheaper than a wait on the hit path).
   */
  CachedAnswer read(byte[] key, long nowMillis) {
    ReaderSlot slot = localReader.get();
    if (slot == null) {
      slot = register();
      if (slot == null) {
        return null;
      }
    }
    slot.busy = true;
    try {
      if (gate != OPEN) {
        return null;
      }
      Txn<ByteBuffer> txn = slot.txn;
      try {
        txn.renew();
      } catch (RuntimeException e) {
        // Not busy before taking the lock: a closer holds it while it waits for busy readers.
        slot.busy = false;
        discard(slot);
        throw e;
      }
      try {
        slot.key.clear();
        slot.key.put(key).flip();
        ByteBuffer value = answers.get(txn, slot.key);
        if (value == null) {
          return null;
        }
        value.order(BIG_ENDIAN);
        if (value.getLong(value.position()) <= nowMillis) {
          return null;
        }
        // decode copies the bytes out of the map before the snapshot is released.
        return CachedAnswer.decode(value);
      } finally {
        txn.reset();
      }
    } finally {
      slot.busy = false;
    }
  }

  private ReaderSlot register() {
    synchronized (readersLock) {
      if (gate != OPEN) {
        return null;
      }
      reclaimAbandoned();
      Txn<ByteBuffer> txn;
      try {
        txn = env.txnRead();
      } catch (Env.ReadersFullException e) {
        env.readerCheck();
        return null;
      }
      txn.reset();
      ReaderSlot slot = new ReaderSlot(Thread.currentThread(), txn);
      readers.add(slot);
      localReader.set(slot);
      return slot;
    }
  }

  /** Frees the read transactions of threads that have died: their slots would never be reused. */
  private void reclaimAbandoned() {
    for (Iterator<ReaderSlot> it = readers.iterator(); it.hasNext(); ) {
      ReaderSlot slot = it.next();
      if (slot.abandoned() && !slot.busy) {
        release(slot);
        it.remove();
      }
    }
  }

  private void discard(ReaderSlot slot) {
    localReader.remove();
    synchronized (readersLock) {
      if (readers.remove(slot)) {
        try {
          slot.txn.close();
        } catch (RuntimeException ignored) {
          // The transaction is already unusable; closing is best effort.
        }
      }
    }
  }

  private static void release(ReaderSlot slot) {
    try {
      // A reset transaction is only freed by an abort, and only a renewed one can be aborted.
      slot.txn.renew();
    } catch (RuntimeException ignored) {
      // Leave it to close below.
    }
    try {
      slot.txn.close();
    } catch (RuntimeException ignored) {
      // Best effort: the environment is going away or the slot's thread is gone.
    }
  }

  private void awaitReaders() {
    for (ReaderSlot slot : readers) {
      int spins = 0;
      while (slot.busy) {
        if (++spins < 1000) {
          Thread.onSpinWait();
        } else {
          Thread.yield();
        }
      }
    }
  }

  // ---- writers (the shard's actor only) ----

  /**
   * Stores every fill in one write transaction and commits it, evicting by when_full so the shard
   * stays within its capacity. Returns the nanoseconds the commit itself took (the fsync, in
   * sync = full). On {@link Env.MapFullException} nothing was committed.
   */
  long store(List<CacheShard.Fill> fills, long nowMillis) {
    try (Txn<ByteBuffer> txn = env.txnWrite()) {
      long count = answers.stat(txn).entries;
      for (CacheShard.Fill fill : fills) {
        count += put(txn, fill.key().bytes(), fill.answer(), count, nowMillis);
      }
      horizonDepth = Math.max(HORIZON_DEPTH, 2 * fills.size());
      Horizon next = horizon(txn, count);
      long start = System.nanoTime();
      txn.commit();
      long commitNanos = System.nanoTime() - start;
      published(count, next);
      return commitNanos;
    }
  }

  /** Stores one answer; returns the change in the entry count. */
  private long put(Txn<ByteBuffer> txn, byte[] key, CachedAnswer answer, long count, long nowMillis) {
    ByteBuffer k = copyInto(writeKey, key);
    ByteBuffer old = answers.get(txn, k);
    long delta;
    if (old != null) {
      delta = 0;
      if (indexed) {
        long oldExpiry = old.order(BIG_ENDIAN).getLong(old.position());
        expiry.delete(txn, indexKey(oldExpiry, key));
      }
    } else {
      long removed = 0;
      while (count - removed >= capacity) {
        int n = evict(txn, nowMillis);
        if (n == 0) {
          break;
        }
        removed += n;
      }
      delta = 1 - removed;
    }
    answers.put(txn, k, encode(answer));
    if (indexed) {
      expiry.put(txn, indexKey(answer.expiresAtMillis(), key), noValue);
    }
    return delta;
  }

  /** Makes room for one entry by when_full; returns how many entries went (0: none left). */
  private int evict(Txn<ByteBuffer> txn, long nowMillis) {
    long start = System.nanoTime();
    int removed = indexed ? evictSoonest(txn, nowMillis) : 0;
    if (removed == 0) {
      // Also the fallback should the index ever be empty while answers are not.
      removed = evictSampled(txn, nowMillis);
    }
    if (removed > 0) {
      metrics.evictionNanos(System.nanoTime() - start);
    }
    return removed;
  }

  /** Removes the entry that expires soonest, and any already expired ones right behind it. */
  private int evictSoonest(Txn<ByteBuffer> txn, long nowMillis) {
    int removed = 0;
    try (Cursor<ByteBuffer> c = expiry.openCursor(txn)) {
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
        answers.delete(txn, victimKey);
        removed++;
      }
    }
    return removed;
  }

  /**
   * Looks at {@link #SAMPLES} entries found by seeking to random keys and removes the one that
   * expires soonest, together with any sampled entry already expired. LMDB cannot jump to the
   * n-th key, so a random seek picks an entry with a probability that grows with the key-space
   * gap before it: close enough for an approximate policy that needs no index.
   */
  private int evictSampled(Txn<ByteBuffer> txn, long nowMillis) {
    List<byte[]> keys = new ArrayList<>(SAMPLES);
    List<Long> expiries = new ArrayList<>(SAMPLES);
    try (Cursor<ByteBuffer> c = answers.openCursor(txn)) {
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
        byte[] key = bytes(c.key());
        if (keys.stream().noneMatch(seen -> Arrays.equals(seen, key))) {
          keys.add(key);
          expiries.add(c.val().order(BIG_ENDIAN).getLong(c.val().position()));
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
        delete(txn, keys.get(i), expiries.get(i));
        removed++;
      }
    }
    return removed;
  }

  private void delete(Txn<ByteBuffer> txn, byte[] key, long expiresAt) {
    answers.delete(txn, copyInto(victimKey, key));
    if (indexed) {
      expiry.delete(txn, indexKey(expiresAt, key));
    }
  }

  /**
   * Evicts up to {@code wanted} entries by when_full in a transaction of its own, to free pages
   * when the map is full. Throws {@link Env.MapFullException} when even the deletes find no page.
   */
  int evictForSpace(long wanted, long nowMillis) {
    try (Txn<ByteBuffer> txn = env.txnWrite()) {
      int removed = 0;
      while (removed < wanted) {
        int n = evict(txn, nowMillis);
        if (n == 0) {
          break;
        }
        removed += n;
      }
      long count = answers.stat(txn).entries;
      Horizon next = horizon(txn, count);
      txn.commit();
      published(count, next);
      return removed;
    }
  }

  /** Removes every answer for the wire-form {@code name}, whatever its type, class and flags. */
  int removeName(byte[] name, int qtype) {
    try (Txn<ByteBuffer> txn = env.txnWrite()) {
      List<byte[]> keys = new ArrayList<>();
      List<Long> expiries = new ArrayList<>();
      try (Cursor<ByteBuffer> c = answers.openCursor(txn)) {
        // A wire name ends at its root label, so every key with this prefix is this name.
        boolean found = c.get(copyInto(seekKey, name), GetOp.MDB_SET_RANGE);
        while (found && startsWith(c.key(), name)) {
          byte[] key = bytes(c.key());
          // Key layout: name, type (2), class (2), flags (1); 0 flushes every type.
          int type = ((key[name.length] & 0xFF) << 8) | (key[name.length + 1] & 0xFF);
          if (qtype == 0 || type == qtype) {
            keys.add(key);
            expiries.add(c.val().order(BIG_ENDIAN).getLong(c.val().position()));
          }
          found = c.next();
        }
      }
      for (int i = 0; i < keys.size(); i++) {
        delete(txn, keys.get(i), expiries.get(i));
      }
      long count = answers.stat(txn).entries;
      Horizon next = horizon(txn, count);
      txn.commit();
      published(count, next);
      return keys.size();
    }
  }

  /** Forces written pages to disk (MDB_NOSYNC modes rely on this). */
  void sync() {
    env.sync(true);
  }

  /**
   * Grows the map to {@code bytes}. LMDB allows this only while no transaction is active, so
   * readers are held off (they miss) until the new map is in place.
   */
  void growMap(long bytes) {
    synchronized (readersLock) {
      gate = PAUSED;
      try {
        awaitReaders();
        env.setMapSize(bytes);
      } finally {
        gate = OPEN;
      }
    }
  }

  /** Ends every reader's transaction and closes the environment; later reads are misses. */
  @Override
  public void close() {
    synchronized (readersLock) {
      if (gate == CLOSED) {
        return;
      }
      gate = CLOSED;
      awaitReaders();
      for (ReaderSlot slot : readers) {
        release(slot);
      }
      readers.clear();
    }
    env.close();
  }

  // ---- buffers ----

  private static ByteBuffer copyInto(ByteBuffer buffer, byte[] bytes) {
    buffer.clear();
    buffer.put(bytes).flip();
    return buffer;
  }

  private ByteBuffer indexKey(long expiresAt, byte[] key) {
    indexKey.clear();
    indexKey.order(BIG_ENDIAN).putLong(expiresAt).put(key).flip();
    return indexKey;
  }

  private ByteBuffer encode(CachedAnswer answer) {
    int size = answer.encodedSize();
    if (writeValue.capacity() < size) {
      writeValue = ByteBuffer.allocateDirect(Integer.highestOneBit(size - 1) << 1);
    }
    writeValue.clear();
    answer.encode(writeValue);
    writeValue.flip();
    return writeValue;
  }

  /** The remaining bytes of {@code b}, copied; its position is left alone. */
  static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  /** Whether {@code key}'s remaining bytes begin with {@code prefix}. */
  static boolean startsWith(ByteBuffer key, byte[] prefix) {
    if (key.remaining() < prefix.length) {
      return false;
    }
    int base = key.position();
    for (int i = 0; i < prefix.length; i++) {
      if (key.get(base + i) != prefix[i]) {
        return false;
      }
    }
    return true;
  }
}
