package io.shoal.study.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shoal.study.measure.CacheCounters;
import io.shoal.study.measure.DnsperfReport;
import io.shoal.study.measure.DnsperfReportTest;
import io.shoal.study.measure.MetricsScrape;
import io.shoal.study.report.ClusterRow;
import io.shoal.study.report.StudyCsv;
import io.shoal.study.server.ShoalUnderTest;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A member of several nodes as one row: dnsperf runs and counters summed over the nodes (on output
 * recorded from the three nodes of a real quick cluster_churn run), remote lookups from real
 * scrapes, the two hit rates, and cluster.csv.
 */
class ClusterResultsTest {

  private static List<DnsperfReport> threeNodes() throws IOException {
    return List.of(
        DnsperfReport.parse(DnsperfReportTest.resource("cluster/dnsperf-node-0.txt")),
        DnsperfReport.parse(DnsperfReportTest.resource("cluster/dnsperf-node-1.txt")),
        DnsperfReport.parse(DnsperfReportTest.resource("cluster/dnsperf-node-2.txt")));
  }

  @Test
  void countsAndRatesAreAddedOverTheNodes() throws IOException {
    DnsperfReport sum = DnsperfReport.sumOver(threeNodes());
    assertEquals(297 + 278 + 285, sum.sent());
    assertEquals(99 + 121 + 120, sum.completed());
    assertEquals(198 + 157 + 165, sum.lost());
    assertEquals(12.703208 + 15.150751 + 15.113874, sum.queriesPerSecond(), 1e-9);
    double longest = threeNodes().stream().mapToDouble(DnsperfReport::runSeconds).max().orElseThrow();
    assertEquals(longest, sum.runSeconds(), 1e-12);
  }

  @Test
  void latencyIsTheMeanOverEveryCompletedQueryNotTheMeanOfTheNodesMeans() throws IOException {
    DnsperfReport sum = DnsperfReport.sumOver(threeNodes());
    double weighted = (1.606598 * 99 + 2.320182 * 121 + 2.210652 * 120) / 340;
    assertEquals(weighted * 1000, sum.avgLatencyMillis(), 1e-9);
    double unweighted = (1.606598 + 2.320182 + 2.210652) / 3;
    // the two differ here because node-0 completed fewer, faster queries
    assertEquals(2073.745, sum.avgLatencyMillis(), 0.001);
    assertEquals(2045.811, unweighted * 1000, 0.001);
  }

  @Test
  void aNodeThatCompletedNothingAddsNoLatency() throws IOException {
    DnsperfReport nobody = DnsperfReport.parse(DnsperfReportTest.resource("dnsperf-nobody.txt"));
    DnsperfReport shoal = DnsperfReport.parse(DnsperfReportTest.resource("dnsperf-shoal.txt"));
    DnsperfReport sum = DnsperfReport.sumOver(List.of(shoal, nobody));
    assertEquals(shoal.avgLatencySeconds(), sum.avgLatencySeconds(), 1e-12);
    assertEquals(shoal.lost() + nobody.lost(), sum.lost());
    assertEquals(0.0, DnsperfReport.sumOver(List.of(nobody)).avgLatencySeconds());
    assertThrows(IllegalArgumentException.class, () -> DnsperfReport.sumOver(List.of()));
  }

  @Test
  void cacheCountersAddUpAndStayUnknownIfANodeDoesNotReportThem() {
    CacheCounters a = new CacheCounters(10L, 20L, 20L, 0.002, 5L, 0.001);
    CacheCounters b = new CacheCounters(1L, 2L, 2L, 0.0005, 0L, 0.0);
    CacheCounters sum = a.plus(b);
    assertEquals(11L, sum.hits());
    assertEquals(22L, sum.misses());
    assertEquals(0.0025, sum.fillSumSeconds(), 1e-12);
    assertEquals(5L, sum.evictionCount());
    assertNull(a.plus(CacheCounters.NONE).hits());
  }

