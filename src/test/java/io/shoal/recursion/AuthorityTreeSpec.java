package io.shoal.recursion;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.shoal.study.host.Prerequisites;
import io.shoal.testing.AuthorityTree;
import io.shoal.testing.DnsClient;
import io.shoal.testing.UnboundRecursor;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ExtendedFlags;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The authority tree is a faithful bed for a recursive resolver: Unbound 1.17, started from the
 * tree's root hints and root trust anchor alone, validates a signed name (AD), refuses the zone
 * whose DS matches no key (SERVFAIL), resolves through a glueless delegation under another TLD,
 * follows a CNAME across zones, gets past a lame server and a slow one, and proves an unsigned
 * zone insecure (no AD). The tree counts the queries its authorities receive: a repeated question
 * adds none.
 */
public class AuthorityTreeSpec extends JUnitSuite {
  private static final AtomicInteger ids = new AtomicInteger();
  private static AuthorityTree tree;
  private static UnboundRecursor unbound;

  @BeforeClass
  public static void start() throws Exception {
    for (String tool : List.of("knotd", "knotc", "keymgr", "unbound")) {
      if (Prerequisites.find(tool).isEmpty()) {
        String msg = "AuthorityTreeSpec CANCELED: " + tool + " is not installed. Install it with: "
            + "apt-get install -y knot unbound (.ci/run does this)";
        System.err.println("\n*** " + msg + " ***\n");
        Assume.assumeTrue(msg, false);
      }
    }
    Path dir = Files.createTempDirectory("shoal-authority-tree");
    long t0 = System.nanoTime();
    tree = AuthorityTree.start(dir.resolve("tree"));
    System.out.println("AuthorityTreeSpec: the tree (" + tree.queryCounts().size() + " authorities in 127.53."
        + tree.block() + ".0/24) started in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    unbound = UnboundRecursor.start(dir.resolve("unbound"), tree.rootHints(), tree.trustAnchor(), List.of());
  }

  @AfterClass
  public static void stop() {
    if (unbound != null) {
      unbound.close();
    }
    if (tree != null) {
      tree.close();
    }
  }

  /** Asks Unbound with RD and DO, as a validating stub would. */
  static Message ask(String name, int type) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet(), name, type, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    return DnsClient.udp(unbound.address(), q);
  }

  private static Set<String> answer(Message m, int type) {
    return m.getSection(Section.ANSWER).stream().filter(r -> r.getType() == type)
        .map(r -> r.getName() + " " + r.rdataToString()).collect(Collectors.toSet());
  }

  @Test
  public void aSignedNameIsValidated() throws Exception {
    Message m = ask("www.sec.test.", Type.A);
    assertEquals(m.toString(), Rcode.NOERROR, m.getRcode());
    assertTrue(m.toString(), m.getHeader().getFlag(Flags.AD));
    assertEquals(Set.of("www.sec.test. 192.0.2.1"), answer(m, Type.A));
    Message n3 = ask("www.nsec3.example.", Type.AAAA);
    assertTrue(n3.toString(), n3.getHeader().getFlag(Flags.AD));
    assertEquals(Set.of("www.nsec3.example. 2001:db8:0:0:0:0:0:2"), answer(n3, Type.AAAA));
  }

