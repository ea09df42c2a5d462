package io.shoal.study.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MinimalRecipe;
import io.shoal.study.scenario.Scenario;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The recursion study's cluster part runs the shoal member as it was given, on more nodes. */
class RecursionStudyTest {

  @Test
  void theClusterPartsNodesKeepTheMembersConfigurationAndJvmOptions() {
    Scenario s = Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with() + "members = [{ name = s, kind = shoal,"
        + " jvm_options = [\"-XX:-TieredCompilation\"], config { ingress.workers = 2 } }]"));
    Member shoal = s.members().get(0);
    Member cluster = RecursionStudy.nodes(shoal, 3, true);
    assertEquals("s-cluster-3", cluster.name());
    assertEquals(3, cluster.nodes());
    assertTrue(cluster.cluster());
    assertEquals(shoal.config(), cluster.config());
    assertEquals(List.of("-XX:-TieredCompilation"), cluster.jvmOptions());
    assertEquals(List.of("-XX:-TieredCompilation"), RecursionStudy.nodes(shoal, 2, false).jvmOptions());
  }
}
