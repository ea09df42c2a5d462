package io.shoal.cache.lmdb;

import java.nio.file.Path;

/** A cache directory is held by a running shoal (or is already open in this process). */
public final class CacheInUseException extends IllegalStateException {
  /** Who holds the directory. */
  public enum Holder { THIS_PROCESS, OTHER_PROCESS }

  private final Path directory;
  private final Holder holder;
  private final long pid;

  CacheInUseException(Path directory, Holder holder, long pid) {
    super(describe(directory, holder, pid));
    this.directory = directory;
    this.holder = holder;
    this.pid = pid;
  }

  private static String describe(Path directory, Holder holder, long pid) {
    return switch (holder) {
      case THIS_PROCESS -> directory + " is already open in this process";
      case OTHER_PROCESS -> directory + " is in use by a running shoal"
          + (pid > 0 ? " (pid " + pid + ")" : "") + ": it holds " + directory.resolve(CacheLock.LOCK_FILE);
    };
  }

  public Path directory() {
    return directory;
  }

  public Holder holder() {
    return holder;
  }

  /** The holder's process id as it wrote it in the lock file, or -1 when unknown. */
  public long pid() {
    return pid;
  }
}
