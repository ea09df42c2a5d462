package io.shoal.study.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Prometheus text parsing, on a scrape recorded from a running shoal after a dnsperf run. */
class MetricsScrapeTest {

  @Test
  void sumsShoalCacheCountersFromARealScrape() throws IOException {
    MetricsScrape s = MetricsScrape.parse(DnsperfReportTest.resource("shoal-scrape.txt"));
    assertEquals(1704.0, s.sum("shoal_cache_hits_total").orElseThrow());
    assertEquals(3168.0, s.sum("shoal_cache_misses_total").orElseThrow());
    assertEquals(2952.0, s.sum("shoal_cache_fill_seconds_count").orElseThrow());
    assertEquals(0.061812506, s.sum("shoal_cache_fill_seconds_sum").orElseThrow(), 1e-12);
    assertEquals(904.0, s.sum("shoal_cache_eviction_seconds_count").orElseThrow());
    assertEquals(0.004772188, s.sum("shoal_cache_eviction_seconds_sum").orElseThrow(), 1e-12);
    assertEquals(4872.0, s.sum("shoal_queries_total").orElseThrow());
    assertEquals(0.0, s.sum("shoal_dropped_total").orElseThrow());
  }

  @Test
  void keepsLabelsAndSkipsComments() throws IOException {
    MetricsScrape s = MetricsScrape.parse(DnsperfReportTest.resource("shoal-scrape.txt"));
    assertTrue(s.samples().stream().anyMatch(x -> x.name().equals("shoal_cache_hits_total")
        && x.labels().equals(Map.of("cache", "answers", "backend", "memory"))));
    assertTrue(s.samples().stream().noneMatch(x -> x.name().startsWith("#")));
  }

  @Test
  void absentMetricIsEmptyNotZero() {
    assertTrue(MetricsScrape.parse("# HELP x\nother_total 3\n").sum("shoal_cache_hits_total").isEmpty());
  }

  @Test
  void readsEscapedLabelValuesAndSpecialValues() {
    MetricsScrape s = MetricsScrape.parse(
        "m{a=\"x\\\"}y\",b=\"2\"} 1.5\nm{a=\"z\"} +Inf\nbare 7 1700000000000\n");
    assertEquals("x\"}y", s.samples().get(0).labels().get("a"));
    assertEquals(Double.POSITIVE_INFINITY, s.samples().get(1).value());
    assertEquals(7.0, s.sum("bare").orElseThrow());
  }
}
