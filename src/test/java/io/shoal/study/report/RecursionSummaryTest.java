package io.shoal.study.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** rounds.csv and results.csv of a recursion run, and what its summary says from them. */
class RecursionSummaryTest {
  /** A one-node row: 1,000 sent, {@code answered} answered, the CPU and authority totals given. */
  private static RecursionRow row(int round, String member, String phase, double answered, double servfail,
      double qps, double cpuSeconds, double authority) {
    return new RecursionRow(Integer.toString(round), member, phase, 1, 1000, answered, servfail, 0, qps, cpuSeconds,
        authority, 0.5 * round, 2.0 * round);
  }

  private static List<RecursionRow> rounds() {
    List<RecursionRow> rows = new ArrayList<>();
    // unbound: 40, 50, 60 us per cold answer; 1.0 authority query each
    // shoal: 30, 50, 90 us (ratios 0.75, 1.0, 1.5); 1.1 authority queries each
    for (int r = 1; r <= 3; r++) {
      rows.add(row(r, "unbound", "cold", 1000, 0, 2000, (30 + 10 * r) / 1000.0, 1000));
      rows.add(row(r, "unbound", "warm", 1000, 0, 50_000, 0.005, 0));
      rows.add(row(r, "shoal", "cold", 1000, r == 2 ? 4 : 0, 1000 + r, new double[] {0.030, 0.050, 0.090}[r - 1],
          1100));
      rows.add(row(r, "shoal", "warm", 1000, 0, 60_000, 0.004, 0));
      rows.add(new RecursionRow(Integer.toString(r), "shoal-cluster-3", "cold", 3, 3000, 3000, 0, 0, 3000, 0.3,
          1000 + r * 10, 1.0, 3.0));
      rows.add(new RecursionRow(Integer.toString(r), "shoal-independent-3", "cold", 3, 3000, 3000, 0, 0, 3000, 0.3,
          3000, 1.0, 3.0));
    }
    return rows;
  }

  @Test
  void roundsAndMediansSurviveTheirCsvFiles(@TempDir Path dir) throws IOException {
    List<RecursionRow> written = StudyCsv.RECURSION_ROUNDS.read(StudyCsv.RECURSION_ROUNDS.write(dir, rounds()));
    assertEquals(18, written.size());
    RecursionRow first = written.get(0);
    assertEquals(40.0, first.cpuMicrosPerResolution(), 1e-9);
    assertEquals(1.0, first.authorityPerResolution(), 1e-9);
    String csv = Files.readString(dir.resolve("rounds.csv"));
    assertTrue(csv.startsWith(String.join(",", RecursionRow.COLUMNS) + "\n"), csv);
    assertTrue(csv.contains("\n2,shoal,cold,1,1000,1000,4,0,0.00400,"), csv);

    List<RecursionRow> medians = StudyCsv.RECURSION_RESULTS.read(
        StudyCsv.RECURSION_RESULTS.write(dir, RecursionRow.medians(written)));
    assertEquals(List.of("unbound", "unbound", "shoal", "shoal", "shoal-cluster-3", "shoal-independent-3"),
        medians.stream().map(RecursionRow::member).toList());
    RecursionRow shoalCold = medians.get(2);
    assertEquals(RecursionRow.MEDIAN, shoalCold.round());
    assertEquals(50.0, shoalCold.cpuMicrosPerResolution(), 1e-9);
    assertEquals(1002, shoalCold.qps(), 1e-9);
    assertEquals(1.0, shoalCold.p50Ms(), 1e-9);
  }

  @Test
  void atAGlanceGivesPerRoundRatiosToTheBaselineWithTheirSpreadServfailsAndTheClusterRatio() {
    List<String> glance = RecursionSummary.atAGlance(rounds(), "unbound");
    String cold = glance.stream().filter(l -> l.startsWith("cold resolutions, shoal over unbound")).findFirst()
        .orElseThrow();
    assertTrue(cold.contains("CPU per answer 1.00x (0.75x to 1.50x, 3 rounds)"), cold);
    assertTrue(cold.contains("authority queries per answer 1.10x (1.10x to 1.10x, 3 rounds)"), cold);
    String warm = glance.stream().filter(l -> l.startsWith("warm hits, shoal")).findFirst().orElseThrow();
    assertTrue(warm.contains("QPS 1.20x"), warm);
    assertTrue(!warm.contains("authority"), warm);
    assertTrue(glance.contains("round 2, shoal, cold: 4 SERVFAIL and 0 other errors of 1,000 answers"), glance.toString());
    String cluster = glance.get(glance.size() - 1);
    assertTrue(cluster.contains("0.34x (0.34x to 0.34x, 3 rounds)"), cluster);
  }

  @Test
  void theTakeawaySaysWhetherEachShoalMemberMetTheGoal() {
    List<String> takeaway = RecursionSummary.takeaway(rounds(), "unbound");
    assertEquals(List.of("shoal, cold: CPU per answer 1.00x (at most unbound's), authority queries per answer 1.10x "
        + "(above unbound's)."), takeaway);
  }

  @Test
  void aRunWithoutAnswersHasNoPerAnswerFigures() {
    RecursionRow none = new RecursionRow("1", "m", "cold", 1, 100, 0, 0, 0, 0, 0.1, 5, null, null);
    assertNull(none.cpuMicrosPerResolution());
    assertNull(none.authorityPerResolution());
    assertEquals(none, RecursionRow.fromCells(none.cells()));
    assertTrue(RecursionSummary.table(List.of(none), "cold").contains("| m | 1 | 0 | 0 | 0 | ? | ? | ? | ? |"));
  }

  @Test
  void theChartsAreWrittenFromTheMedians(@TempDir Path dir) throws IOException {
    List<String> files = RecursionSummary.writeCharts(dir, RecursionRow.medians(rounds()), "t");
    for (String f : files) {
      assertTrue(Files.size(dir.resolve(f)) > 1000, f);
    }
  }
}
