package io.shoal.study.report;

import java.util.List;
import java.util.Locale;

/**
 * One member at one cache size, as a row of cache_memory.csv: how much its resident set grew while
 * it cached {@code entries} answers, per answer, and what its warm hits over those names cost.
 *
 * @param entriesTarget the names the fill asked, each once
 * @param entries the answers the member said it held once filled (its own count)
 * @param rssIdleKib VmRSS before the fill, the member up and idle (shoal: after a full collection,
 *     so both of its deltas start from the same settled process)
 * @param rssFilledKib VmRSS once the member held the answers
 * @param rssFilledAfterGcKib VmRSS after a full collection (shoal); for a member without a garbage
 *     collector the same reading as {@code rssFilledKib}
 * @param qps warm hits a second over the same names, as dnsperf measured them
 * @param cpuMicrosPerQuery user + system CPU of the member per answered warm hit; null if unread
 * @param heapIdleKib the JVM heap in use before the fill, after a full collection; null for a peer
 * @param heapFilledKib the JVM heap in use once filled, after a full collection; null for a peer
 * @param fillLost queries of the fill dnsperf got no answer for: names the member may not hold
 * @param rssFilledQuietKib VmRSS after the full collection and the plan's quiet time without queries
 *     (a JVM member: what it has given back by then, the heap's free regions and the C heap); null
 *     when not read (a peer, or a plan without a quiet time)
 */
public record CacheMemoryRow(String member, int entriesTarget, long entries, long rssIdleKib, long rssFilledKib,
    long rssFilledAfterGcKib, double qps, Double cpuMicrosPerQuery, Long heapIdleKib, Long heapFilledKib,
    long fillLost, Long rssFilledQuietKib) {

  /** The header of cache_memory.csv, in order. Changing it breaks every reader of published results. */
  public static final List<String> COLUMNS = List.of(
      "member", "entries_target", "entries", "rss_idle_kib", "rss_filled_kib", "rss_filled_after_gc_kib",
      "bytes_per_entry", "bytes_per_entry_after_gc", "qps", "cpu_us_per_query", "heap_used_idle_kib",
      "heap_used_filled_kib", "fill_lost", "rss_filled_quiet_kib", "bytes_per_entry_quiet");

  /** Resident bytes the fill added per cached answer; null if nothing was cached. */
  public Double bytesPerEntry() {
    return perEntry(rssFilledKib - rssIdleKib);
  }

  /** {@link #bytesPerEntry()} with the filled reading taken after a full collection. */
  public Double bytesPerEntryAfterGc() {
    return perEntry(rssFilledAfterGcKib - rssIdleKib);
  }

  /**
   * {@link #bytesPerEntry()} with the filled reading taken after the quiet time; for a member not
   * read then (a peer, which gives nothing back over time), its one filled reading.
   */
  public Double bytesPerEntryQuiet() {
    return perEntry((rssFilledQuietKib == null ? rssFilledKib : rssFilledQuietKib) - rssIdleKib);
  }

  /** Live heap bytes the fill added per cached answer (JVM members only); null for a peer. */
  public Double heapBytesPerEntry() {
    return heapIdleKib == null || heapFilledKib == null ? null : perEntry(heapFilledKib - heapIdleKib);
  }

  private Double perEntry(long kib) {
    return entries <= 0 ? null : kib * 1024.0 / entries;
  }

  public List<String> cells() {
    return List.of(member, Integer.toString(entriesTarget), Long.toString(entries), Long.toString(rssIdleKib),
        Long.toString(rssFilledKib), Long.toString(rssFilledAfterGcKib), optional(bytesPerEntry(), "%.1f"),
        optional(bytesPerEntryAfterGc(), "%.1f"), String.format(Locale.ROOT, "%.1f", qps),
        optional(cpuMicrosPerQuery, "%.2f"), whole(heapIdleKib), whole(heapFilledKib), Long.toString(fillLost),
        whole(rssFilledQuietKib), optional(bytesPerEntryQuiet(), "%.1f"));
  }

  /** Reads a row back from its cells, the inverse of {@link #cells()}; the per-entry figures are derived. */
  public static CacheMemoryRow fromCells(List<String> c) {
    if (c.size() != COLUMNS.size()) {
      throw new IllegalArgumentException("a cache_memory.csv row has " + COLUMNS.size() + " cells: " + c);
    }
    Long quiet = c.get(13).isEmpty() ? null : Long.valueOf(c.get(13));
    return new CacheMemoryRow(c.get(0), Integer.parseInt(c.get(1)), Long.parseLong(c.get(2)),
        Long.parseLong(c.get(3)), Long.parseLong(c.get(4)), Long.parseLong(c.get(5)), Double.parseDouble(c.get(8)),
        c.get(9).isEmpty() ? null : Double.valueOf(c.get(9)), c.get(10).isEmpty() ? null : Long.valueOf(c.get(10)),
        c.get(11).isEmpty() ? null : Long.valueOf(c.get(11)), Long.parseLong(c.get(12)), quiet);
  }

  private static String optional(Double v, String format) {
    return v == null ? "" : String.format(Locale.ROOT, format, v);
  }

  private static String whole(Long v) {
    return v == null ? "" : Long.toString(v);
  }
}
