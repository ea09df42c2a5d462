package io.shoal.cache.lmdb;

/**
 * What a shard's last commit left, for readers to apply {@code max_entries} to answers that are
 * not committed yet: {@code slack} free places under the shard's capacity, and the expiry times
 * of the entries that expire soonest, in order. With {@code n} answers waiting for their commit,
 * evict_one would already have removed the first {@code n - slack} of those entries; readers
 * treat them as gone, so uncommitted answers never add to the cache's capacity.
 */
record Horizon(long slack, long[] soonest) {
  /**
   * Expiry times a horizon holds at least: how many uncommitted fills it can account for. It
   * holds twice the last batch if that is more, so a long commit window stays accounted for.
   */
  static final int DEPTH = 128;

  /** Whether an entry expiring at {@code expiresAt} is displaced by {@code waiting} uncommitted answers. */
  boolean displaces(long waiting, long expiresAt) {
    long over = waiting - slack;
    if (over <= 0 || soonest.length == 0) {
      return false;
    }
    return expiresAt <= soonest[(int) Math.min(over, soonest.length) - 1];
  }
}