  @Test
  void remoteLookupsByOutcomeFromRealScrapes() throws IOException {
    MetricsScrape before = MetricsScrape.parse(DnsperfReportTest.resource("cluster/scrape-node-1-before.txt"));
    MetricsScrape after = MetricsScrape.parse(DnsperfReportTest.resource("cluster/scrape-node-1-after.txt"));
    // Kamon registers the counter on first use: before any remote lookup there is no series
    assertEquals(RemoteLookups.NONE, RemoteLookups.of(before));
    RemoteLookups window = RemoteLookups.of(after).minus(RemoteLookups.of(before));
    assertEquals(new RemoteLookups(2, 156, 0, 0), window);
    assertEquals(158, window.total());
    assertEquals(2, window.answeredByOwner());
    assertEquals(new RemoteLookups(4, 312, 0, 0), window.plus(window));
    CacheCounters counters = ShoalUnderTest.countersOf(after).minus(ShoalUnderTest.countersOf(before));
    assertEquals(6L, counters.hits());
    assertEquals(507L, counters.misses());
  }

  @Test
  void remoteLookupPercentilesAreTheBucketBoundsOfWhatWasRecordedBetweenScrapes() throws IOException {
    double inf = Double.POSITIVE_INFINITY;
    TreeMap<Double, Double> before = new TreeMap<>(Map.of(0.0005, 10.0, 0.001, 10.0, 0.002, 10.0, inf, 10.0));
    // 100 recorded in between: 50 within 0.5 ms, 90 within 1 ms, 98 within 2 ms
    TreeMap<Double, Double> after = new TreeMap<>(Map.of(0.0005, 60.0, 0.001, 100.0, 0.002, 108.0, inf, 110.0));
    assertEquals(0.5, RemoteLookupLatency.quantileBoundMillis(before, after, 0.5), 1e-12);
    assertEquals(1.0, RemoteLookupLatency.quantileBoundMillis(before, after, 0.9), 1e-12);
    assertEquals(inf, RemoteLookupLatency.quantileBoundMillis(before, after, 0.99));
    assertNull(RemoteLookupLatency.quantileBoundMillis(before, before, 0.5));
    // buckets are read from a real scrape, summed over label sets
    MetricsScrape scrape = MetricsScrape.parse(DnsperfReportTest.resource("cluster/scrape-node-1-after.txt"));
    TreeMap<Double, Double> upstream = scrape.buckets("shoal_upstream_seconds");
    assertEquals(1.0, upstream.get(0.0025), 0.0);
    assertEquals(scrape.sum("shoal_upstream_seconds_count").orElseThrow(), upstream.get(inf), 0.0);
  }

  /** A node's scrape holding only the owner-lookup histogram, cumulative counts per bound in seconds. */
  private static MetricsScrape roundTrips(String node, double... cumulative) {
    String[] bounds = {"1.0E-4", "5.0E-4", "0.001", "0.002", "0.005", "+Inf"};
    StringBuilder text = new StringBuilder("# TYPE shoal_cluster_remote_lookup_seconds histogram\n");
    for (int i = 0; i < bounds.length; i++) {
      text.append("shoal_cluster_remote_lookup_seconds_bucket{le=\"").append(bounds[i]).append("\",node=\"")
          .append(node).append("\"} ").append(cumulative[i]).append('\n');
    }
    return MetricsScrape.parse(text.append("shoal_cluster_remote_lookups_total{outcome=\"answered\",node=\"")
        .append(node).append("\"} ").append(cumulative[bounds.length - 1]).append('\n').toString());
  }

