package io.shoal.study.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.config.DnssecSettings;
import io.shoal.config.ShoalConfig;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.run.StudyRun;
import io.shoal.study.server.ShoalMemberConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The DNSSEC scenarios and the recipe.dnssec block: a signed zone, validating members, their anchor. */
class DnssecScenarioTest {
  private static final Path CATALOG = Path.of("bench", "scenarios");
  private static final String SIGNING = "dnssec { algorithm = ecdsap256sha256 }";
  private static final String SIGNED = MinimalRecipe.with(SIGNING);
  private static final String UNSIGNED = MinimalRecipe.with();

  private static Scenario parse(String text) {
    return Scenario.from("t", ConfigFactory.parseString(text));
  }

  private static String error(String text) {
    return assertThrows(IllegalArgumentException.class, () -> parse(text)).getMessage();
  }

  @Test
  void theDnssecScenariosPutShoalValidatingBesideShoalUnvalidatedAndUnboundValidatingOnTheQueryPathRecipes() {
    Map<String, String> recipeOf = Map.of("dnssec_hit", "query_path", "dnssec_churn", "query_path_churn");
    for (var e : recipeOf.entrySet()) {
      Scenario s = Scenario.load(CATALOG.resolve(e.getKey() + ".conf"));
      Scenario plain = Scenario.load(CATALOG.resolve(e.getValue() + ".conf"));
      assertTrue(s.recipe().signed(), e.getKey());
      assertEquals("ecdsap256sha256", s.recipe().signing().algorithm());
      assertFalse(plain.recipe().signed(), e.getValue());
      // the workload is the query_path one's: same names, cache, TTL and load
      assertEquals(plain.recipe().queries(), s.recipe().queries(), e.getKey());
      assertEquals(plain.recipe().maxEntries(), s.recipe().maxEntries(), e.getKey());
      assertEquals(plain.recipe().stubTtl(), s.recipe().stubTtl(), e.getKey());
      assertEquals(plain.recipe().load(), s.recipe().load(), e.getKey());
      assertEquals(3, s.recipe().rounds());
      Map<String, Boolean> validates = s.members().stream().collect(Collectors.toMap(Member::name, Member::validates));
      Map<String, Boolean> expected = new java.util.HashMap<>(
          Map.of("unbound-validating", true, "shoal-validating", true, "shoal-unvalidated", false));
      if (e.getKey().equals("dnssec_churn")) {
        // every signature of every miss checked: what remembered verdicts save is measured beside
        expected.put("shoal-validating-unremembered", true);
      }
      assertEquals(expected, validates, e.getKey());
      assertEquals("unbound-validating", s.baseline());
      Member unbound = s.members().get(0);
      assertEquals(MemberKind.UNBOUND, unbound.kind());
      assertEquals(1, unbound.config().getInt("threads"));
      StudyRun.checkShoalMembers(s);
    }
  }

  @Test
  void theOtherAlgorithmsRunTheP256ChurnWithOnlyTheZonesAlgorithmChanged() {
    Scenario p256 = Scenario.load(CATALOG.resolve("dnssec_churn.conf"));
    Map<String, String> algorithmOf = Map.of("dnssec_churn_rsa", "rsasha256", "dnssec_churn_p384", "ecdsap384sha384");
    for (var e : algorithmOf.entrySet()) {
      Scenario s = Scenario.load(CATALOG.resolve(e.getKey() + ".conf"));
      assertEquals(e.getValue(), s.recipe().signing().algorithm(), e.getKey());
      assertEquals(p256.recipe().queries(), s.recipe().queries(), e.getKey());
      assertEquals(p256.recipe().maxEntries(), s.recipe().maxEntries(), e.getKey());
      assertEquals(p256.recipe().load(), s.recipe().load(), e.getKey());
      assertEquals(p256.recipe().rounds(), s.recipe().rounds(), e.getKey());
      assertEquals(p256.members().stream().map(Member::name).toList(), s.members().stream().map(Member::name).toList(),
          e.getKey());
      StudyRun.checkShoalMembers(s);
    }
  }

  @Test
  void aSignedRunNeedsKeymgrAndKdig() {
    Member unbound = new Member("u", MemberKind.UNBOUND, ConfigFactory.empty());
    assertEquals(List.of("dnsperf", "knotd", "knotc", "keymgr", "kdig", "unbound", "unbound-control", "tar",
        "xz"),
        Prerequisites.binariesFor(List.of(unbound), false, true));
    assertEquals(List.of("dnsperf", "knotd", "knotc", "unbound", "unbound-control", "tar", "xz"),
        Prerequisites.binariesFor(List.of(unbound), false, false));
    assertEquals("knot-dnsutils", Prerequisites.packageOf("kdig"));
    assertEquals("knot", Prerequisites.packageOf("keymgr"));
  }

  @Test
  void theAlgorithmDefaultsToEcdsaP256AndMustBeOneBothValidatorsCheck() {
    assertEquals("ecdsap256sha256", parse(MinimalRecipe.with("dnssec {}") + "members = [{ name = a, kind = shoal }]")
        .recipe().signing().algorithm());
    assertEquals("ed25519", parse(MinimalRecipe.with("dnssec { algorithm = ed25519 }")
        + "members = [{ name = a, kind = shoal }]").recipe().signing().algorithm());
    assertNull(parse(UNSIGNED + "members = [{ name = a, kind = shoal }]").recipe().signing());
    String rsamd5 = error(MinimalRecipe.with("dnssec { algorithm = rsamd5 }") + "members = [{ name = a, kind = shoal }]");
    assertTrue(rsamd5.contains("recipe.dnssec.algorithm") && rsamd5.contains("ecdsap256sha256"), rsamd5);
    String typo = error(MinimalRecipe.with("dnssec { algoritm = ed25519 }") + "members = [{ name = a, kind = shoal }]");
    assertTrue(typo.contains("recipe.dnssec.algoritm"), typo);
  }

