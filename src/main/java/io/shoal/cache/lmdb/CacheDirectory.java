package io.shoal.cache.lmdb;

import io.shoal.cache.CachedAnswer;
import io.shoal.wire.CacheKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.lmdbjava.Cursor;
import org.lmdbjava.GetOp;
import org.lmdbjava.LmdbException;
import org.lmdbjava.Txn;

/**
 * A cache directory as the offline operator tools see it ({@code shoal cache stat|dump|check|flush
 * --path}): its layout file, its shard environments, and the answers in them. Readers may look
 * at a directory a running node uses (LMDB readers never block its writer); check and flush need
 * the directory to themselves and take the same lock a node holds, so they refuse while one runs.
 */
public final class CacheDirectory implements AutoCloseable {

  /** How a tool uses the directory. */
  public enum Access {
    /** Read only, even while a node uses the directory (stat, dump): a snapshot per shard. */
    SHARED_READ,
    /** Read only, and no node may run meanwhile (check: its verdict is on what a node would open). */
    EXCLUSIVE_READ,
    /** Read and write, and no node may run meanwhile (flush). */
    EXCLUSIVE_WRITE
  }

  /** One shard's figures, or why it could not be read. */
  public record ShardStat(
      int shard, Path directory, String error, long entries, long indexed, long expired, long mapSize,
      long mapUsed, long lastTxnId, int readers) {

    /** Share of the map in use, 0 to 100. */
    public double mapUsedPercent() {
      return mapSize == 0 ? 0 : 100.0 * mapUsed / mapSize;
    }
  }

  /**
   * One stored answer: its shard, raw key, the key parsed (null when malformed) and the answer
   * decoded (null when its bytes do not decode).
   */
  public record Entry(int shard, byte[] rawKey, CacheKey key, CachedAnswer answer) {}

  /** What {@link #check} found: shards and entries looked at, and the problems, if any. */
  public record CheckReport(int shards, long entries, long expired, List<String> notes, List<String> problems,
      long unlisted) {

    public boolean clean() {
      return problems.isEmpty();
    }
  }

  private final Path path;
  private final Properties layout;
  private final int shardCount;
  private final List<OfflineShards.Shard> shards;
  private final List<Integer> strays;
  private final CacheLock lock;
  private final CacheInUseException inUse;
  private final Access access;

  private CacheDirectory(
      Path path, Properties layout, int shardCount, List<OfflineShards.Shard> shards, List<Integer> strays, CacheLock lock,
      CacheInUseException inUse, Access access) {
    this.path = path;
    this.layout = layout;
    this.shardCount = shardCount;
    this.shards = shards;
    this.strays = strays;
    this.lock = lock;
    this.inUse = inUse;
    this.access = access;
  }

  /**
   * Opens the cache at {@code path}. Throws when it is not a directory, not a shoal cache, or
   * (for the exclusive kinds of access) held by a running node. A shard that cannot be opened
   * does not fail the open: stat and check report it, flush refuses to write.
   */
  public static CacheDirectory open(Path path, Access access) throws CacheDirectoryException {
    if (!Files.exists(path)) {
      throw new CacheDirectoryException("no such directory: " + path);
    }
    if (!Files.isDirectory(path)) {
      throw new CacheDirectoryException("not a directory: " + path);
    }
    Properties layout = OfflineShards.readLayout(path);
    int shardCount = OfflineShards.shardCount(path, layout);
    TreeSet<Integer> present = OfflineShards.shardDirectories(path);
    if (present.isEmpty()) {
      throw new CacheDirectoryException(path + " is not a shoal cache: it has no shard-NN directories");
    }
    CacheLock lock = null;
    CacheInUseException inUse = null;
    try {
      if (access == Access.SHARED_READ) {
        CacheLock.probe(path);
      } else {
        lock = CacheLock.acquire(path);
      }
    } catch (CacheInUseException e) {
      // LMDB forbids a second handle on an environment within one process, even read-only.
      if (access != Access.SHARED_READ || e.holder() == CacheInUseException.Holder.THIS_PROCESS) {
        throw new CacheDirectoryException(e);
      }
      inUse = e;
    } catch (IOException e) {
      throw new CacheDirectoryException("cannot lock " + path + ": " + e);
    }
    List<OfflineShards.Shard> shards = new ArrayList<>();
    try {
      for (int i = 0; i < shardCount; i++) {
        shards.add(OfflineShards.open(i, AnswerCodec.shardDirectory(path, i), access == Access.EXCLUSIVE_WRITE));
      }
    } catch (RuntimeException e) {
      closeAll(shards, lock);
      throw e;
    }
    List<Integer> strays = List.copyOf(present.tailSet(shardCount));
    return new CacheDirectory(path, layout, shardCount, shards, strays, lock, inUse, access);
  }

