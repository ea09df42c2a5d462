package io.shoal.cache.lmdb;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.lmdbjava.ByteBufferProxy;
import org.lmdbjava.Dbi;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.LmdbException;

/**
 * A cache directory's layout and shards as the offline tools open them: read-only unless they
 * flush, never creating anything, and never mapping a data file that fails {@link DataFileCheck}.
 */
final class OfflineShards {

  /** One shard environment opened by a tool, or why it could not be (then env and databases are null). */
  record Shard(int index, Path directory, Env<ByteBuffer> env, ShardDatabases databases, String error) {

    static Shard failed(int index, Path directory, String error) {
      return new Shard(index, directory, null, null, error);
    }

    String label() {
      return directory.getFileName().toString();
    }
  }

  private OfflineShards() {}

  static Properties readLayout(Path path) throws CacheDirectoryException {
    Path file = path.resolve(AnswerCodec.LAYOUT_FILE);
    if (!Files.isRegularFile(file)) {
      throw new CacheDirectoryException(path + " is not a shoal cache: it has no " + AnswerCodec.LAYOUT_FILE);
    }
    Properties layout;
    try {
      layout = AnswerCodec.readLayout(file);
    } catch (IOException | IllegalArgumentException e) {
      throw new CacheDirectoryException("cannot read " + file + ": " + e.getMessage());
    }
    String format = layout.getProperty("format");
    String hash = layout.getProperty("key_hash");
    if (!AnswerCodec.LAYOUT_FORMAT.equals(format) || !AnswerCodec.KEY_HASH.equals(hash)) {
      throw new CacheDirectoryException(path + " was written by an incompatible shoal (format=" + format
          + ", key_hash=" + hash + "; this shoal reads format=" + AnswerCodec.LAYOUT_FORMAT
          + ", key_hash=" + AnswerCodec.KEY_HASH + ")");
    }
    return layout;
  }

  static int shardCount(Path path, Properties layout) throws CacheDirectoryException {
    String value = layout.getProperty("shard_count");
    try {
      int n = Integer.parseInt(value == null ? "" : value.trim());
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new CacheDirectoryException(path.resolve(AnswerCodec.LAYOUT_FILE)
        + " is damaged: shard_count=" + value);
  }

  static TreeSet<Integer> shardDirectories(Path path) throws CacheDirectoryException {
    TreeSet<Integer> found = new TreeSet<>();
    try (Stream<Path> entries = Files.list(path)) {
      entries.filter(Files::isDirectory)
          .map(p -> p.getFileName().toString())
          .filter(AnswerCodec::isShardDirectory)
          .forEach(n -> found.add(Integer.parseInt(n.substring("shard-".length()))));
    } catch (IOException e) {
      throw new CacheDirectoryException("cannot list " + path + ": " + e);
    }
    return found;
  }

  static Shard open(int index, Path dir, boolean write) {
    if (!Files.isDirectory(dir)) {
      return Shard.failed(index, dir, "missing");
    }
    if (!Files.exists(dir.resolve(DataFileCheck.DATA_FILE)) && Files.isReadable(dir)) {
      return Shard.failed(index, dir, "has no " + DataFileCheck.DATA_FILE);
    }
    // Before LMDB maps it: a truncated file would be a SIGBUS, not an error.
    String damage = DataFileCheck.damage(dir);
    if (damage != null) {
      return Shard.failed(index, dir, damage);
    }
    Env<ByteBuffer> env = null;
    try {
      // Map size 0: LMDB uses the size the node last committed, so the whole file is mapped.
      env = Env.create(ByteBufferProxy.PROXY_OPTIMAL)
          .setMapSize(0)
          .setMaxDbs(2)
          .open(dir.toFile(), write ? new EnvFlags[0] : new EnvFlags[] {EnvFlags.MDB_RDONLY_ENV});
      Dbi<ByteBuffer> answers = openDbi(env, AnswerCodec.ANSWERS);
      Dbi<ByteBuffer> expiry = openDbi(env, AnswerCodec.EXPIRY);
      if (answers == null || expiry == null) {
        env.close();
        return Shard.failed(index, dir, "has no '" + (answers == null ? AnswerCodec.ANSWERS : AnswerCodec.EXPIRY)
            + "' database: not a shoal cache shard");
      }
      return new Shard(index, dir, env, new ShardDatabases(answers, expiry), null);
    } catch (LmdbException | IllegalArgumentException e) {
      if (env != null) {
        env.close();
      }
      return Shard.failed(index, dir, "cannot open: " + e.getMessage());
    }
  }

  private static Dbi<ByteBuffer> openDbi(Env<ByteBuffer> env, String name) {
    try {
      return env.openDbi(name);
    } catch (Dbi.KeyNotFoundException e) {
      return null;
    }
  }
}