  @Test
  void validationOverAnUnsignedZoneOrWithAnAnchorOfItsOwnIsRejectedWithTheKey() {
    String shoal = error(UNSIGNED + "members = [{ name = a, kind = shoal, config { dnssec.validation = on } }]");
    assertTrue(shoal.contains("members[0].config") && shoal.contains("recipe.dnssec"), shoal);
    String unbound = error(UNSIGNED + "members = [{ name = a, kind = unbound, config { validator = true } }]");
    assertTrue(unbound.contains("members[0].config") && unbound.contains("unsigned"), unbound);
    String anchor = error(SIGNED + "members = [{ name = a, kind = shoal, config { dnssec.validation = on,"
        + " dnssec.trust_anchors = [\"/etc/x.ds\"] } }]");
    assertTrue(anchor.contains("members[0].config.dnssec.trust_anchors"), anchor);
    String mode = error(SIGNED + "members = [{ name = a, kind = shoal, config { dnssec.validation = strict } }]");
    assertTrue(mode.contains("members[0].config.dnssec.validation") && mode.contains("permissive"), mode);
    // a member not validating over an unsigned zone is every study before this one
    assertFalse(parse(UNSIGNED + "members = [{ name = a, kind = shoal, config { dnssec.validation = off } }]")
        .members().get(0).validates());
  }

  @Test
  void aSignedZoneIsForOneServerMembersOfKindsWhoseValidationTheRunSetsUp() {
    String group = error(SIGNED + "members = [{ name = a, kind = shoal, nodes = 3 }]");
    assertTrue(group.contains("members[0].nodes"), group);
    String dnsmasq = error(SIGNED + "members = [{ name = a, kind = dnsmasq }]");
    assertTrue(dnsmasq.contains("members[0].kind"), dnsmasq);
    String outageMembers = "members = [{ name = a, kind = shoal }]\n"
        + "outage { fill_spread = 5s, after = 5s, length = 5s, quick_after = 2s, quick_length = 3s }";
    String outageRun = MinimalRecipe.with("dnsperf.duration = 20s", "quick.duration = 8s", SIGNING) + outageMembers;
    String outage = error(outageRun);
    assertTrue(outage.contains("recipe.dnssec") && outage.contains("outage test"), outage);
    // the same outage over an unsigned zone is an outage study
    parse(MinimalRecipe.with("dnsperf.duration = 20s", "quick.duration = 8s") + outageMembers);
  }

  @Test
  void theRunGivesEveryValidatingMemberTheAnchorFileAndLeavesTheOthersAlone(@TempDir Path dir) throws IOException {
    Scenario s = parse(SIGNED + "members = ["
        + "{ name = ub, kind = unbound, config { validator = true } },"
        + "{ name = ub-plain, kind = unbound },"
        + "{ name = on, kind = shoal, config { dnssec.validation = on } },"
        + "{ name = off, kind = shoal } ]");
    Path anchor = dir.resolve("trust-anchor.ds");
    // the DS records keymgr printed for a zone knotd signed
    Files.writeString(anchor, "bench.test. DS 20261 13 2 2533c1e683cf603b610a7d5272a68c7cdbbd31858265b20283bbd89dbafaa9ff\n");
    Scenario anchored = s.withTrustAnchorAt(anchor);
    Map<String, Member> m = anchored.members().stream().collect(Collectors.toMap(Member::name, x -> x));
    assertEquals(anchor.toAbsolutePath().toString(), m.get("ub").config().getString(Member.UNBOUND_ANCHOR));
    assertFalse(m.get("ub-plain").config().hasPath(Member.UNBOUND_ANCHOR));
    assertEquals(List.of(anchor.toAbsolutePath().toString()), m.get("on").config().getStringList("dnssec.trust_anchors"));
    assertFalse(m.get("off").config().hasPath("dnssec.trust_anchors"));

    // shoal reads the anchor as it will at start: validation on, from the zone's DS, not the root's
    Member on = m.get("on");
    ShoalConfig c = ShoalMemberConfig.validate(on, ShoalMemberConfig.render(ShoalMemberConfig.memberConfig(anchored.recipe(), on,
        1053, 1054, 1056, new InetSocketAddress("127.0.0.1", 1055), dir.resolve("data"), null)));
    assertEquals(DnssecSettings.Mode.ON, c.dnssec().mode());
    assertEquals(1, c.dnssec().trustAnchors().size());
    assertEquals("bench.test.", c.dnssec().trustAnchors().get(0).getName().toString());
    Member off = m.get("off");
    ShoalConfig plain = ShoalMemberConfig.validate(off, ShoalMemberConfig.render(ShoalMemberConfig.memberConfig(
        anchored.recipe(), off, 1053, 1054, 1056, new InetSocketAddress("127.0.0.1", 1055), dir.resolve("data"), null)));
    assertEquals(DnssecSettings.Mode.OFF, plain.dnssec().mode());

    // an unsigned scenario is left as it is
    Scenario unsigned = parse(UNSIGNED + "members = [{ name = a, kind = shoal }]");
    assertEquals(unsigned, unsigned.withTrustAnchorAt(anchor));
  }
}
