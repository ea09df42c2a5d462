package io.shoal.files;

/**
 * Bounds on every file shoal reads ({@code shoal.files}): RPZ and trust-anchor zone files, hosts
 * files and domain lists. A file past one is refused whole, so a file that includes itself, a
 * {@code $GENERATE} over millions of names or a list far larger than meant stops the start (or
 * is refused on reload) with a message, not a crash or an OutOfMemoryError.
 *
 * @param maxBytes bytes one file may hold, its {@code $INCLUDE}d files counted with it
 * @param maxEntries records (or listed names) one file may yield, included and generated ones counted
 * @param maxIncludeDepth how deep {@code $INCLUDE}s may nest; 0 refuses every {@code $INCLUDE}
 * @param maxGenerate records one {@code $GENERATE} line may make
 */
public record FileLimits(long maxBytes, long maxEntries, int maxIncludeDepth, long maxGenerate) {
  /** The section the limits are configured in, named in every message about them. */
  public static final String SECTION = "shoal.files";

  /** The embedded defaults ({@code conf/application.conf}). */
  public static final FileLimits DEFAULTS = new FileLimits(64L << 20, 2_000_000, 4, 65_536);
}
