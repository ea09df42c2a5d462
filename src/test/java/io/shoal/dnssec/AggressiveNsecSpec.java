package io.shoal.dnssec;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.SignedZoneServer;
import io.shoal.testing.TestNode;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.DClass;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSEC3PARAMRecord;
import org.xbill.DNS.NSEC3Record;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * RFC 8198 on the wire: once a secure NXDOMAIN or NODATA has shown shoal an NSEC (or NSEC3) range,
 * other names in that range are denied at once, with AD and the proof, and the signed zone's
 * server is not asked; names outside it, expired ranges, CD clients and negative trust anchors
 * still go upstream.
 */
public class AggressiveNsecSpec extends JUnitSuite {
  private static final AtomicInteger ids = new AtomicInteger();
  private static final List<String> OWNERS = List.of("a", "c", "e", "g", "i", "k", "m", "o", "q", "s", "u", "w", "y");
  private static SignedZoneServer zone;
  private static SignedZoneServer zone3;
  private static Path dir;
  private static TestNode node;
  private static TestNode off;
  private static TestNode withNta;
  private static TestNode node3;

  @BeforeClass
  public static void start() throws Exception {
    zone = new SignedZoneServer("agg.test.");
    zone3 = new SignedZoneServer("agg3.test.").nsec3();
    for (String owner : OWNERS) {
      zone.addA(owner + ".agg.test.", "192.0.2.1");
      zone3.addA(owner + ".agg3.test.", "192.0.2.1");
    }
    zone.sign();
    zone3.sign();
    dir = Files.createTempDirectory("shoal-aggressive");
    Path anchor = zone.writeAnchor(Files.createDirectory(dir.resolve("nsec")));
    Path anchor3 = zone3.writeAnchor(Files.createDirectory(dir.resolve("nsec3")));
    String anchors = "shoal.dnssec.validation = on\nshoal.dnssec.trust_anchors = [\"" + anchor + "\"]\n";
    node = TestNode.start(zone.hostPort(), anchors);
    off = TestNode.start(zone.hostPort(), anchors + "shoal.dnssec.aggressive_nsec = off");
    withNta = TestNode.start(zone.hostPort(), anchors + "shoal.dnssec.negative_trust_anchors = [\"ll.agg.test\"]");
    node3 = TestNode.start(zone3.hostPort(), "shoal.dnssec.validation = on\nshoal.dnssec.trust_anchors = [\"" + anchor3 + "\"]");
  }

  @AfterClass
  public static void stop() throws Exception {
    for (AutoCloseable c : new AutoCloseable[] {node, off, withNta, node3, zone, zone3}) {
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

  static Message ask(TestNode to, String name, int type, boolean dnssecOk, boolean cd) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet() & 0xFFFF, name, type, null);
    if (dnssecOk) {
      q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    }
    if (cd) {
      q.getHeader().setFlag(Flags.CD);
    }
    return DnsClient.udp(new InetSocketAddress("127.0.0.1", to.udp().getPort()), q);
  }

  static Message ask(TestNode to, String name) throws Exception {
    return ask(to, name, Type.A, true, false);
  }

  private static boolean has(Message m, int type, String owner) {
    return m.getSection(Section.AUTHORITY).stream()
        .anyMatch(r -> r.getType() == type && (owner == null || r.getName().toString().equals(owner)));
  }

  private static double synthesized(TestNode n, String type) throws Exception {
    return Metrics.value(n.metrics().settled(), "shoal_dnssec_synthesized_total", "type=\"" + type + "\"");
  }

  @Test
  public void aSecondNameInAProvenRangeIsDeniedWithoutAskingUpstream() throws Exception {
    Message proof = ask(node, "b.agg.test.");
    assertEquals(Rcode.NXDOMAIN, proof.getRcode());
    assertTrue("validated secure", proof.getHeader().getFlag(Flags.AD));
    double before = synthesized(node, "nxdomain");
    int upstream = zone.queries();
    Message m = ask(node, "bb.agg.test.");
    assertEquals(Rcode.NXDOMAIN, m.getRcode());
    assertEquals("no query upstream", upstream, zone.queries());
    assertTrue("AD", m.getHeader().getFlag(Flags.AD));
    assertTrue("the SOA", has(m, Type.SOA, "agg.test."));
    assertTrue("the NSEC covering the name", has(m, Type.NSEC, "a.agg.test."));
    assertTrue("the NSEC covering the wildcard", has(m, Type.NSEC, "agg.test."));
    assertTrue("their signatures", has(m, Type.RRSIG, "a.agg.test."));
    assertEquals(before + 1, synthesized(node, "nxdomain"), 0.0);

    Message plain = ask(node, "bc.agg.test.", Type.A, false, false);
    assertEquals(Rcode.NXDOMAIN, plain.getRcode());
    assertEquals("no query upstream", upstream, zone.queries());
    assertFalse("no AD for a client without DO or AD", plain.getHeader().getFlag(Flags.AD));
    assertTrue(has(plain, Type.SOA, null));
    assertFalse("no proof for a client without DO", has(plain, Type.NSEC, null) || has(plain, Type.RRSIG, null));
    long ttl = plain.getSection(Section.AUTHORITY).get(0).getTTL();
    assertTrue("TTL at most the SOA minimum and the NSEC TTL (60), got " + ttl, ttl <= 60);
  }

