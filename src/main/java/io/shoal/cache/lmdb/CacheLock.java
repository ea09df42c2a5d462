package io.shoal.cache.lmdb;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The exclusive lock on {@code <path>/shoal-cache.lock} that a process holds for as long as it
 * writes a cache directory: a node for its whole life, {@code shoal cache flush --path} and
 * {@code check} while they run. The lock file holds the holder's process id, so a refusal can
 * name it. The operating system drops the lock when its process dies, SIGKILL included, so a
 * crashed node never leaves a stale lock behind.
 */
final class CacheLock implements AutoCloseable {
  static final String LOCK_FILE = "shoal-cache.lock";

  /**
   * Directories this process holds. Java file locks are POSIX record locks, owned by the process:
   * closing any other channel this JVM has on the lock file releases them, so a second look at a
   * held lock through the file would silently give it away. LMDB has the same rule for its
   * environments (never open one twice in a process), so a directory held here is never probed.
   */
  private static final Set<Path> HELD_HERE = ConcurrentHashMap.newKeySet();

  private final Path held;
  private final FileChannel channel;
  private final FileLock lock;

  private CacheLock(Path held, FileChannel channel, FileLock lock) {
    this.held = held;
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Takes the lock on {@code directory} (which must exist) or throws {@link CacheInUseException}
   * naming its holder.
   */
  static CacheLock acquire(Path directory) throws IOException {
    Path key = directory.toRealPath();
    if (!HELD_HERE.add(key)) {
      throw new CacheInUseException(directory, CacheInUseException.Holder.THIS_PROCESS, -1);
    }
    FileChannel channel = null;
    try {
      Path file = directory.resolve(LOCK_FILE);
      channel = FileChannel.open(file, CREATE, READ, WRITE);
      ShardFiles.restrict(file, ShardFiles.PRIVATE_FILE);
      FileLock lock = channel.tryLock();
      if (lock == null) {
        throw new CacheInUseException(directory, CacheInUseException.Holder.OTHER_PROCESS, holderPid(channel));
      }
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      return new CacheLock(key, channel, lock);
    } catch (IOException | RuntimeException e) {
      if (channel != null) {
        channel.close();
      }
      HELD_HERE.remove(key);
      throw e;
    }
  }

  /**
   * Throws {@link CacheInUseException} when a process holds {@code directory}'s lock, without
   * keeping any lock itself: readers (stat, dump) may look at a cache a node is using, and must
   * never keep a node from starting.
   */
  static void probe(Path directory) throws IOException {
    Path key = directory.toRealPath();
    if (HELD_HERE.contains(key)) {
      throw new CacheInUseException(directory, CacheInUseException.Holder.THIS_PROCESS, -1);
    }
    Path file = directory.resolve(LOCK_FILE);
    // A shared lock needs only read access, so a reader without write permission can still tell.
    try (FileChannel channel = FileChannel.open(file, READ)) {
      FileLock shared = channel.tryLock(0, Long.MAX_VALUE, true);
      if (shared == null) {
        throw new CacheInUseException(directory, CacheInUseException.Holder.OTHER_PROCESS, holderPid(channel));
      }
      shared.release();
    } catch (NoSuchFileException e) {
      // No node has ever locked it: not in use.
    }
  }

  private static long holderPid(FileChannel channel) {
    try {
      ByteBuffer buf = ByteBuffer.allocate(32);
      channel.read(buf, 0);
      String text = new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).trim();
      return text.isEmpty() ? -1 : Long.parseLong(text);
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  @Override
  public void close() {
    try {
      if (lock.isValid()) {
        lock.release();
      }
      channel.close();
    } catch (IOException e) {
      // Closing the channel drops the lock in any case; nothing else to undo.
    } finally {
      HELD_HERE.remove(held);
    }
  }
}
