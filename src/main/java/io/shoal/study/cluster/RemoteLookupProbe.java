package io.shoal.study.cluster;

import io.shoal.study.host.StudyException;
import io.shoal.study.measure.Dnsperf;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.MetricsScrape;
import io.shoal.study.scenario.Recipe;
import io.shoal.study.server.ShoalUnderTest;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Measures what asking the owner node adds to one query, on a clustered member after its measured
 * run, with no other load, in {@link #BATCHES} batches of fresh names ({@code p<i>.<zone>}, not in
 * the query file). For each batch:
 *
 * <ol>
 *   <li>node 0 is asked once for each name: every name is now in its owner's cache (node 0 fetched
 *       the ones it owns, the owner fetched the others on node 0's behalf);
 *   <li>first pass: node 1 is asked for each name once, one query at a time. A name node 1 owns is
 *       a local hit; every other name is in its owner's cache but not on node 1, so it is a remote
 *       lookup;
 *   <li>repeat pass: the same again. Every name is now local to node 1: all hits.
 * </ol>
 *
 * Only the first passes make node 1 ask an owner (node 0's lookups count on node 0, repeats are
 * local), so node 1's {@code shoal_cluster_remote_lookups_total} over the whole probe counts the
 * first passes' remote lookups. The difference of the two passes' mean latencies, spread over the
 * share of first-pass queries that were remote lookups, is the cost of one remote lookup: same
 * node, same names, same client, a moment apart, so JVM, host and client costs cancel out; the
 * batches alternate the passes so that a change in the host's load hits both alike.
 */
public final class RemoteLookupProbe {
  /** Names in all: enough for a stable mean at one query at a time. */
  public static final int NAMES = 1000;
  /** Batches the names are probed in, first and repeat passes alternating. */
  public static final int BATCHES = 10;
  /** shoal publishes its counters every second. */
  private static final Duration SETTLE = Duration.ofSeconds(2);

  /**
   * @param queries completed queries of the first passes
   * @param remote node 1's remote lookups during the probe (the first passes')
   * @param overheadMs the estimated cost of one remote lookup; null without remote lookups
   */
  public record Result(long queries, double firstMs, double repeatMs, RemoteLookups remote, Double overheadMs,
      Double p50Ms, Double p90Ms) {

    /** The lines of probe.txt and of the summary. */
    public String describe() {
      return String.format(Locale.ROOT, "first passes: %d queries, mean %.4f ms, %d remote lookups (answered %d, "
              + "timeout %d, failed %d, refused %d); repeat passes (all local hits): mean %.4f ms; remote lookup overhead: %s",
          queries, firstMs, remote.total(), remote.answered(), remote.timeout(), remote.failed(), remote.refused(), repeatMs,
          overheadMs == null ? "not measured (no remote lookups)" : String.format(Locale.ROOT, "%.4f ms", overheadMs))
          + (p50Ms == null ? "" : String.format(Locale.ROOT, "; round trip of an answered lookup as node-1 timed it "
              + "(shoal_cluster_remote_lookup_seconds, so bounded by its buckets): median <= %s ms, p90 <= %s ms",
              millis(p50Ms), millis(p90Ms)));
    }

    private static String millis(double ms) {
      return Double.isInfinite(ms) ? "inf" : String.format(Locale.ROOT, "%.2f", ms);
    }
  }

  private RemoteLookupProbe() {}

  /**
   * The cost of one remote lookup: the first passes' extra latency over the repeat passes, per
   * remote lookup rather than per query. Null when there were no remote lookups or no queries.
   * Negative when the host's noise outweighed the overhead; reported as measured.
   */
  static Double overheadMillis(double firstMs, double repeatMs, long queries, long remoteLookups) {
    if (remoteLookups <= 0 || queries <= 0) {
      return null;
    }
    return (firstMs - repeatMs) * queries / Math.min(remoteLookups, queries);
  }

  /** Runs the probe on the first two nodes of a formed cluster; files go to {@code dir}. */
  public static Result run(ShoalNodes nodes, Recipe recipe, Dnsperf dnsperf, Path dir) throws IOException, StudyException {
    Files.createDirectories(dir);
    ShoalUnderTest warm = nodes.node(0);
    ShoalUnderTest probed = nodes.node(1);
    MetricsScrape scrapeBefore = probed.scrape(dir.resolve("stats-before.txt"));
    RemoteLookups before = RemoteLookups.of(scrapeBefore);
    List<DnsperfReport> first = new ArrayList<>();
    List<DnsperfReport> repeat = new ArrayList<>();
    int perBatch = NAMES / BATCHES;
    for (int b = 0; b < BATCHES; b++) {
      Path names = dir.resolve("names-" + b + ".txt");
      writeNames(names, recipe.zone(), b * perBatch, perBatch);
      dnsperf.onePass(warm.port(), names, dir.resolve("dnsperf-warm-owners-" + b + ".txt"));
      first.add(dnsperf.onePass(probed.port(), names, dir.resolve("dnsperf-first-" + b + ".txt")));
      repeat.add(dnsperf.onePass(probed.port(), names, dir.resolve("dnsperf-repeat-" + b + ".txt")));
    }
    pause();
    MetricsScrape scrapeAfter = probed.scrape(dir.resolve("stats-after.txt"));
    RemoteLookups remote = RemoteLookups.of(scrapeAfter).minus(before);
    RemoteLookupLatency latency = RemoteLookupLatency.between(List.of(scrapeBefore), List.of(scrapeAfter));
    DnsperfReport firsts = DnsperfReport.sumOver(first);
    DnsperfReport repeats = DnsperfReport.sumOver(repeat);
    Result r = new Result(firsts.completed(), firsts.avgLatencyMillis(), repeats.avgLatencyMillis(), remote,
        overheadMillis(firsts.avgLatencyMillis(), repeats.avgLatencyMillis(), firsts.completed(), remote.total()),
        latency.p50Ms(), latency.p90Ms());
    Files.writeString(dir.resolve("probe.txt"), "warmed owners through " + warm.label() + ", probed "
        + probed.label() + " in " + BATCHES + " batches of " + perBatch + " names\n" + r.describe() + "\n",
        StandardCharsets.UTF_8);
    return r;
  }

  private static void writeNames(Path file, String zone, int from, int count) throws IOException {
    String suffix = "." + (zone.endsWith(".") ? zone.substring(0, zone.length() - 1) : zone) + " A\n";
    try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      for (int i = from; i < from + count; i++) {
        out.write("p" + i + suffix);
      }
    }
  }

  private static void pause() throws StudyException {
    try {
      Thread.sleep(SETTLE.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StudyException("interrupted", e);
    }
  }
}
