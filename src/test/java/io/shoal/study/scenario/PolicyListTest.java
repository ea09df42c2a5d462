package io.shoal.study.scenario;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.metrics.PolicyMetrics;
import io.shoal.policy.PolicySettings;
import io.shoal.policy.ResponsePolicy;
import io.shoal.study.run.StudyRun;
import io.shoal.study.server.ShoalMemberConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The domain list a study generates (recipe.policy_list) and the members that take it. */
class PolicyListTest {
  private static final Path SCENARIO = Path.of("bench", "scenarios", "policy_list.conf");

  @Test
  void theListIsTheSameForTheSameSeedDistinctAndNeverUnderTheStudysZone(@TempDir Path dir) throws IOException {
    Path a = dir.resolve("a.txt");
    Path b = dir.resolve("b.txt");
    List<String> probes = PolicyList.write(a, 5000, 20);
    PolicyList.write(b, 5000, 20);
    assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b));
    PolicyList.write(b, 5000, 21);
    assertFalse(java.util.Arrays.equals(Files.readAllBytes(a), Files.readAllBytes(b)));

    List<String> lines = Files.readAllLines(a);
    assertTrue(lines.get(0).startsWith("#"), lines.get(0));
    List<String> names = lines.subList(1, lines.size());
    assertEquals(5000, names.size());
    assertEquals(5000, new HashSet<>(names).size());
    assertEquals(List.of(names.get(0), names.get(names.size() - 1)), probes);
    for (String n : names) {
      assertTrue(n.matches("([a-z]{3,8}\\.)?[a-z]{5,12}[0-9]+\\.(com|net|org|io|xyz|info|co\\.uk|de)"), n);
    }
  }

  @Test
  void shoalLoadsEveryNameOfTheList(@TempDir Path dir) throws IOException {
    Path file = dir.resolve(PolicyList.FILE);
    PolicyList.write(file, 5000, 20);
    ResponsePolicy policy = ResponsePolicy.load(
        new PolicySettings(List.of(), PolicySettings.domainLists(List.of(file + " nxdomain"))), new PolicyMetrics());
    assertEquals(5000, policy.current().names());
  }

  @Test
  void theScenarioMeasuresShoalWithAndWithoutAMillionNamesBesideUnbound() {
    Scenario s = Scenario.load(SCENARIO);
    assertEquals(List.of("unbound", "shoal-memory", "shoal-list"), s.members().stream().map(Member::name).toList());
    assertEquals("unbound", s.baseline());
    PolicyList list = s.recipe().policyList();
    assertEquals(1_000_000, list.count(false));
    assertTrue(list.count(true) < list.count(false));
    assertNull(s.members().get(1).policyList());
    assertEquals("nxdomain", s.members().get(2).policyList());
    assertTrue(s.usesPolicyList());

    // the run puts its list in the members that take it, and only in those
    Scenario resolved = s.withPolicyListAt(Path.of("run", PolicyList.FILE));
    assertFalse(resolved.members().get(1).config().hasPath("policy.domain_lists"));
    Member listed = resolved.members().get(2);
    String line = listed.config().getStringList("policy.domain_lists").get(0);
    assertTrue(line.endsWith("run/" + PolicyList.FILE + " nxdomain"), line);
    StudyRun.checkShoalMembers(resolved);
    io.shoal.config.ShoalConfig c = ShoalMemberConfig.validate(listed, ShoalMemberConfig.render(ShoalMemberConfig.memberConfig(
        s.recipe(), listed, 5351, 9101, 8561, new InetSocketAddress("127.0.0.1", 5300), Path.of("data"), null)));
    assertEquals(1, c.policy().domainLists().size());
    assertEquals("nxdomain", c.policy().domainLists().get(0).action().label());
  }

  @Test
  void aMemberTakesTheListOnlyWhenItCan() {
    Config file = ConfigFactory.parseFile(SCENARIO.toFile());
    List<String[]> bad = List.of(
        new String[] {"members = [{ name = a, kind = unbound, policy_list = nxdomain }]", "only a shoal member"},
        new String[] {"members = [{ name = a, kind = shoal, policy_list = block }]", "one of nxdomain"},
        new String[] {"members = [{ name = a, kind = shoal, policy_list = nxdomain, "
            + "config { policy.domain_lists = [\"x.txt refuse\"] } }]", "one or the other"},
        new String[] {"baseline = a\nmembers = [{ name = a, kind = shoal, policy_list = nxdomain }]\n"
            + "recipe.policy_list = null", "recipe.policy_list must say"},
        new String[] {"baseline = a\nmembers = [{ name = a, kind = shoal }]\n"
            + "recipe.policy_list { names = 10, seed = 1, size = 3 }", "recipe.policy_list.size"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Scenario.from("t", ConfigFactory.parseString("baseline = a\n" + b[0]).withFallback(file).resolve()),
          b[0]);
      assertTrue(e.getMessage().contains(b[1]), b[1] + " in: " + e.getMessage());
    }
  }
}
