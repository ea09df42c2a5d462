package io.shoal.study.scenario;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * The memory-per-answer test of a scenario: for each cache size, each member in a fresh process
 * is filled with that many distinct names and its resident set read before and after, then asked
 * warm hits over the same names.
 *
 * @param sizes how many distinct names each fill caches, in the order they run
 * @param quickSizes the sizes of a --quick run
 * @param fillQps dnsperf's -Q during a fill: slow enough that the member loses none of the misses
 * @param fillOutstanding dnsperf's -q during a fill: enough that the rate, not the window, bounds it
 * @param idleLimit how long an idle member may take for its resident set to stop growing
 * @param entriesLimit how long a filled member may take to report every name cached
 * @param quiet how long a JVM member is left without queries after each full collection before its
 *     resident set is read (idle, and filled once more): time for what it gives back on its own (a
 *     periodic collection's uncommit, a periodic trim of the C heap) to happen; zero for no wait
 */
public record CacheMemoryPlan(List<Integer> sizes, List<Integer> quickSizes, int fillQps, int fillOutstanding,
    Duration idleLimit, Duration entriesLimit, Duration quiet) {

  /** The sizes when the scenario lists none. */
  public static final List<Integer> DEFAULT_SIZES = List.of(4096, 100_000, 1_000_000);
  /** The sizes of a --quick run when the scenario lists none: seconds per fill. */
  public static final List<Integer> DEFAULT_QUICK_SIZES = List.of(2048, 8192);
  /** The most names one fill asks: the query files are written whole before it runs. */
  static final int MAX_SIZE = 10_000_000;

  private static final Set<String> KEYS = Set.of(
      "sizes", "quick_sizes", "fill_qps", "fill_outstanding", "idle_limit", "entries_limit", "quiet");

  public CacheMemoryPlan {
    sizes = List.copyOf(sizes);
    quickSizes = List.copyOf(quickSizes);
  }

  /** The sizes this run measures. */
  public List<Integer> sizes(boolean quick) {
    return quick ? quickSizes : sizes;
  }

  /**
   * Reads a scenario's {@code cache_memory} block; every size must fit the recipe's
   * {@code max_entries}, so shoal evicts nothing, and the error names the key at fault.
   */
  static CacheMemoryPlan from(Config c, Recipe recipe) {
    ScenarioReader.allowOnly(c, "cache_memory.", KEYS);
    List<Integer> sizes = c.hasPath("sizes") ? c.getIntList("sizes") : DEFAULT_SIZES;
    List<Integer> quick = c.hasPath("quick_sizes") ? c.getIntList("quick_sizes") : DEFAULT_QUICK_SIZES;
    checkSizes("sizes", sizes, recipe.maxEntries());
    checkSizes("quick_sizes", quick, recipe.maxEntries());
    int qps = c.hasPath("fill_qps") ? c.getInt("fill_qps") : 20_000;
    if (qps < 1 || qps > 1_000_000) {
      throw new IllegalArgumentException("cache_memory.fill_qps: dnsperf -Q of a fill, from 1 to 1000000; is " + qps);
    }
    int outstanding = c.hasPath("fill_outstanding") ? c.getInt("fill_outstanding") : 2000;
    if (outstanding < 1 || outstanding > ScenarioReader.MAX_OUTSTANDING) {
      throw new IllegalArgumentException("cache_memory.fill_outstanding: dnsperf -q of a fill, from 1 to "
          + ScenarioReader.MAX_OUTSTANDING + "; is " + outstanding);
    }
    Duration idle = c.hasPath("idle_limit") ? c.getDuration("idle_limit") : Duration.ofSeconds(20);
    Duration entries = c.hasPath("entries_limit") ? c.getDuration("entries_limit") : Duration.ofSeconds(60);
    if (idle.compareTo(Duration.ofSeconds(1)) < 0 || entries.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("cache_memory.idle_limit and entries_limit: at least 1s each; are "
          + idle + " and " + entries);
    }
    Duration quiet = c.hasPath("quiet") ? c.getDuration("quiet") : Duration.ZERO;
    if (quiet.isNegative() || quiet.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException("cache_memory.quiet: from 0s to 10m; is " + quiet);
    }
    return new CacheMemoryPlan(sizes, quick, qps, outstanding, idle, entries, quiet);
  }

  private static void checkSizes(String key, List<Integer> sizes, long maxEntries) {
    if (sizes.isEmpty()) {
      throw new IllegalArgumentException("cache_memory." + key + ": list at least one size");
    }
    for (int n : sizes) {
      if (n < 1 || n > MAX_SIZE) {
        throw new IllegalArgumentException("cache_memory." + key + ": each size from 1 to " + MAX_SIZE + "; is " + n);
      }
      // one more than the names: the answer to the readiness query is cached too
      if (n >= maxEntries) {
        throw new IllegalArgumentException("cache_memory." + key + ": " + n + " names do not fit recipe.max_entries ("
            + maxEntries + ") with room to spare; shoal would evict, and entries would not be what was asked");
      }
    }
    if (sizes.stream().distinct().count() != sizes.size()) {
      throw new IllegalArgumentException("cache_memory." + key + ": a size is listed twice: " + sizes);
    }
  }
}