  @Test
  public void aSignedNxdomainIsValidated() throws Exception {
    Message m = ask("nothere.nsec3.example.", Type.A);
    assertEquals(m.toString(), Rcode.NXDOMAIN, m.getRcode());
    assertTrue(m.toString(), m.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void theZoneWhoseDsMatchesNoKeyIsBogus() throws Exception {
    Message m = ask("www.broken.test.", Type.A);
    assertEquals(m.toString(), Rcode.SERVFAIL, m.getRcode());
  }

  @Test
  public void aGluelessDelegationUnderAnotherTldResolves() throws Exception {
    Message m = ask("www.glueless.test.", Type.A);
    assertEquals(m.toString(), Rcode.NOERROR, m.getRcode());
    assertTrue(m.toString(), m.getHeader().getFlag(Flags.AD));
    assertEquals(Set.of("www.glueless.test. 192.0.2.20"), answer(m, Type.A));
  }

  @Test
  public void aCnameAcrossZonesResolves() throws Exception {
    Message m = ask("alias.sec.test.", Type.A);
    assertEquals(m.toString(), Rcode.NOERROR, m.getRcode());
    assertTrue(m.toString(), m.getHeader().getFlag(Flags.AD));
    assertEquals(Set.of("alias.sec.test. www.nsec3.example."), answer(m, Type.CNAME));
    assertEquals(Set.of("www.nsec3.example. 198.51.100.1"), answer(m, Type.A));
  }

  @Test
  public void anUnsignedChildIsInsecure() throws Exception {
    Message m = ask("www.plain.test.", Type.A);
    assertEquals(m.toString(), Rcode.NOERROR, m.getRcode());
    assertFalse(m.toString(), m.getHeader().getFlag(Flags.AD));
    assertEquals(Set.of("www.plain.test. 203.0.113.1"), answer(m, Type.A));
    Message open = ask("www.open.example.", Type.A);
    assertFalse(open.toString(), open.getHeader().getFlag(Flags.AD));
    assertEquals(Set.of("www.open.example. 203.0.113.10"), answer(open, Type.A));
  }

  @Test
  public void aLameServerAndASlowOneAreGotPast() throws Exception {
    Message lame = ask("www.lame.test.", Type.A);
    assertEquals(lame.toString(), Rcode.NOERROR, lame.getRcode());
    assertEquals(Set.of("www.lame.test. 192.0.2.40"), answer(lame, Type.A));
    int relayedBefore = tree.slowRelayed();
    Message slow = ask("www.slow.test.", Type.A);
    assertEquals(slow.toString(), Rcode.NOERROR, slow.getRcode());
    assertTrue(slow.toString(), slow.getHeader().getFlag(Flags.AD));
    assertEquals(Set.of("www.slow.test. 192.0.2.50"), answer(slow, Type.A));
    assertTrue("the answer came through the slow relay", tree.slowRelayed() > relayedBefore);
  }

  @Test
  public void aSecondTreeInTheSameJvmHasItsOwnAddressesAndStopsEverythingItStarted() throws Exception {
    Path dir = Files.createTempDirectory("shoal-authority-tree-2");
    InetSocketAddress root;
    try (AuthorityTree second = AuthorityTree.start(dir)) {
      assertNotEquals(tree.block(), second.block());
      root = second.server("root").address();
      assertEquals("127.53." + second.block() + ".1", root.getAddress().getHostAddress());
      Message soa = second.server("root").ask(Name.root, Type.NS);
      assertEquals(soa.toString(), Rcode.NOERROR, soa.getRcode());
      assertTrue(soa.toString(), soa.getSection(Section.ADDITIONAL).stream()
          .anyMatch(r -> r.rdataToString().equals("127.53." + second.block() + ".1")));
      assertTrue(Files.readString(second.rootHints()).contains("127.53." + second.block() + ".1"));
    }
    // every knotd of the second tree is gone: its root address no longer answers, the first tree's does
    Message q = DnsClient.query(ids.incrementAndGet(), ".", Type.SOA, 1232);
    assertNull("the closed tree's root still answers", DnsClient.udp(root, q.toWire(), 1000));
    assertEquals(Rcode.NOERROR, tree.server("root").ask(Name.root, Type.SOA).getRcode());
  }

  @Test
  public void theTreeCountsWhatReachesItsAuthorities() throws Exception {
    long before = tree.queryCount();
    Message first = ask("www.sec.test.", Type.TXT);
    assertEquals(first.toString(), Rcode.NOERROR, first.getRcode());
    long afterFirst = tree.queryCount();
    assertTrue("a new question reached an authority: " + before + " -> " + afterFirst, afterFirst > before);
    Message again = ask("www.sec.test.", Type.TXT);
    assertEquals(first.getSection(Section.ANSWER).stream().map(Record::rdataToString).collect(Collectors.toSet()),
        again.getSection(Section.ANSWER).stream().map(Record::rdataToString).collect(Collectors.toSet()));
    assertEquals("a repeated question is answered from Unbound's cache", afterFirst, tree.queryCount());
  }
}
