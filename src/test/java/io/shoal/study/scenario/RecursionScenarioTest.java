package io.shoal.study.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.study.run.StudyRun;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The recursion scenario of the catalog, and what a recursion block accepts. */
class RecursionScenarioTest {
  private static final Path CATALOG = Path.of("bench", "scenarios");

  private static final String RECIPE = MinimalRecipe.with("zone = \"z1.example.\"", "stub_ttl = 3600s",
      "max_entries = 1000", "dnsperf.duration = 2s");
  private static final String MEMBERS = "members = [{ name = u, kind = unbound, config { threads = 1, validator = true } },"
      + " { name = s, kind = shoal, config { upstreams.default.mode = recursive, dnssec.validation = on } }]\n";

  private static Scenario parse(String members, String block) {
    return Scenario.from("t", ConfigFactory.parseString(RECIPE + members + block));
  }

  @Test
  void theCatalogScenarioRunsShoalUnboundAndKresdRecursivelyWithAClusterPart() {
    Scenario s = Scenario.load(CATALOG.resolve("recursion.conf"));
    StudyRun.checkShoalMembers(s);
    RecursionPlan p = s.recursion();
    assertEquals(3, p.clusterNodes());
    assertEquals("unbound", s.baseline());
    assertEquals(List.of(MemberKind.UNBOUND, MemberKind.SHOAL, MemberKind.KRESD),
        s.members().stream().map(Member::kind).toList());
    assertTrue(s.members().stream().allMatch(m -> m.kind() == MemberKind.KRESD || m.validates()),
        "shoal and unbound validate from the tree's root DS");
    assertEquals(3, s.recipe().rounds());
    // every run's names fit the tree: 3 members and the 2 groups of the cluster part, 3 rounds
    assertEquals(15, p.runsNeedingNames(3, 3));
    assertTrue(p.coldNames(true) < p.coldNames(false));
  }

  @Test
  void membersGetTheTreesHintsAndAnchorUnderTheirOwnKeys() {
    Scenario s = parse(MEMBERS + "", "recursion { }").withRecursionTree(Path.of("/t/root.hints"), Path.of("/t/root.ds"));
    Member unbound = s.members().get(0);
    assertEquals("/t/root.hints", unbound.config().getString(Member.ROOT_HINTS));
    assertEquals("/t/root.ds", unbound.config().getString(Member.UNBOUND_ANCHOR));
    Member shoal = s.members().get(1);
    assertEquals("/t/root.hints", shoal.config().getString("upstreams.default.root_hints"));
    assertEquals(List.of("/t/root.ds"), shoal.config().getStringList("dnssec.trust_anchors"));
    RecursionPlan p = s.recursion();
    assertEquals(4, p.zones());
    assertEquals(Duration.ofSeconds(60), p.coldLimit());
    assertEquals(0, p.clusterNodes());
    assertEquals(p.coldNames(false), p.warmUpNames(false), "as many warm-up names as cold ones unless said");
    RecursionPlan more = parse(MEMBERS, "recursion { cold_names = 100, warm_up_names = 400 }").recursion();
    assertEquals(400, more.warmUpNames(false));
    assertEquals(more.quickColdNames(), more.warmUpNames(true));
  }

  @Test
  void aRecursionBlockRejectsWhatItCannotRun() {
    String cold = assertThrows(IllegalArgumentException.class,
        () -> parse(MEMBERS, "recursion { zones = 4, cold_names = 3 }")).getMessage();
    assertTrue(cold.startsWith("recursion.cold_names"), cold);
    String warm = assertThrows(IllegalArgumentException.class,
        () -> parse(MEMBERS, "recursion { zones = 4, warm_up_names = 2 }")).getMessage();
    assertTrue(warm.contains("warm_up_names") && warm.contains("are 5000, 2 and 200"), warm);
    String nodes = assertThrows(IllegalArgumentException.class,
        () -> parse(MEMBERS, "recursion { cluster_nodes = 1 }")).getMessage();
    assertTrue(nodes.startsWith("recursion.cluster_nodes"), nodes);
    String key = assertThrows(IllegalArgumentException.class,
        () -> parse(MEMBERS, "recursion { zone = 4 }")).getMessage();
    assertTrue(key.startsWith("recursion.zone: unknown key"), key);
    String kind = assertThrows(IllegalArgumentException.class,
        () -> parse("members = [{ name = d, kind = dnsmasq }]\n", "recursion { }")).getMessage();
    assertTrue(kind.startsWith("members[0].kind: a recursion scenario"), kind);
    String noShoal = assertThrows(IllegalArgumentException.class, () -> parse(
        "members = [{ name = u, kind = unbound }]\n", "recursion { cluster_nodes = 3 }")).getMessage();
    assertTrue(noShoal.startsWith("recursion.cluster_nodes"), noShoal);
    // without a recursion block a validating member still needs a signed recipe zone
    assertThrows(IllegalArgumentException.class, () -> parse(MEMBERS, ""));
  }
}
