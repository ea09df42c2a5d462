package io.shoal.dnssec;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.SignedZoneServer;
import io.shoal.testing.TestNode;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The same verdicts whichever provider checks the signatures: one node with
 * {@code dnssec.crypto_provider = jdk}, one with {@code auto} (Conscrypt on this host), both
 * validating ValidationSpec's kind of zone (ECDSA P-256, signed in the test). A signed answer has
 * AD, a record changed after signing is SERVFAIL with EDE 6, and the metrics say which provider
 * made the checks.
 */
public class SignatureProviderSpec extends JUnitSuite {
  private static final AtomicInteger ids = new AtomicInteger();
  private static final String CHECKS = "shoal_dnssec_signature_checks_total";
  private static final String ALG = "algorithm=\"ecdsap256sha256\"";
  private static SignedZoneServer zone;
  private static Path dir;
  private static TestNode jdk;
  private static TestNode auto;

  @BeforeClass
  public static void start() throws Exception {
    zone = new SignedZoneServer("provider.test.");
    for (String name : new String[] {"www", "forged"}) {
      zone.addA(name + ".provider.test.", "192.0.2.1");
    }
    zone.sign();
    zone.alterA("forged.provider.test.", "192.0.2.66");
    dir = Files.createTempDirectory("shoal-provider");
    String anchors = "shoal.dnssec.trust_anchors = [\"" + zone.writeAnchor(dir) + "\"]\nshoal.dnssec.validation = on\n";
    jdk = TestNode.start(zone.hostPort(), anchors + "shoal.dnssec.crypto_provider = jdk");
    auto = TestNode.start(zone.hostPort(), anchors + "shoal.dnssec.crypto_provider = auto");
  }

  @AfterClass
  public static void stop() throws Exception {
    for (AutoCloseable c : new AutoCloseable[] {jdk, auto, zone}) {
      if (c != null) {
        c.close();
      }
    }
    if (dir != null) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static Message ask(TestNode to, String name) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet() & 0xFFFF, name, Type.A, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    return DnsClient.udp(new InetSocketAddress("127.0.0.1", to.udp().getPort()), q);
  }

  /**
   * The series of single nodes: the metrics registry is one per process, and cluster nodes started
   * by other specs in the same JVM leave gauges of the same name behind, with a node label.
   */
  private static Map<String, Double> withoutNodeLabel(Map<String, Double> scrape) {
    Map<String, Double> single = new java.util.HashMap<>();
    scrape.forEach((series, v) -> {
      if (!series.contains("node=\"")) {
        single.put(series, v);
      }
    });
    return single;
  }

  private static void sameVerdicts(TestNode node, String provider) throws Exception {
    Metrics metrics = node.metrics();
    Map<String, Double> before = metrics.settled();
    Message signed = ask(node, "www.provider.test.");
    assertEquals(provider, Rcode.NOERROR, signed.getRcode());
    assertTrue(provider + ": AD on the signed answer", signed.getHeader().getFlag(Flags.AD));

    Message forged = ask(node, "forged.provider.test.");
    assertEquals(provider + ": the altered record", Rcode.SERVFAIL, forged.getRcode());
    ExtendedErrorCodeOption why = null;
    for (EDNSOption o : forged.getOPT().getOptions()) {
      if (o instanceof ExtendedErrorCodeOption e) {
        why = e;
      }
    }
    assertNotNull(provider + ": an extended DNS error", why);
    assertEquals(ExtendedErrorCodeOption.DNSSEC_BOGUS, why.getErrorCode());

    Map<String, Double> after = metrics.settled();
    String p = "provider=\"" + provider + "\"";
    assertEquals(provider + " checks P-256 signatures", 1.0,
        Metrics.value(withoutNodeLabel(after), "shoal_dnssec_signature_provider", ALG, p), 0.0);
    assertTrue(provider + " made the valid checks: " + after,
        Metrics.value(after, CHECKS, ALG, p, "result=\"valid\"") > Metrics.value(before, CHECKS, ALG, p, "result=\"valid\""));
    assertTrue(provider + " found the altered record's signature invalid",
        Metrics.value(after, CHECKS, ALG, p, "result=\"invalid\"")
            > Metrics.value(before, CHECKS, ALG, p, "result=\"invalid\""));
  }

  @Test
  public void theJdkProviderGivesTheSameVerdicts() throws Exception {
    sameVerdicts(jdk, "jdk");
  }

  @Test
  public void theNativeProviderGivesTheSameVerdicts() throws Exception {
    sameVerdicts(auto, "conscrypt");
  }
}
