package io.shoal.study.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.MemberKind;
import io.shoal.study.scenario.MinimalRecipe;
import io.shoal.study.scenario.Scenario;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a signed recipe writes for knotd and a validating unbound, and how an answer's DNSSEC check reads kdig. */
class DnssecServerFilesTest {

  private static Scenario scenario(String signing, String members) {
    return Scenario.from("t", ConfigFactory.parseString(MinimalRecipe.with("max_entries = 2048", signing) + members));
  }

  @Test
  void knotdSignsASignedRecipesZoneWithItsAlgorithmAndLeavesAnUnsignedOneAlone(@TempDir Path dir) throws IOException {
    Scenario signed = scenario("dnssec { algorithm = ed25519 }", "members = [{ name = a, kind = shoal }]");
    String conf = Files.readString(KnotUpstream.writeServerFiles(dir.resolve("signed"), signed.recipe(), 5353, 1, false));
    assertTrue(conf.contains("    algorithm: ed25519"), conf);
    assertTrue(conf.contains("    dnssec-signing: on\n    dnssec-policy: study"), conf);
    assertTrue(conf.contains("    nsec3: off"), conf);
    Scenario unsigned = scenario("", "members = [{ name = a, kind = shoal }]");
    String plain = Files.readString(KnotUpstream.writeServerFiles(dir.resolve("plain"), unsigned.recipe(), 5353, 1,
        false));
    assertFalse(plain.contains("dnssec"), plain);
    assertFalse(plain.contains("policy:"), plain);
    // A signed zone names every queried name (no wildcard whose NSEC proof would answer the rest);
    // an unsigned one keeps its wildcard.
    String signedZone = Files.readString(dir.resolve("signed").resolve("zone.db"));
    int names = signed.recipe().queries().names();
    assertFalse(signedZone.contains("* A"), signedZone);
    assertTrue(signedZone.contains("\nn0 A 192.0.2.1\n") && signedZone.contains("\nn" + (names - 1) + " A 192.0.2.1\n"),
        signedZone);
    assertFalse(signedZone.contains("\nn" + names + " A"), signedZone);
    assertTrue(Files.readString(dir.resolve("plain").resolve("zone.db")).contains("* A 192.0.2.1"));
  }

  @Test
  void theTrustAnchorIsTheZonesDsLinesOfKeymgrsOutput() {
    String keymgr = "bench.test. DS 20261 13 2 2533c1e683cf603b610a7d5272a68c7cdbbd31858265b20283bbd89dbafaa9ff\n"
        + "bench.test. DS 20261 13 4 019b5c16f461ea21788333b816f346bf880b8a6310e81b8bda726a674d807f4b1541421816cc95\n"
        + "error: something else\n"
        + "other.test. DS 1 13 2 aa\n";
    assertEquals(List.of(
        "bench.test. DS 20261 13 2 2533c1e683cf603b610a7d5272a68c7cdbbd31858265b20283bbd89dbafaa9ff",
        "bench.test. DS 20261 13 4 019b5c16f461ea21788333b816f346bf880b8a6310e81b8bda726a674d807f4b1541421816cc95"),
        KnotUpstream.trustAnchorLines(keymgr, "bench.test."));
    assertEquals(List.of(), KnotUpstream.trustAnchorLines("Error: not exists\n", "bench.test."));
  }