  public Path path() {
    return path;
  }

  /** The layout file's properties (format, shard_count, key_hash). */
  public Properties layout() {
    Properties copy = new Properties();
    copy.putAll(layout);
    return copy;
  }

  public int shardCount() {
    return shardCount;
  }

  /** For shared reads: the running node that holds the directory, if any. */
  public Optional<CacheInUseException> inUse() {
    return Optional.ofNullable(inUse);
  }

  /** Per-shard figures as of one read snapshot each; a shard that could not be read says why. */
  public List<ShardStat> stat(long nowMillis) {
    return shards.stream().map(s -> ShardFigures.read(s, nowMillis)).toList();
  }

  /**
   * Hands {@code sink} the stored answers, shard by shard in key order, expired ones included:
   * those of {@code name} only when it is not null, at most {@code limit}. Returns how many.
   */
  public long dump(String name, long limit, Consumer<Entry> sink) throws CacheDirectoryException {
    byte[] prefix = name == null ? null : AnswerCodec.nameWire(name);
    long emitted = 0;
    for (OfflineShards.Shard s : shards) {
      if (s.error() != null || emitted >= limit) {
        continue;
      }
      try (Txn<ByteBuffer> txn = s.env().txnRead(); Cursor<ByteBuffer> c = s.databases().answers().openCursor(txn)) {
        boolean found = prefix == null ? c.first() : c.get(AnswerCodec.direct(prefix), GetOp.MDB_SET_RANGE);
        while (found && emitted < limit) {
          // A wire name ends at its root label, so a key with this prefix is this very name.
          if (prefix != null && !AnswerCodec.startsWith(c.key(), prefix)) {
            break;
          }
          byte[] key = AnswerCodec.bytes(c.key());
          sink.accept(new Entry(s.index(), key, AnswerCodec.parseKey(key), AnswerCodec.decodeChecked(c.val())));
          emitted++;
          found = c.next();
        }
      } catch (LmdbException e) {
        throw new CacheDirectoryException(s.label() + ": cannot read: " + e.getMessage());
      }
    }
    return emitted;
  }

  /** The answer stored under {@code key}, expired or not, or null. */
  public CachedAnswer answer(CacheKey key) throws CacheDirectoryException {
    OfflineShards.Shard s = shards.get(AnswerCodec.shardOf(key, shardCount));
    if (s.error() != null) {
      throw new CacheDirectoryException(s.label() + ": " + s.error());
    }
    try (Txn<ByteBuffer> txn = s.env().txnRead()) {
      ByteBuffer v = s.databases().answers().get(txn, AnswerCodec.direct(key.bytes()));
      return v == null ? null : AnswerCodec.decodeChecked(v);
    }
  }

  /**
   * Verifies what a node relies on when it opens this directory: see {@link CacheCheck}.
   */
  public CheckReport check(long nowMillis) {
    return new CacheCheck(shardCount, shards, strays).run(nowMillis);
  }

  /** Removes every answer of {@code name} (any case, class and flags), of {@code qtype} or of every type when 0. */
  public int flushName(String name, int qtype) throws CacheDirectoryException {
    byte[] wire = AnswerCodec.nameWire(name);
    requireWritable();
    return OfflineFlush.name(shards, wire, qtype);
  }

  /** Removes every answer; returns how many there were. The files stay, emptied. */
  public long flushAll() throws CacheDirectoryException {
    requireWritable();
    return OfflineFlush.all(shards);
  }

  /** Nothing is written unless every shard opened, so a flush never stops half way by surprise. */
  private void requireWritable() throws CacheDirectoryException {
    if (access != Access.EXCLUSIVE_WRITE) {
      throw new IllegalStateException("opened " + access + ", not for writing");
    }
    for (OfflineShards.Shard s : shards) {
      if (s.error() != null) {
        throw new CacheDirectoryException(s.label() + ": " + s.error() + "; nothing was removed (shoal cache check tells more)");
      }
    }
  }

  /** The DO and CD bits of a key as dump and check print them: {@code do}, {@code cd}, {@code do,cd} or {@code -}. */
  public static String flagNames(int flags) {
    List<String> names = new ArrayList<>();
    if ((flags & CacheKey.FLAG_DO) != 0) {
      names.add("do");
    }
    if ((flags & CacheKey.FLAG_CD) != 0) {
      names.add("cd");
    }
    return names.isEmpty() ? "-" : String.join(",", names);
  }

  @Override
  public void close() {
    closeAll(shards, lock);
  }

  private static void closeAll(List<OfflineShards.Shard> shards, CacheLock lock) {
    for (OfflineShards.Shard s : shards) {
      if (s.env() != null && !s.env().isClosed()) {
        s.env().close();
      }
    }
    if (lock != null) {
      lock.close();
    }
  }
}
