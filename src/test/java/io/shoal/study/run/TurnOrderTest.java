package io.shoal.study.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The order of a side-by-side round's turns (recipe.turns = slices). */
class TurnOrderTest {
  private static final List<String> MEMBERS = List.of("memory", "full", "periodic", "none", "memory-again");

  @Test
  void everyRoundMeasuresEveryMemberOnceAndTheSameRunRepeatsItsOrder() {
    for (int round = 1; round <= 20; round++) {
      List<String> order = PlainStudy.turnOrder(MEMBERS, round);
      assertEquals(Set.copyOf(MEMBERS), Set.copyOf(order), "round " + round);
      assertEquals(MEMBERS.size(), order.size(), "round " + round);
      assertEquals(order, PlainStudy.turnOrder(MEMBERS, round), "round " + round);
    }
  }

  @Test
  void noMemberKeepsOnePlaceOrOnePredecessorBesideTheBaseline() {
    // a fixed rotation would put memory-again just before memory in all 20 rounds
    Set<String> beforeBaseline = new HashSet<>();
    Set<Integer> baselinePlaces = new HashSet<>();
    for (int round = 1; round <= 20; round++) {
      List<String> order = PlainStudy.turnOrder(MEMBERS, round);
      int at = order.indexOf("memory");
      baselinePlaces.add(at);
      if (at > 0) {
        beforeBaseline.add(order.get(at - 1));
      }
    }
    assertTrue(beforeBaseline.size() >= 3, "members just before the baseline: " + beforeBaseline);
    assertTrue(baselinePlaces.size() >= 3, "the baseline's places: " + baselinePlaces);
  }
}
