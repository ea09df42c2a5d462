package io.shoal.study;

import static io.shoal.study.ResultsCsvTest.peerRow;
import static io.shoal.study.ResultsCsvTest.shoalRow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The "At a glance" lines: computed from the rows, relative to the baseline member. */
class StudySummaryTest {

  @Test
  void slowerMembersAreSaidToCostAPercentageOfTheBaselinesQps() {
    List<String> lines = StudySummary.atAGlance(List.of(
        shoalRow("memory", null, 20000, 50.1, 0.02),
        shoalRow("lmdb-full", "full", 12600, 49.8, 0.35)), "memory");
    assertEquals("memory (baseline): ~20,000 qps, hit rate 50.1%, fill mean 0.0200 ms.", lines.get(0));
    assertEquals("lmdb-full costs about 37% QPS versus memory (~12,600 vs ~20,000 qps); "
        + "hit rate 49.8% vs 50.1%; fill mean 0.350 ms vs 0.0200 ms.", lines.get(1));
  }

  @Test
  void fasterAndEqualMembersAreSaidSo() {
    List<String> lines = StudySummary.atAGlance(List.of(
        peerRow("unbound", 31000, 49.5),
        shoalRow("shoal-memory", null, 20000, 50.0, 0.02),
        peerRow("dnsmasq", 20040, 48.0)), "shoal-memory");
    assertEquals("shoal-memory (baseline): ~20,000 qps, hit rate 50.0%, fill mean 0.0200 ms.", lines.get(0));
    assertEquals("unbound is about 55% faster than shoal-memory (~31,000 vs ~20,000 qps); hit rate 49.5% vs 50.0%.",
        lines.get(1));
    assertEquals("dnsmasq matches shoal-memory on QPS within 1% (~20,000 vs ~20,000 qps); hit rate 48.0% vs 50.0%.",
        lines.get(2));
  }

  @Test
  void moreThanDoubleIsSaidAsAMultiple() {
    List<String> lines = StudySummary.atAGlance(List.of(
        shoalRow("shoal-memory", null, 1937.1, 42.2, 0.0137), peerRow("unbound", 32107.0, 49.3)), "shoal-memory");
    assertEquals("unbound reaches about 16.6x the QPS of shoal-memory (~32,100 vs ~1,940 qps); "
        + "hit rate 49.3% vs 42.2%.", lines.get(1));
  }

  @Test
  void aMissingBaselineFallsBackToTheFirstRowAndSaysSo() {
    List<String> lines = StudySummary.atAGlance(List.of(
        shoalRow("lmdb-full", "full", 1000, 40, 1.0), shoalRow("lmdb-none", "none", 1500, 41, 0.5)), "memory");
    assertTrue(lines.get(0).contains("memory has no row"), lines.get(0));
    assertTrue(lines.get(2).startsWith("lmdb-none is about 50% faster than lmdb-full"), lines.get(2));
  }

  @Test
  void heavyLossIsPointedOut() {
    ResultRow lossy = new ResultRow("lossy", null, "write-behind", 900, 9, 1000, 900, 100, 8, 50.0, 1L, 1L,
        null, null, null, null);
    List<String> lines = StudySummary.atAGlance(List.of(shoalRow("memory", null, 1000, 50, 0.02), lossy), "memory");
    assertTrue(lines.stream().anyMatch(l -> l.equals(
        "lossy lost 100 of 1000 queries (10.0%): its QPS understates what it answered in time.")), lines.toString());
  }

  @Test
  void noRowsSaysSo() {
    assertEquals(List.of("No member produced a result."), StudySummary.atAGlance(List.of(), "memory"));
  }

  @Test
  void ratesAreRoundedToThreeSignificantDigits() {
    assertEquals("12,300", StudySummary.approx(12345.6));
    assertEquals("1,540", StudySummary.approx(1539.3));
    assertEquals("123,000", StudySummary.approx(122912.7));
    assertEquals("98", StudySummary.approx(98.2));
    assertEquals("0.5", StudySummary.approx(0.5));
  }
}
