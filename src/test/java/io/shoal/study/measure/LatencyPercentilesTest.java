package io.shoal.study.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Latency percentiles from dnsperf -v's per-query lines, and the condensed output the study keeps. */
class LatencyPercentilesTest {

  /** dnsperf 2.10 -v: a header, one line per query (given up: "> T"), then the statistics block. */
  private static String verboseRun(int answered) {
    StringBuilder t = new StringBuilder("DNS Performance Testing Tool\nVersion 2.10.0\n\n[Status] Command line: dnsperf"
        + " -v\n[Status] Sending queries (to 127.0.0.1:5300)\n");
    // latencies 1 ms .. answered ms, out of order
    for (int i = answered; i >= 1; i--) {
      t.append(String.format(java.util.Locale.ROOT, "> NOERROR n%d.bench.test. A %.6f%n", i, i / 1000.0));
    }
    t.append("> T lost.bench.test. A\n");
    t.append("""
        Statistics:

          Queries sent:         %d
          Queries completed:    %d (99.99%%)
          Queries lost:         1 (0.01%%)

          Response codes:       NOERROR %d (100.00%%)
          Run time (s):         1.000000
          Queries per second:   %d.000000

          Average Latency (s):  0.050500 (min 0.001000, max 0.100000)
          Latency StdDev (s):   0.028866
        """.formatted(answered + 1, answered, answered, answered));
    return t.toString();
  }

  @Test
  void percentilesAreNearestRankOverTheCompletedQueriesAndTheCondensedOutputStillParses(@TempDir Path dir)
      throws IOException {
    Path verbose = dir.resolve("dnsperf-verbose.txt");
    Files.writeString(verbose, verboseRun(100));
    LatencyPercentiles.Condensed c = LatencyPercentiles.condense(verbose, dir.resolve("dnsperf.txt"));
    assertFalse(Files.exists(verbose), "the per-query lines are dropped");
    assertEquals(100, c.percentiles().count(), "the query given up is not a latency");
    assertEquals(50.0, c.percentiles().millis(50), 1e-9);
    assertEquals(99.0, c.percentiles().millis(99), 1e-9);
    assertEquals(100.0, c.percentiles().millis(100), 1e-9);
    String kept = Files.readString(dir.resolve("dnsperf.txt"));
    assertEquals(c.text(), kept);
    assertFalse(kept.contains("> NOERROR"), kept);
    assertTrue(kept.contains("p99 99.000 ms"), kept);
    DnsperfReport r = DnsperfReport.parse(kept);
    assertEquals(100, r.completed());
    assertEquals(1, r.lost());
  }

  @Test
  void runsOfSeveralNodesAreOnePopulation(@TempDir Path dir) throws IOException {
    Path a = dir.resolve("a.txt");
    Path b = dir.resolve("b.txt");
    Files.writeString(a, verboseRun(10));
    Files.writeString(b, verboseRun(90));
    LatencyPercentiles all = LatencyPercentiles.of(List.of(
        LatencyPercentiles.condense(a, dir.resolve("a-kept.txt")).percentiles(),
        LatencyPercentiles.condense(b, dir.resolve("b-kept.txt")).percentiles()));
    assertEquals(100, all.count());
    // 1..10 and 1..90 ms: the 99th of 100 values is 89 ms
    assertEquals(89.0, all.millis(99), 1e-9);
  }

  @Test
  void noCompletedQueryHasNoPercentile() {
    LatencyPercentiles none = LatencyPercentiles.of(List.of());
    assertNull(none.millis(99));
    assertEquals("no completed query", none.describe());
    assertNull(LatencyPercentiles.latencyOf("> T n.bench.test. A"));
    assertEquals(0.000123, LatencyPercentiles.latencyOf("> SERVFAIL n.bench.test. A 0.000123"), 1e-12);
  }
}
