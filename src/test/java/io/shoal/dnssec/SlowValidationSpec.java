package io.shoal.dnssec;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.DnsRelay;
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
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * A validation slower than the upstream deadline: each of its fetches (the answer, the zone's
 * DNSKEY) is within its own deadline, but together they take longer than one query's. The client
 * gets SERVFAIL with an extended error at the deadline, not the answer whenever validating ends.
 */
public class SlowValidationSpec extends JUnitSuite {
  /** Per attempt; the query's one deadline is 4 x 1 s + 250 ms with three servers. */
  private static final long TIMEOUT_MS = 1000;
  private static SignedZoneServer zone;
  /** The group's three servers, all in front of the zone's. */
  private static DnsRelay[] relays = new DnsRelay[3];
  private static Path dir;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    zone = new SignedZoneServer("slow.test.");
    zone.addA("www.slow.test.", "192.0.2.1");
    zone.sign();
    String[] hostPort = zone.hostPort().split(":");
    for (int i = 0; i < relays.length; i++) {
      relays[i] = new DnsRelay(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])), false);
      // The check at start gets no DNSKEY, so it leaves none in the validator's key cache.
      relays[i].hold(q -> q.getQuestion().getType() == Type.DNSKEY ? DnsRelay.DROP : 0);
    }
    dir = Files.createTempDirectory("shoal-slow-validation");
    node = TestNode.start(relays[0].hostPort(),
        "shoal.dnssec.trust_anchors = [\"" + zone.writeAnchor(dir) + "\"]\nshoal.dnssec.validation = on\n"
            + "shoal.upstreams.slow { servers = [\"" + relays[0].hostPort() + "\", \"" + relays[1].hostPort()
            + "\", \"" + relays[2].hostPort() + "\"], timeout = " + TIMEOUT_MS + "ms, max_fails = 0 }\n"
            + "shoal.profiles.default.upstreams = slow");
  }

  @AfterClass
  public static void stop() throws Exception {
    for (AutoCloseable c : new AutoCloseable[] {node, relays[0], relays[1], relays[2], zone}) {
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

  @Test
  public void aValidationLongerThanTheDeadlineIsServfailAtTheDeadline() throws Exception {
    // The check at start: both servers timed out, so no fetch of the DNSKEY is left to join.
    for (DnsRelay relay : relays) {
      String relayed = "upstream=\"" + relay.hostPort() + "\"";
      assertTrue(node.metrics().await(v -> v >= 1, "shoal_upstream_seconds_count", relayed, "outcome=\"timeout\"") >= 1);
    }
    // Now the first two servers asked for each type get no answer, and the third answers after
    // 0.7 s: the answer and then the DNSKEY each take 2.7 s, within their own deadlines, but
    // 5.4 s in all against the query's 4.25 s.
    java.util.Map<Integer, AtomicInteger> asked = new java.util.concurrent.ConcurrentHashMap<>();
    for (DnsRelay relay : relays) {
      relay.hold(q -> asked.computeIfAbsent(q.getQuestion().getType(), t -> new AtomicInteger()).incrementAndGet() <= 2
          ? DnsRelay.DROP : TIMEOUT_MS * 7 / 10);
    }
    Message q = DnsClient.query(0x5107, "www.slow.test.", Type.A, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    long sent = System.nanoTime();
    byte[] wire = DnsClient.udp(new InetSocketAddress("127.0.0.1", node.udp().getPort()), q.toWire(), 10_000);
    long waitedMs = (System.nanoTime() - sent) / 1_000_000;
    assertNotNull("an answer", wire);
    Message m = new Message(wire);
    assertEquals("SERVFAIL at the deadline, not the validated answer after it (" + waitedMs + " ms): " + m,
        Rcode.SERVFAIL, m.getRcode());
    ExtendedErrorCodeOption why = null;
    for (EDNSOption o : m.getOPT().getOptions()) {
      if (o instanceof ExtendedErrorCodeOption e) {
        why = e;
      }
    }
    assertNotNull("an extended DNS error", why);
    // EDE 22 is the deadline's answer: a validation that ended (in time or not) answers with its
    // verdict (NOERROR here, or SERVFAIL with EDE 6-10), so no wall-clock bound is needed to tell
    // them apart, and a loaded host cannot fail the check by being slow.
    assertEquals("answered after " + waitedMs + " ms", ExtendedErrorCodeOption.NO_REACHABLE_AUTHORITY, why.getErrorCode());
    assertEquals("the answer was asked of every server", 3,
        relays[0].queries(Type.A) + relays[1].queries(Type.A) + relays[2].queries(Type.A));
  }
}