  @Test
  void aValidatingUnboundRunsTheValidatorFromTheRunsAnchorWithoutAggressiveNsec(@TempDir Path dir) throws IOException {
    Path anchor = dir.resolve("trust-anchor.ds");
    Scenario s = scenario("dnssec {}", "members = [{ name = v, kind = unbound, config { validator = true } },"
        + " { name = p, kind = unbound }]").withTrustAnchorAt(anchor);
    Prerequisites.Tools tools = new Prerequisites.Tools(Map.of());
    try (StartedProcesses processes = new StartedProcesses()) {
      UnboundPeer validating = new UnboundPeer(s.members().get(0), s.recipe(), dir.resolve("v"),
          new InetSocketAddress("127.0.0.1", 5353), processes, tools, null);
      Files.createDirectories(dir.resolve("v"));
      validating.writeConfig();
      String conf = Files.readString(dir.resolve("v").resolve("unbound.conf"));
      assertTrue(conf.contains("  module-config: \"validator iterator\""), conf);
      assertTrue(conf.contains("  trust-anchor-file: \"" + anchor.toAbsolutePath() + "\""), conf);
      assertTrue(conf.contains("  aggressive-nsec: no"), conf);
      assertTrue(validating.setupNote().contains("validator"), validating.setupNote());

      UnboundPeer plain = new UnboundPeer(s.members().get(1), s.recipe(), dir.resolve("p"),
          new InetSocketAddress("127.0.0.1", 5353), processes, tools, null);
      Files.createDirectories(dir.resolve("p"));
      plain.writeConfig();
      String plainConf = Files.readString(dir.resolve("p").resolve("unbound.conf"));
      assertTrue(plainConf.contains("  module-config: \"iterator\""), plainConf);
      assertFalse(plainConf.contains("trust-anchor"), plainConf);
    }
  }

  // kdig 3.2's output for one query with +dnssec through a validating resolver
  private static final String VALIDATED = String.join("\n",
      ";; ->>HEADER<<- opcode: QUERY; status: NOERROR; id: 37174",
      ";; Flags: qr rd ra ad; QUERY: 1; ANSWER: 2; AUTHORITY: 2; ADDITIONAL: 1",
      "",
      ";; EDNS PSEUDOSECTION:",
      ";; Version: 0; flags: do; UDP size: 1232 B; ext-rcode: NOERROR",
      "",
      ";; QUESTION SECTION:",
      ";; n0.bench.test.     \t\tIN\tA",
      "",
      ";; ANSWER SECTION:",
      "n0.bench.test.     \t3600\tIN\tA\t192.0.2.1",
      "n0.bench.test.     \t3600\tIN\tRRSIG\tA 13 2 3600 20261216091448 20261202074448 23342 bench.test. zbcX==",
      "",
      ";; AUTHORITY SECTION:",
      "*.bench.test.       \t3600\tIN\tNSEC\tns.bench.test. A RRSIG NSEC",
      "",
      ";; Received 308 B",
      "");

  @Test
  void kdigsAnswerSaysStatusAdAndWhetherTheAnswerWasSigned() {
    DnssecAnswerCheck.Seen validated = DnssecAnswerCheck.parse(VALIDATED);
    assertEquals(new DnssecAnswerCheck.Seen("NOERROR", true, true), validated);
    assertNull(validated.problem(true));
    assertTrue(validated.problem(false).contains("AD is set"), validated.problem(false));

    DnssecAnswerCheck.Seen unvalidated = DnssecAnswerCheck.parse(VALIDATED.replace("qr rd ra ad;", "qr rd ra;"));
    assertEquals(new DnssecAnswerCheck.Seen("NOERROR", false, true), unvalidated);
    assertNull(unvalidated.problem(false));
    assertTrue(unvalidated.problem(true).contains("AD is not set"), unvalidated.problem(true));

    // an RRSIG only in the authority section (the NSEC's) is not a signed answer
    DnssecAnswerCheck.Seen stripped = DnssecAnswerCheck.parse(VALIDATED
        .replace("n0.bench.test.     \t3600\tIN\tRRSIG\tA 13 2 3600 20261216091448 20261202074448 23342 bench.test. zbcX==\n",
            "")
        .replace("NSEC\tns.bench.test. A RRSIG NSEC", "RRSIG\tNSEC 13 2 3600 1 2 3 bench.test. x=="));
    assertFalse(stripped.rrsig());
    assertTrue(stripped.problem(false).contains("no RRSIG"), stripped.problem(false));

    DnssecAnswerCheck.Seen servfail = DnssecAnswerCheck.parse(VALIDATED.replace("status: NOERROR", "status: SERVFAIL"));
    assertTrue(servfail.problem(true).contains("SERVFAIL"), servfail.problem(true));
    assertEquals("none", DnssecAnswerCheck.parse(";; communications error to 127.0.0.1#53: timed out\n").status());
  }
}
