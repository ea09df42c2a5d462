package io.shoal.dnssec;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.study.host.Prerequisites;
import io.shoal.testing.DnsClient;
import io.shoal.study.server.KnotdZones;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestNode;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * RFC 9276's flat NSEC3 iteration limit over zones knotd signs with RSA-2048 keys, the key size for
 * which RFC 5155's table allowed 500 iterations: {@code many.test.} with 200 iterations, {@code
 * few.test.} with 150, each with its own trust anchor. A denial proved only by NSEC3 records above
 * {@code max_nsec3_iterations} is insecure (no AD, never SERVFAIL) and counted; one at the limit
 * is secure.
 */
public class Nsec3IterationsSpec extends JUnitSuite {
  private static final String LIMIT = "shoal_dnssec_limit_hits_total";
  private static final AtomicInteger ids = new AtomicInteger();
  private static Path dir;
  private static KnotdZones signer;
  private static TestNode shoal;

  @BeforeClass
  public static void start() throws Exception {
    for (String tool : List.of("knotd", "knotc", "keymgr")) {
      if (Prerequisites.find(tool).isEmpty()) {
        String msg = "Nsec3IterationsSpec CANCELED: " + tool + " is not installed (apt-get install -y knot)";
        System.err.println("\n*** " + msg + " ***\n");
        Assume.assumeTrue(msg, false);
      }
    }
    dir = Files.createTempDirectory("shoal-nsec3-iterations");
    Files.createDirectories(dir.resolve("signer"));
    signer = KnotdZones.builder()
        .rsaNsec3Zone("many.test.", 200, "ns A 127.0.0.1", "www A 192.0.2.1")
        .rsaNsec3Zone("few.test.", 150, "ns A 127.0.0.1", "www A 192.0.2.2")
        .start(dir.resolve("signer"));
    Path many = signer.writeAnchor("many.test.", dir.resolve("many.ds"));
    Path few = signer.writeAnchor("few.test.", dir.resolve("few.ds"));
    shoal = TestNode.start(signer.hostPort(),
        "shoal.dnssec.trust_anchors = [\"" + many + "\", \"" + few + "\"]\nshoal.dnssec.validation = on");
  }

  @AfterClass
  public static void stop() throws Exception {
    for (AutoCloseable c : new AutoCloseable[] {shoal, signer}) {
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

  private static Message ask(String name, int type) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet() & 0xFFFF, name, type, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    return DnsClient.udp(new InetSocketAddress("127.0.0.1", shoal.udp().getPort()), q);
  }

  private static int iterations(Message m) {
    return m.getSection(Section.AUTHORITY).stream().filter(r -> r instanceof NSEC3Record)
        .mapToInt(r -> ((NSEC3Record) r).getIterations()).max().orElse(-1);
  }

  @Test
  public void aDenialAboveTheLimitIsInsecureWhateverTheKeySize() throws Exception {
    double before = Metrics.value(shoal.metrics().settled(), LIMIT, "limit=\"nsec3_iterations\"");

    Message nx = ask("nothing.many.test.", Type.A);
    assertEquals("NXDOMAIN from a zone of 200 iterations: " + nx, Rcode.NXDOMAIN, nx.getRcode());
    assertEquals("knotd signed the chain with 200 iterations: " + nx, 200, iterations(nx));
    assertFalse("no AD on a denial shoal did not check: " + nx, nx.getHeader().getFlag(Flags.AD));

    Message nodata = ask("www.many.test.", Type.TXT);
    assertEquals("NODATA, not SERVFAIL: insecure, not bogus: " + nodata, Rcode.NOERROR, nodata.getRcode());
    assertTrue("the proof is passed on: " + nodata, iterations(nodata) == 200);
    assertFalse("no AD on the NODATA either: " + nodata, nodata.getHeader().getFlag(Flags.AD));

    assertEquals("both denials counted", before + 2,
        shoal.metrics().await(v -> v >= before + 2, LIMIT, "limit=\"nsec3_iterations\""), 0.0);

    Message www = ask("www.many.test.", Type.A);
    assertTrue("the zone's signed data stays secure: " + www,
        www.getRcode() == Rcode.NOERROR && www.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void aDenialAtTheLimitIsSecure() throws Exception {
    Message nx = ask("nothing.few.test.", Type.A);
    assertEquals("knotd signed the chain with 150 iterations: " + nx, 150, iterations(nx));
    assertTrue("NXDOMAIN with AD at 150 iterations: " + nx,
        nx.getRcode() == Rcode.NXDOMAIN && nx.getHeader().getFlag(Flags.AD));
    Message nodata = ask("www.few.test.", Type.TXT);
    assertTrue("NODATA with AD at 150 iterations: " + nodata,
        nodata.getRcode() == Rcode.NOERROR && nodata.getHeader().getFlag(Flags.AD));
  }
}
