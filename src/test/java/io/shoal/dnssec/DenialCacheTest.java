package io.shoal.dnssec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.SignedZoneServer;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** What a {@link DenialCache} proves from the authority sections a signed zone's server gives. */
class DenialCacheTest {
  private static SignedZoneServer zone;

  @BeforeAll
  static void start() throws Exception {
    zone = new SignedZoneServer("unit.test.");
    // d.unit.test. exists only as the parent of y.d.unit.test.: an empty non-terminal.
    for (String owner : new String[] {"a", "c", "e", "sub", "y.d"}) {
      zone.addA(owner + ".unit.test.", "192.0.2.1");
    }
    zone.add(new org.xbill.DNS.NSRecord(Name.fromString("sub.unit.test."), org.xbill.DNS.DClass.IN, 300,
        Name.fromString("ns.elsewhere.")));
    zone.sign();
  }

  @AfterAll
  static void stop() {
    zone.close();
  }

  private static Message upstream(String name, int type) throws Exception {
    Message q = DnsClient.query(1, name, type, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    InetSocketAddress at = new InetSocketAddress("127.0.0.1", Integer.parseInt(zone.hostPort().split(":")[1]));
    return DnsClient.udp(at, q);
  }

  private static final long NOW = 1_000_000L;

  @Test
  void aCoveredNameIsDeniedUntilTheRangeExpires() throws Exception {
    DenialCache cache = new DenialCache();
    assertTrue(cache.learn(upstream("b.unit.test.", Type.A).getSection(Section.AUTHORITY), NOW));
    DenialCache.Synthesized s = cache.synthesize(Name.fromString("bb.unit.test."), Type.A, true, NOW + 1000);
    assertNotNull(s);
    assertTrue(s.nxdomain());
    assertEquals(NOW + 60_000, s.expiresAtMillis());
    Message m = new Message(s.wire());
    assertEquals(Rcode.NXDOMAIN, m.getRcode());
    assertTrue(m.getSection(Section.AUTHORITY).stream().anyMatch(r -> r.getType() == Type.NSEC));
    assertNull(cache.synthesize(Name.fromString("bb.unit.test."), Type.A, true, NOW + 60_000), "expired");
    assertNull(cache.synthesize(Name.fromString("f.unit.test."), Type.A, true, NOW + 1000), "outside");
    assertNull(cache.synthesize(Name.fromString("a.unit.test."), Type.A, true, NOW + 1000), "exists");
  }

  @Test
  void aLearnedProofIsNotNewAgain() throws Exception {
    DenialCache cache = new DenialCache();
    Message m = upstream("b.unit.test.", Type.A);
    assertTrue(cache.learn(m.getSection(Section.AUTHORITY), NOW));
    assertEquals(false, cache.learn(m.getSection(Section.AUTHORITY), NOW + 1000));
    assertEquals(2, cache.ranges());
    assertTrue(cache.bytes() > 0);
  }

  @Test
  void anEmptyNonTerminalIsNotDeniedThoughARangeSpansIt() throws Exception {
    DenialCache cache = new DenialCache();
    // NSEC c.unit.test. -> y.d.unit.test. spans d.unit.test., which exists (below it is y.d).
    assertTrue(cache.learn(upstream("x.d.unit.test.", Type.A).getSection(Section.AUTHORITY), NOW));
    assertNull(cache.synthesize(Name.fromString("d.unit.test."), Type.A, true, NOW + 1000));
    DenialCache.Synthesized below = cache.synthesize(Name.fromString("w.d.unit.test."), Type.A, true, NOW + 1000);
    assertNotNull(below, "a name below it in the range is denied");
    assertTrue(below.nxdomain());
  }

  @Test
  void aCaseOrWildcardVariantOfAnOwnerIsNotDenied() throws Exception {
    DenialCache cache = new DenialCache();
    cache.learn(upstream("b.unit.test.", Type.A).getSection(Section.AUTHORITY), NOW);
    assertNull(cache.synthesize(Name.fromString("A.UNIT.TEST."), Type.A, true, NOW + 1000), "an owner, any case");
    assertNull(cache.synthesize(Name.fromString("b.unit.test."), Type.DS, true, NOW + 1000), "DS is the parent's");
  }

  @Test
  void aNodataProofDeniesOtherMissingTypesOnly() throws Exception {
    DenialCache cache = new DenialCache();
    cache.learn(upstream("a.unit.test.", Type.AAAA).getSection(Section.AUTHORITY), NOW);
    DenialCache.Synthesized txt = cache.synthesize(Name.fromString("a.unit.test."), Type.TXT, false, NOW + 1000);
    assertNotNull(txt);
    assertEquals(false, txt.nxdomain());
    Message m = new Message(txt.wire());
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertEquals(1, m.getSection(Section.AUTHORITY).size(), "the SOA only, for a client without DO");
    assertNull(cache.synthesize(Name.fromString("a.unit.test."), Type.A, true, NOW + 1000), "A exists");
  }

  @Test
  void pastItsBoundTheRangeKeptLongestAgoGoesFirst() throws Exception {
    DenialCache cache = new DenialCache(2, DenialCache.MAX_BYTES);
    // b's proof: a -> c (covers b) and the apex's range (covers the wildcard); f's adds e -> sub.
    cache.learn(upstream("b.unit.test.", Type.A).getSection(Section.AUTHORITY), NOW);
    assertNotNull(cache.synthesize(Name.fromString("bb.unit.test."), Type.A, true, NOW + 1000));
    cache.learn(upstream("f.unit.test.", Type.A).getSection(Section.AUTHORITY), NOW);
    assertEquals(2, cache.ranges());
    assertNull(cache.synthesize(Name.fromString("bb.unit.test."), Type.A, true, NOW + 1000), "a -> c evicted");
    assertNotNull(cache.synthesize(Name.fromString("ff.unit.test."), Type.A, true, NOW + 1000));
    DenialCache small = new DenialCache(100, 1);
    small.learn(upstream("b.unit.test.", Type.A).getSection(Section.AUTHORITY), NOW);
    assertEquals(0, small.ranges(), "nothing fits in one byte");
    assertEquals(0, small.bytes());
  }

  @Test
  void namesBelowADelegationAreNotDenied() throws Exception {
    DenialCache cache = new DenialCache();
    // The NSEC at the delegation sub.unit.test. (NS, no SOA) covers names after it in order.
    cache.learn(upstream("sub.unit.test.", Type.TXT).getSection(Section.AUTHORITY), NOW);
    cache.learn(upstream("subb.unit.test.", Type.A).getSection(Section.AUTHORITY), NOW);
    assertNull(cache.synthesize(Name.fromString("x.sub.unit.test."), Type.A, true, NOW + 1000));
  }
}