  @Test
  public void aNameOutsideTheProvenRangeGoesUpstream() throws Exception {
    assertEquals(Rcode.NXDOMAIN, ask(node, "d.agg.test.").getRcode());
    int upstream = zone.queries();
    assertEquals(Rcode.NXDOMAIN, ask(node, "f.agg.test.").getRcode());
    assertTrue("asked upstream", zone.queries() > upstream);
  }

  @Test
  public void anExpiredRangeGoesUpstream() throws Exception {
    assertEquals(Rcode.NXDOMAIN, ask(node, "h.agg.test.").getRcode());
    int upstream = zone.queries();
    assertEquals(Rcode.NXDOMAIN, ask(node, "hh.agg.test.").getRcode());
    assertEquals("denied from the range", upstream, zone.queries());
    node.advanceSeconds(61);
    Message m = ask(node, "hi.agg.test.");
    assertEquals(Rcode.NXDOMAIN, m.getRcode());
    assertTrue("the range (TTL 60) expired: asked upstream", zone.queries() > upstream);
    assertTrue(m.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void checkingDisabledGoesUpstream() throws Exception {
    assertEquals(Rcode.NXDOMAIN, ask(node, "j.agg.test.").getRcode());
    int upstream = zone.queries();
    Message m = ask(node, "jj.agg.test.", Type.A, true, true);
    assertEquals(Rcode.NXDOMAIN, m.getRcode());
    assertTrue("asked upstream", zone.queries() > upstream);
    assertFalse(m.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void aNameUnderANegativeTrustAnchorGoesUpstream() throws Exception {
    assertEquals(Rcode.NXDOMAIN, ask(withNta, "l.agg.test.").getRcode());
    int upstream = zone.queries();
    assertEquals(Rcode.NXDOMAIN, ask(withNta, "lm.agg.test.").getRcode());
    assertEquals("outside the anchor: denied from the range", upstream, zone.queries());
    Message m = ask(withNta, "x.ll.agg.test.");
    assertEquals(Rcode.NXDOMAIN, m.getRcode());
    assertTrue("under the anchor: asked upstream", zone.queries() > upstream);
    assertFalse(m.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void aMissingTypeAtAProvenNameIsNodataWithoutAskingUpstream() throws Exception {
    Message first = ask(node, "o.agg.test.", Type.AAAA, true, false);
    assertEquals(Rcode.NOERROR, first.getRcode());
    assertTrue(first.getSection(Section.ANSWER).isEmpty());
    double before = synthesized(node, "nodata");
    int upstream = zone.queries();
    Message m = ask(node, "o.agg.test.", Type.TXT, true, false);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertTrue(m.getSection(Section.ANSWER).isEmpty());
    assertEquals("no query upstream", upstream, zone.queries());
    assertTrue(m.getHeader().getFlag(Flags.AD));
    assertTrue("the name's own NSEC", has(m, Type.NSEC, "o.agg.test."));
    assertEquals(before + 1, synthesized(node, "nodata"), 0.0);
    Message a = ask(node, "o.agg.test.", Type.A, true, false);
    assertEquals("a type the NSEC lists is asked for", 1, a.getSection(Section.ANSWER).stream()
        .filter(r -> r.getType() == Type.A).count());
  }

  @Test
  public void deniedMissesCostNoMissBudget() throws Exception {
    try (TestNode n = TestNode.start(zone.hostPort(), "shoal.dnssec.validation = on\nshoal.dnssec.trust_anchors = [\""
        + dir.resolve("nsec/anchor.key") + "\"]\nshoal.miss_budget { per_zone = 1, include_loopback = on }")) {
      assertEquals(Rcode.NXDOMAIN, ask(n, "t.agg.test.").getRcode());
      int upstream = zone.queries();
      // Far over a budget of one miss a second for the zone: each is denied from the range.
      for (int i = 0; i < 20; i++) {
        Message m = ask(n, "t" + i + ".agg.test.");
        assertEquals("t" + i + " denied, not SERVFAIL over the budget", Rcode.NXDOMAIN, m.getRcode());
        assertTrue(m.getHeader().getFlag(Flags.AD));
      }
      assertEquals("no query upstream", upstream, zone.queries());
    }
  }

  @Test
  public void offAsksUpstreamForEveryName() throws Exception {
    assertEquals(Rcode.NXDOMAIN, ask(off, "p.agg.test.").getRcode());
    int upstream = zone.queries();
    assertEquals(Rcode.NXDOMAIN, ask(off, "pp.agg.test.").getRcode());
    assertTrue("asked upstream", zone.queries() > upstream);
  }

  @Test
  public void aReloadTurnsItOffAndOn() throws Exception {
    try (TestNode n = TestNode.start(zone.hostPort(), "shoal.dnssec.validation = on\nshoal.dnssec.trust_anchors = [\"" + dir.resolve("nsec/anchor.key")
        + "\"]\nshoal.dnssec.aggressive_nsec = off")) {
      assertEquals(Rcode.NXDOMAIN, ask(n, "r.agg.test.").getRcode());
      int upstream = zone.queries();
      assertEquals(Rcode.NXDOMAIN, ask(n, "rr.agg.test.").getRcode());
      assertTrue("off: asked upstream", zone.queries() > upstream);
      assertTrue(n.reload("shoal.dnssec.validation = on\nshoal.dnssec.trust_anchors = [\"" + dir.resolve("nsec/anchor.key") + "\"]\n"
          + "shoal.dnssec.aggressive_nsec = on").applied());
      assertEquals(Rcode.NXDOMAIN, ask(n, "rs.agg.test.").getRcode());
      upstream = zone.queries();
      assertEquals(Rcode.NXDOMAIN, ask(n, "rt.agg.test.").getRcode());
      assertEquals("on after the reload: denied from the range", upstream, zone.queries());
    }
  }

  @Test
  public void nsec3ClosestEncloserProofsDenyOtherNamesInTheirRanges() throws Exception {
    Message first = ask(node3, "b.agg3.test.");
    assertEquals(Rcode.NXDOMAIN, first.getRcode());
    assertTrue(first.getHeader().getFlag(Flags.AD));
    // Another name whose hash falls in the range that covered b's, and one whose does not.
    List<byte[]> chain = new ArrayList<>();
    chain.add(hash("agg3.test."));
    for (String owner : OWNERS) {
      chain.add(hash(owner + ".agg3.test."));
    }
    int range = rangeOf(chain, hash("b.agg3.test."));
    String inside = null;
    String outside = null;
    for (int i = 0; i < 2000 && (inside == null || outside == null); i++) {
      String candidate = "n" + i + ".agg3.test.";
      if (rangeOf(chain, hash(candidate)) == range) {
        inside = inside == null ? candidate : inside;
      } else if (rangeOf(chain, hash(candidate)) != rangeOf(chain, hash("*.agg3.test."))
          && rangeOf(chain, hash(candidate)) != rangeStartingAt(chain, hash("agg3.test."))) {
        // Not in the ranges the proof held: next closer's, wildcard's, and the encloser's own.
        outside = outside == null ? candidate : outside;
      }
    }
    int upstream = zone3.queries();
    Message m = ask(node3, inside);
    assertEquals(Rcode.NXDOMAIN, m.getRcode());
    assertEquals("no query upstream for " + inside, upstream, zone3.queries());
    assertTrue(m.getHeader().getFlag(Flags.AD));
    assertTrue("NSEC3 records with their signatures", has(m, Type.NSEC3, null) && has(m, Type.RRSIG, null));
    assertEquals(Rcode.NXDOMAIN, ask(node3, outside).getRcode());
    assertTrue("a hash outside the proven ranges: asked upstream for " + outside, zone3.queries() > upstream);
  }

  private static byte[] hash(String name) throws Exception {
    return new NSEC3PARAMRecord(Name.root, DClass.IN, 0, NSEC3Record.SHA1_DIGEST_ID, 0, 0, new byte[0])
        .hashName(Name.fromString(name));
  }

  /** The index of the chain's range (owners sorted) that {@code hash} falls in; -1 when it is an owner's own. */
  private static int rangeOf(List<byte[]> chain, byte[] hash) {
    List<byte[]> sorted = new ArrayList<>(chain);
    sorted.sort(java.util.Arrays::compareUnsigned);
    int at = sorted.size() - 1; // below the first owner: the last range, which wraps round
    for (int i = 0; i < sorted.size(); i++) {
      int c = java.util.Arrays.compareUnsigned(sorted.get(i), hash);
      if (c == 0) {
        return -1;
      }
      if (c < 0) {
        at = i;
      }
    }
    return at;
  }

  /** The index of the range that starts at owner hash {@code owner}. */
  private static int rangeStartingAt(List<byte[]> chain, byte[] owner) {
    List<byte[]> sorted = new ArrayList<>(chain);
    sorted.sort(java.util.Arrays::compareUnsigned);
    for (int i = 0; i < sorted.size(); i++) {
      if (java.util.Arrays.equals(sorted.get(i), owner)) {
        return i;
      }
    }
    return -1;
  }
}
