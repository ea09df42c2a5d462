package io.shoal.dnssec;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.SignedZoneServer;
import io.shoal.testing.TestNode;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
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
 * The KeyTrap bound (CVE-2023-50387): an RRset of a signed zone carries nine signatures that fail
 * ahead of its valid one. With {@code max_signature_checks} at its default (8) the validator stops
 * at the ninth failure (SERVFAIL, EDE 6, counted); with the bound at 9 it reaches the valid
 * signature, which shows it is the bound that cut the check short.
 */
public class SignatureChecksSpec extends JUnitSuite {
  private static final String LIMIT = "shoal_dnssec_limit_hits_total";
  private static final AtomicInteger ids = new AtomicInteger();
  private static SignedZoneServer zone;
  private static Path dir;
  private static TestNode bounded;
  private static TestNode wider;

  @BeforeClass
  public static void start() throws Exception {
    zone = new SignedZoneServer("keytrap.test.");
    zone.addA("trap.keytrap.test.", "192.0.2.1");
    zone.addA("plain.keytrap.test.", "192.0.2.2");
    zone.sign();
    zone.prependFailingSignatures("trap.keytrap.test.", Type.A, 9);
    dir = Files.createTempDirectory("shoal-keytrap");
    String anchors = "shoal.dnssec.trust_anchors = [\"" + zone.writeAnchor(dir) + "\"]\nshoal.dnssec.validation = on\n";
    bounded = TestNode.start(zone.hostPort(), anchors);
    wider = TestNode.start(zone.hostPort(), anchors + "shoal.dnssec.max_signature_checks = 9");
  }

  @AfterClass
  public static void stop() throws Exception {
    for (AutoCloseable c : new AutoCloseable[] {bounded, wider, zone}) {
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

  private static Message ask(TestNode node, String name) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet() & 0xFFFF, name, Type.A, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    return DnsClient.udp(new InetSocketAddress("127.0.0.1", node.udp().getPort()), q);
  }

  private static Integer ede(Message m) {
    OPTRecord opt = m.getOPT();
    if (opt != null) {
      for (EDNSOption o : opt.getOptions()) {
        if (o instanceof ExtendedErrorCodeOption e) {
          return e.getErrorCode();
        }
      }
    }
    return null;
  }

  @Test
  public void anRrsetWithMoreFailingSignaturesThanTheBoundIsBogusAndCounted() throws Exception {
    double before = Metrics.value(bounded.metrics().settled(), LIMIT, "limit=\"signature_checks\"");
    Message trap = ask(bounded, "trap.keytrap.test.");
    assertEquals("SERVFAIL after 8 failed checks: " + trap, Rcode.SERVFAIL, trap.getRcode());
    assertEquals("EDE 6 DNSSEC Bogus: " + trap, Integer.valueOf(ExtendedErrorCodeOption.DNSSEC_BOGUS), ede(trap));
    assertEquals("the bound's hit counted: " + trap, before + 1,
        bounded.metrics().await(v -> v >= before + 1, LIMIT, "limit=\"signature_checks\""), 0.0);

    Message plain = ask(bounded, "plain.keytrap.test.");
    assertTrue("the zone's other names stay secure: " + plain,
        plain.getRcode() == Rcode.NOERROR && plain.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void aWiderBoundReachesTheValidSignature() throws Exception {
    Message trap = ask(wider, "trap.keytrap.test.");
    assertTrue("secure with max_signature_checks = 9: " + trap,
        trap.getRcode() == Rcode.NOERROR && trap.getHeader().getFlag(Flags.AD));
    assertEquals("all ten signatures were handed over", 10,
        trap.getSection(Section.ANSWER).stream().filter(r -> r.getType() == Type.RRSIG).count());
  }
}
