package io.shoal.cache.lmdb;

import java.util.Optional;

/** A cache directory the offline tools cannot use: missing, not a shoal cache, in use, unreadable. */
public final class CacheDirectoryException extends Exception {
  private final CacheInUseException inUse;

  CacheDirectoryException(String message) {
    super(message);
    this.inUse = null;
  }

  CacheDirectoryException(CacheInUseException inUse) {
    super(inUse.getMessage(), inUse);
    this.inUse = inUse;
  }

  /** Set when the directory is held by a running node (or already open in this process). */
  public Optional<CacheInUseException> inUse() {
    return Optional.ofNullable(inUse);
  }
}
