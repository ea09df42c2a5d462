package io.shoal.study.report;

import static io.shoal.study.report.StudyCsvTest.shoalRow;
import static io.shoal.study.report.StudyCsvTest.withCpu;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.study.scenario.MinimalRecipe;
import io.shoal.study.scenario.Scenario;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Rounds: rounds.csv round-trips, ratios pair runs of the same round, the recipe bounds them. */
class RoundsTest {

  private static final List<RoundRow> THREE_ROUNDS = List.of(
      new RoundRow(1, shoalRow("memory", null, 20000, 52.0, 0.003)),
      new RoundRow(1, shoalRow("lmdb-full", "full", 16000, 51.6, 0.2)),
      new RoundRow(2, shoalRow("memory", null, 15000, 52.2, 0.003)),
      new RoundRow(2, shoalRow("lmdb-full", "full", 13500, 51.8, 0.2)),
      new RoundRow(3, shoalRow("memory", null, 18000, 51.9, 0.003)),
      new RoundRow(3, shoalRow("lmdb-full", "full", 15300, 51.5, 0.2)));

  @Test
  void roundsCsvHasTheRoundThenTheResultsColumnsAndReadsBack() {
    String text = StudyCsv.ROUNDS.render(THREE_ROUNDS);
    assertTrue(text.startsWith("round,member,lmdb_sync,runtime,achieved_qps,"), text);
    List<RoundRow> back = StudyCsv.ROUNDS.parse(text);
    assertEquals(THREE_ROUNDS.size(), back.size());
    assertEquals(3, back.get(5).round());
    assertEquals(15300, back.get(5).row().achievedQps(), 1e-9);
    assertThrows(IllegalArgumentException.class, () -> StudyCsv.ROUNDS.parse(StudyCsv.RESULTS.render(List.of())));
  }

  @Test
  void eachRunIsComparedWithTheBaselineOfItsOwnRound() {
    assertEquals(List.of(0.8, 0.9, 0.85),
        StudySummary.ratiosByRound(THREE_ROUNDS, "lmdb-full", "memory").stream()
            .map(r -> Math.round(r * 1000) / 1000.0).toList());
    List<String> lines = StudySummary.roundsAtAGlance(THREE_ROUNDS, "memory");
    assertEquals("lmdb-full: 0.85x (rounds: 0.80x, 0.90x, 0.85x); hit rate 51.6% vs 52.0%.", lines.get(1));
  }

  @Test
  void cpuPerQueryIsTheMedianOfEachMembersRounds() {
    // memory: 12.5, 10.0, 11.0 us per query (990 completed each); unbound: 4.0, 3.0, 5.0
    List<RoundRow> rounds = List.of(
        new RoundRow(1, withCpu(shoalRow("memory", null, 20000, 52.0, 0.003), 0.012375)),
        new RoundRow(1, withCpu(shoalRow("unbound", null, 30000, 51.0, 0.003), 0.00396)),
        new RoundRow(2, withCpu(shoalRow("memory", null, 15000, 52.0, 0.003), 0.0099)),
        new RoundRow(2, withCpu(shoalRow("unbound", null, 30000, 51.0, 0.003), 0.00297)),
        new RoundRow(3, withCpu(shoalRow("memory", null, 18000, 52.0, 0.003), 0.01089)),
        new RoundRow(3, withCpu(shoalRow("unbound", null, 36000, 51.0, 0.003), 0.00495)));
    assertEquals("unbound: 2.00x (rounds: 1.50x, 2.00x, 2.00x); hit rate 51.0% vs 52.0%; "
        + "CPU per query 0.36x memory's (4.0 us vs 11.0 us) (medians).",
        StudySummary.roundsAtAGlance(rounds, "memory").get(1));
  }

  @Test
  void oneRoundSaysNothingExtra() {
    assertEquals(List.of(), StudySummary.roundsAtAGlance(List.of(), "memory"));
  }

  @Test
  void theRecipeBoundsRoundsAndTheKillTestRunsOnce() {
    String member = "members = [ { name = memory, kind = shoal } ]";
    assertEquals(1, Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with() + member)).recipe().rounds());
    assertEquals(3, Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with("rounds = 3") + member))
        .recipe().rounds());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with("rounds = 0") + member)));
    assertEquals("recipe.rounds: from 1 to 9, is 0", e.getMessage());
  }
}
