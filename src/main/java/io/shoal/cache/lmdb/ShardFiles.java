package io.shoal.cache.lmdb;

import io.shoal.metrics.CacheMetrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Properties;
import java.util.stream.Stream;
import java.time.Instant;
import java.util.Iterator;
import org.lmdbjava.ByteBufferProxy;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of an LMDB cache as a node opens them: the cache directory (locked, its layout
 * checked) and each shard's environment (its directory 0700 and files 0600, the check of its data
 * file, the sync mode's flags).
 */
final class ShardFiles {
  private static final Logger log = LoggerFactory.getLogger(ShardFiles.class);

  /** Mode LMDB creates its files with; {@link #PRIVATE_FILE} in POSIX notation. */
  private static final int FILE_MODE = 0600;
  static final String PRIVATE_FILE = "rw-------";
  static final String PRIVATE_DIRECTORY = "rwx------";
  /**
   * Reader slots in the lock file. Each reading thread holds one for as long as the environment
   * is open; Akka's fork-join pools have few threads, but other callers may too.
   */
  private static final int MAX_READERS = 512;

  private ShardFiles() {}

  /** Builds the store over an open environment: {@code ShardStore::new}, or in tests a store that fails. */
  @FunctionalInterface
  interface StoreFactory {
    ShardStore create(ShardSettings settings, Env<ByteBuffer> env, ShardDatabases databases, CacheMetrics metrics);
  }

  /** Opens (creating if needed) the shard's environment; a damaged one is set aside first. */
  static ShardStore open(ShardSettings settings, CacheMetrics metrics) {
    return open(settings, metrics, ShardStore::new);
  }

  static ShardStore open(ShardSettings settings, CacheMetrics metrics, StoreFactory factory) {
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
      return factory.create(settings, env, ShardDatabases.create(env), metrics);
    } catch (IOException e) {
      env.close();
      throw new UncheckedIOException("cannot restrict permissions in " + dir, e);
    } catch (RuntimeException e) {
      env.close();
      throw e;
    }
  }

  /**
   * Creates {@code path} (0700), locks it for as long as the cache is open, and checks its layout file.
   * The lock comes first: it keeps a second node, or an offline tool that writes, out of a
   * directory this node uses, and the layout check below may discard its answers. Answers stored
   * under another shard count sit in the wrong shards for the new key mapping, so they are
   * discarded: a cold cache is correct, a half-visible one is not.
   */
  static CacheLock prepareDirectory(Path path, int shardCount) {
    CacheLock lock;
    try {
      if (!Files.isDirectory(path)) {
        Files.createDirectories(path);
        restrict(path, PRIVATE_DIRECTORY);
      }
      lock = CacheLock.acquire(path);
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": " + e.getMessage(), e);
    }
    try {
      checkLayout(path, shardCount);
      return lock;
    } catch (RuntimeException e) {
      lock.close();
      throw e;
    }
  }

  private static void checkLayout(Path path, int shardCount) {
    try {
      Path layoutFile = path.resolve(AnswerCodec.LAYOUT_FILE);
      Properties want = AnswerCodec.layout(shardCount);
      if (Files.exists(layoutFile)) {
        Properties have = AnswerCodec.readLayout(layoutFile);
        if (have.equals(want)) {
          return;
        }
        log.warn("LMDB cache at {} was written with {}; now {}: discarding its answers, the cache starts cold",
            path, have, want);
        discardShards(path);
      }
      AnswerCodec.writeLayout(layoutFile, want);
      restrict(layoutFile, PRIVATE_FILE);
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": " + e.getMessage(), e);
    }
  }

  private static void discardShards(Path path) throws IOException {
    try (Stream<Path> dirs = Files.list(path)) {
      for (Path dir : (Iterable<Path>) dirs::iterator) {
        if (Files.isDirectory(dir) && AnswerCodec.isShardDirectory(dir.getFileName().toString())) {
          try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
              Files.delete(f);
            }
          }
          Files.delete(dir);
        }
      }
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
      Path aside = DataFileCheck.setAside(dir, Instant.now());
      log.error("LMDB shard {} of cache {} is damaged ({}); its files were moved to {} and the shard starts empty",
          settings.shard(), settings.cache(), damage, aside);
      metrics.lmdbShard(settings.shard()).damaged();
    } catch (IOException e) {
      throw new UncheckedIOException("shard " + dir + " is damaged (" + damage + ") and cannot be moved aside", e);
    }
  }

  /**
   * Every mode runs with MDB_NOTLS: read transactions belong to a {@link ReaderPool} slot, not to
   * LMDB's thread-local, and actors hop between threads.
   */
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
}