  @Test
  void theOwnerLookupsLatencyOfAMeasuredRunSumsEveryNodesHistogram() throws IOException {
    List<MetricsScrape> before = List.of(
        roundTrips("node-0", 0, 5, 10, 10, 10, 10),
        roundTrips("node-1", 0, 0, 0, 0, 0, 0));
    // over the run node-0 answered 100 lookups, all within 0.5 ms; node-1 100 over 1 ms, 80 of them within 2 ms:
    // of the 200, 100 within 0.5 ms (the median), 180 within 2 ms (p90)
    List<MetricsScrape> after = List.of(
        roundTrips("node-0", 40, 105, 110, 110, 110, 110),
        roundTrips("node-1", 0, 0, 0, 80, 100, 100));
    RemoteLookupLatency latency = RemoteLookupLatency.between(before, after);
    assertEquals(new RemoteLookupLatency(0.5, 2.0), latency);
    // node-1 alone: 80 of its 100 within 2 ms, so its p90 is only within 5 ms
    assertEquals(new RemoteLookupLatency(2.0, 5.0), RemoteLookupLatency.between(before.subList(1, 2), after.subList(1, 2)));
    // no lookup answered during the run: no quantiles, empty cells
    assertEquals(RemoteLookupLatency.NONE, RemoteLookupLatency.between(after, after));
    assertEquals(RemoteLookupLatency.NONE, RemoteLookupLatency.between(List.of(MetricsScrape.parse("")),
        List.of(MetricsScrape.parse(""))));

    DnsperfReport sum = DnsperfReport.sumOver(threeNodes());
    CacheCounters counters = new CacheCounters(29L, 1379L, 1197L, 0.28, 0L, 0.0);
    RemoteLookups remote = RemoteLookups.of(after.get(0)).plus(RemoteLookups.of(after.get(1)))
        .minus(RemoteLookups.of(before.get(0)).plus(RemoteLookups.of(before.get(1))));
    ClusterRow.Capacity paced = new ClusterRow.Capacity("churn", 0.25, 81.5, 0.42, 3292, 0.05);
    List<String> cells = ClusterRow.of("paced-3", 3, true, sum, 0, counters, remote, latency, null, 1.7, paced).cells();
    assertEquals(List.of("0.500", "2.000", "3292", "0.05"), cells.subList(cells.size() - 4, cells.size()));
    assertEquals("200", cells.get(ClusterRow.COLUMNS.indexOf("remote_lookups_answered")));
    // outside a cluster there are no owner lookups to time, whatever the scrapes hold
    ClusterRow off = ClusterRow.of("independent-3", 3, false, sum, 0, counters, remote, latency, null, 1.7,
        ClusterRow.Capacity.NONE);
    assertNull(off.remoteLookupP50Ms());
    assertNull(off.remoteLookupP90Ms());
    assertNull(off.maxQpsPerNode());
    List<String> offCells = off.cells();
    assertEquals(List.of("", "", "", ""), offCells.subList(offCells.size() - 4, offCells.size()));
  }

  @Test
  void theCounterHitRateTakesOwnerSideLookupsOutOfTheDenominator() {
    // 1000 client queries on three nodes: 500 local hits, 500 local misses of which 300 went to an
    // owner, which answered them (200 from its cache, 100 fetched). The owners counted those 300
    // again: hits 500 + 200, misses 500 + 100.
    RemoteLookups remote = new RemoteLookups(300, 0, 0, 0);
    assertEquals(70.0, ClusterRow.cacheHitRatePct(700L, 600L, remote), 1e-9);
    // without the correction the same counters would claim 700 / 1300
    assertEquals(100.0 * 700 / 1300, ClusterRow.cacheHitRatePct(700L, 600L, RemoteLookups.NONE), 1e-9);
    // a timed-out lookup may not have reached the owner: it stays in the denominator
    assertEquals(70.0, ClusterRow.cacheHitRatePct(700L, 600L, new RemoteLookups(300, 50, 0, 0)), 1e-9);
    assertNull(ClusterRow.cacheHitRatePct(null, 600L, remote));
    assertNull(ClusterRow.cacheHitRatePct(0L, 0L, RemoteLookups.NONE));
  }

  @Test
  void aRowFromTheSummedNumbers() throws IOException {
    DnsperfReport sum = DnsperfReport.sumOver(threeNodes());
    CacheCounters counters = new CacheCounters(29L, 1379L, 1197L, 0.28, 0L, 0.0);
    RemoteLookups remote = new RemoteLookups(5, 543, 0, 0);
    ClusterRow on = ClusterRow.of("cluster-3", 3, true, sum, 1314, counters, remote, 6.0474, 1.7);
    assertEquals(0.0, on.fairHitRatePct()); // more upstream queries than answers: clamped at 0
    assertEquals(100.0 * 29 / (29 + 1379 - 5), on.cacheHitRatePct(), 1e-9);
    assertEquals(remote, on.remoteLookups());
    ClusterRow off = ClusterRow.of("independent-3", 3, false, sum, 170, counters, remote, null, null);
    assertEquals(100.0 * (1 - 170.0 / 340), off.fairHitRatePct(), 1e-9);
    assertNull(off.remoteLookupsAnswered());
    assertEquals(RemoteLookups.NONE, off.remoteLookups());
    assertEquals(100.0 * 29 / (29 + 1379), off.cacheHitRatePct(), 1e-9);
  }

