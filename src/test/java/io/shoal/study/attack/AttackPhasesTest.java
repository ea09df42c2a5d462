package io.shoal.study.attack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shoal.study.scenario.AttackPlan;
import io.shoal.study.scenario.Member;
import io.shoal.study.scenario.Scenario;
import io.shoal.study.server.ShoalMemberConfig;
import io.shoal.study.server.StudyCertificate;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The honest load of each phase, what it offers, where the zone client asks, the miss flood's rate,
 * and the hostile zone of an unbound member.
 */
class AttackPhasesTest {
  private static final Scenario CATALOG = Scenario.load(Path.of("bench", "scenarios", "robustness.conf"));

  private static AttackPhases phases(Scenario s) {
    return new AttackPhases(s, s.recipe().load(), Path.of("queries.txt"), Path.of("dir"), null, System.out);
  }

  /** The catalog scenario without honest_qps: the honest clients as fast as answers come. */
  private static Scenario unpaced() {
    return edited(", honest_qps = 10000,\\s*honest_outstanding = 5000", "");
  }

  /** The catalog scenario with the first match of {@code regex} replaced. */
  private static Scenario edited(String regex, String replacement) {
    String text;
    try {
      text = java.nio.file.Files.readString(Path.of("bench", "scenarios", "robustness.conf"));
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
    String edited = text.replaceFirst(regex, replacement);
    if (edited.equals(text)) {
      throw new AssertionError("robustness.conf no longer has " + regex + " as this test expects");
    }
    return Scenario.from("robustness", ConfigFactory.parseString(edited).resolve());
  }

  @Test
  void everyUdpPhaseIsPacedAtHonestQpsAndTheTcpPhasesAreNot() {
    AttackPhases p = phases(CATALOG);
    for (AttackPlan.Phase phase : AttackPlan.Phase.values()) {
      Integer expected = phase.overTcp() ? null : 10000;
      assertEquals(expected, p.honestLoad(phase).maxQps(), phase.configName());
      // a paced client's window holds what is lost within dnsperf's timeout; the TCP phases keep the recipe's
      assertEquals(phase.overTcp() ? 100 : 5000, p.honestLoad(phase).outstanding(), phase.configName());
      // everything else about the load is the recipe's
      assertEquals(CATALOG.recipe().load().clients(), p.honestLoad(phase).clients());
      assertEquals(CATALOG.recipe().load().duration(), p.honestLoad(phase).duration());
    }
    assertEquals(200_000L, p.offered(AttackPlan.Phase.MISS_FLOOD, Duration.ofSeconds(20)));
    assertEquals(30_000L, p.offered(AttackPlan.Phase.BASELINE, Duration.ofSeconds(3)));
    assertNull(p.offered(AttackPlan.Phase.TCP_HOLDERS, Duration.ofSeconds(20)));
  }

  @Test
  void theDotAndDohPhasesAreUnpacedAndMeasureForTheirOwnShorterDuration() {
    AttackPhases p = phases(CATALOG);
    AttackPlan plan = CATALOG.attacks();
    var load = CATALOG.recipe().load();
    for (AttackPlan.Phase phase : List.of(AttackPlan.Phase.DOT_BASELINE, AttackPlan.Phase.DOT_HOLDERS,
        AttackPlan.Phase.DOH_BASELINE, AttackPlan.Phase.DOH_HOLDERS)) {
      assertNull(p.honestLoad(phase).maxQps(), phase.configName());
      assertFalse(p.zoneClientIn(phase), phase.configName());
      assertNull(p.offered(phase, Duration.ofSeconds(10)), phase.configName());
      assertEquals(Duration.ofSeconds(10), AttackPhases.duration(phase, plan, load), phase.configName());
      // --quick: the recipe's 3 s is shorter, and wins
      assertEquals(Duration.ofSeconds(3), AttackPhases.duration(phase, plan, CATALOG.recipe().quick()),
          phase.configName());
    }
    assertEquals(Duration.ofSeconds(20), AttackPhases.duration(AttackPlan.Phase.TCP_HOLDERS, plan, load));
    assertEquals(Duration.ofSeconds(20), AttackPhases.duration(AttackPlan.Phase.MISS_FLOOD, plan, load));
    // warm-up, then per phase 1 s lead, its duration, 2 s settle and 2 s of reads: 8 x 25 + 4 x 15
    assertEquals(Duration.ofSeconds(10 + 8 * 25 + 4 * 15), AttackPhases.estimate(load, plan));
  }

  @Test
  void aShoalMemberListensForDotAndDohBesideUdpAndTcpWithTheCertificate(@TempDir Path tmp) throws Exception {
    Member m = CATALOG.members().get(0);
    // a real certificate, made as the study makes it: shoal's validation reads both files
    Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", tmp.resolve("key.pem").toString(), "-out",
        tmp.resolve("cert.pem").toString(), "-days", "2", "-subj", "/CN=localhost").redirectErrorStream(true)
        .redirectOutput(tmp.resolve("openssl.txt").toFile()).start();
    assertTrue(openssl.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) && openssl.exitValue() == 0,
        "openssl made the test certificate");
    StudyCertificate cert = new StudyCertificate(tmp.resolve("cert.pem"), tmp.resolve("key.pem"));
    Member listening = new Member(m.name(), m.kind(), AttackMemberConfig.withEncryptedListeners(m.config(), 5853, 5443,
        cert));
    String rendered = ShoalMemberConfig.render(ShoalMemberConfig.memberConfig(CATALOG.recipe(), listening, 5351, 9101,
        8561, new InetSocketAddress("127.0.0.1", 5300), Path.of("data"), null));
    // what shoal serve will check: both listeners, the certificate, the member's cap kept
    ShoalMemberConfig.validate(listening, rendered);
    var c = ConfigFactory.parseString(rendered).getConfig("shoal");
    assertEquals("127.0.0.1:5853", c.getString("listen.tls"));
    assertEquals("127.0.0.1:5443", c.getString("listen.https"));
    assertEquals("127.0.0.1:5351", c.getString("listen.tcp"));
    assertEquals(tmp.resolve("cert.pem").toString(), c.getString("tls.certificate"));
    assertEquals(tmp.resolve("key.pem").toString(), c.getString("tls.private_key"));
    assertEquals(1024, c.getInt("listen.tcp_max_connections"));
  }

  @Test
  void anUnboundMemberGetsTlsAndHttpsInterfacesAfterItsOwnExtraLines() {
    Member u = CATALOG.members().get(1);
    StudyCertificate cert = new StudyCertificate(Path.of("/tmp/tls/cert.pem"), Path.of("/tmp/tls/key.pem"));
    var config = AttackMemberConfig.withEncryptedInterfaces(u.config(), 5853, 5443, cert);
    assertEquals(List.of("ratelimit: 3000", "incoming-num-tcp: 1024", "interface: 127.0.0.1@5853",
        "interface: 127.0.0.1@5443", "tls-port: 5853", "https-port: 5443", "tls-service-key: \"/tmp/tls/key.pem\"",
        "tls-service-pem: \"/tmp/tls/cert.pem\""), config.getStringList("extra"));
    assertEquals(1, config.getInt("threads"));
  }

  @Test
  void thePacedMissFloodIsAMultipleOfTheOfferedRateNotOfWhatTheBaselineMeasured() {
    AttackPhases p = phases(CATALOG);
    // 5 x 10,000 whatever the baseline measured (a baseline that lost a few queries does not lower it)
    assertEquals(50_000, p.missRate(9_871.4));
    assertEquals(50_000, p.missRate(null));
    AttackPhases closedLoop = phases(unpaced());
    assertNull(closedLoop.honestLoad(AttackPlan.Phase.BASELINE).maxQps());
    assertNull(closedLoop.offered(AttackPlan.Phase.BASELINE, Duration.ofSeconds(20)));
    assertEquals(50_000, closedLoop.missRate(10_000.0));
    // the ceiling holds either way
    assertEquals(100_000, closedLoop.missRate(72_000.0));
    assertEquals(1, closedLoop.missRate(null));
  }

  @Test
  void aZoneClientAsksBesideEveryPacedHonestClientUnlessTurnedOff() {
    AttackPhases p = phases(CATALOG);
    assertEquals(20, CATALOG.attacks().zoneClientQps());
    for (AttackPlan.Phase phase : AttackPlan.Phase.values()) {
      // the UDP phases: baseline, malformed_udp, tcp_drip_idle, both miss floods, hostile_upstream
      assertEquals(!phase.overTcp(), p.zoneClientIn(phase), phase.configName());
    }
    AttackPhases closedLoop = phases(unpaced());
    AttackPhases off = phases(edited("zone_client_qps = 20", "zone_client_qps = 0"));
    for (AttackPlan.Phase phase : AttackPlan.Phase.values()) {
      assertFalse(closedLoop.zoneClientIn(phase), phase.configName());
      assertFalse(off.zoneClientIn(phase), phase.configName());
    }
    // left out, the zone client asks 20 names a second
    Scenario byDefault = edited(", zone_client_qps = 20", "");
    assertEquals(20, byDefault.attacks().zoneClientQps());
    assertTrue(phases(byDefault).zoneClientIn(AttackPlan.Phase.MISS_FLOOD_SPREAD));
  }

  @Test
  void shoalsRefusalsAreItsDropsAndItsMissBudgetsServfails() {
    io.shoal.study.measure.MetricsScrape scrape = io.shoal.study.measure.MetricsScrape.parse(String.join("\n",
        "shoal_dropped_total{reason=\"malformed\"} 40.0",
        "shoal_dropped_total{reason=\"response\"} 10.0",
        "shoal_miss_budget_exceeded_total{budget=\"client\"} 1866.0",
        "shoal_miss_budget_exceeded_total{budget=\"zone\"} 7.0",
        "shoal_queries_total 99.0", ""));
    assertEquals(Map.of("malformed", 40L, "response", 10L, "miss_budget_client", 1866L, "miss_budget_zone", 7L),
        Refusals.shoalRefusals(scrape));
  }

  @Test
  void anUnboundMemberForwardsTheHostileZoneToTheHostileUpstream() {
    Member u = CATALOG.members().get(1);
    var config = AttackMemberConfig.withHostileForward(u.config(), CATALOG.attacks(), new InetSocketAddress("127.0.0.1", 5399));
    assertEquals("hostile.test.", config.getString(Member.UNBOUND_SIDE_ZONE));
    assertEquals("127.0.0.1@5399", config.getString(Member.UNBOUND_SIDE_ADDR));
    // the scenario's own settings stay
    assertEquals(1, config.getInt("threads"));
    assertEquals(Map.of(), Refusals.delta(Map.of("a", 3L), Map.of("a", 3L)));
    assertEquals(Map.of("b", 2L), Refusals.delta(Map.of("a", 3L), Map.of("a", 3L, "b", 2L)));
  }
}