  @Test
  void clusterCsvHasItsHeaderAndRoundTrips() throws IOException {
    DnsperfReport sum = DnsperfReport.sumOver(threeNodes());
    List<ClusterRow> rows = List.of(
        ClusterRow.of("memory", 1, false, DnsperfReport.parse(DnsperfReportTest.resource("dnsperf-shoal.txt")), 3168,
            new CacheCounters(1704L, 3168L, 2952L, 0.06, 904L, 0.004), RemoteLookups.NONE, null, null),
        ClusterRow.of("cluster-3", 3, true, sum, 1314, new CacheCounters(29L, 1379L, 1197L, 0.28, 0L, 0.0),
            new RemoteLookups(5, 543, 0, 0), new RemoteLookupLatency(0.5, 2.0), 6.0474, 1.7,
            new ClusterRow.Capacity("churn", 0.25, 81.5, 0.42, 1234, 0.31)));
    String text = StudyCsv.CLUSTER.render(rows);
    List<String> lines = text.lines().toList();
    assertEquals("member,nodes,cluster,achieved_qps,avg_latency_ms,sent,completed,lost,upstream_queries,"
        + "fair_hit_rate_pct,cache_hits,cache_misses,cache_hit_rate_pct,remote_lookups_answered,remote_lookups_timeout,"
        + "remote_lookups_failed,remote_lookups_refused,remote_lookup_overhead_ms,cpu_seconds,cpu_us_per_query,"
        + "group,cpu_quota,p99_latency_ms,load_cpu_seconds,remote_lookup_p50_ms,remote_lookup_p90_ms,max_qps_per_node,jit_cpu_seconds",
        lines.get(0));
    assertEquals("memory,1,off,1539.3,122.300,4872,4872,0,3168,34.98,1704,3168,34.98,,,,,,,,,,,,,,,", lines.get(1));
    assertEquals("cluster-3,3,on,43.0,2073.745,860,340,520,1314,0.00,29,1379,2.07,5,543,0,0,6.0474,1.70,5000.00,"
        + "churn,0.25,81.500,0.42,0.500,2.000,1234,0.31", lines.get(2));
    List<ClusterRow> back = StudyCsv.CLUSTER.parse(text);
    assertEquals(rows.get(1).member(), back.get(1).member());
    assertEquals(3, back.get(1).nodes());
    assertEquals(true, back.get(1).cluster());
    assertEquals(543L, back.get(1).remoteLookupsTimeout());
    assertEquals(6.0474, back.get(1).remoteLookupOverheadMs(), 1e-9);
    assertNull(back.get(0).remoteLookupsAnswered());
    assertNull(back.get(0).group());
    assertNull(back.get(0).cpuQuota());
    assertEquals("churn", back.get(1).group());
    assertEquals(0.25, back.get(1).cpuQuota(), 1e-9);
    assertEquals(81.5, back.get(1).p99LatencyMs(), 1e-9);
    assertEquals(0.42, back.get(1).loadCpuSeconds(), 1e-9);
    assertEquals(0.5, back.get(1).remoteLookupP50Ms(), 1e-9);
    assertEquals(2.0, back.get(1).remoteLookupP90Ms(), 1e-9);
    assertEquals(1234, back.get(1).maxQpsPerNode());
    assertEquals(0.31, back.get(1).jitCpuSeconds(), 1e-9);
    assertNull(back.get(0).jitCpuSeconds());
    assertNull(back.get(0).remoteLookupP50Ms());
    assertNull(back.get(0).maxQpsPerNode());
    assertThrows(IllegalArgumentException.class, () -> StudyCsv.CLUSTER.parse(StudyCsv.RESULTS.render(List.of())));
  }
}
