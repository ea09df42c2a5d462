package io.shoal.recursion;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.study.host.Prerequisites;
import io.shoal.testing.AuthorityTree;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.ShoalProcess;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.AfterClass;
import org.junit.Assume;
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
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * shoal in {@code mode = recursive}, validating, over the authority tree (knotd on port 53 of
 * loopback addresses, from the tree's root hints and root trust anchor): signed answers get AD,
 * the zone whose DS matches no key gets SERVFAIL, a glueless delegation and a cross-zone CNAME
 * resolve, the referral loop, the glueless cycle and the NXNS referral end in SERVFAIL with an
 * extended DNS error within the query budget, the limits show in the metrics, and a warm pass
 * sends no authority query.
 */
public class RecursionSpec extends JUnitSuite {
  private static final AtomicInteger ids = new AtomicInteger();
  private static AuthorityTree tree;
  private static ShoalProcess shoal;
  private static InetSocketAddress address;
  private static Metrics metrics;

  @BeforeClass
  public static void start() throws Exception {
    for (String tool : List.of("knotd", "knotc", "keymgr")) {
      if (Prerequisites.find(tool).isEmpty()) {
        String msg = "RecursionSpec CANCELED: " + tool + " is not installed. Install it with: apt-get install -y knot";
        System.err.println("\n*** " + msg + " ***\n");
        Assume.assumeTrue(msg, false);
      }
    }
    Path dir = Files.createTempDirectory("shoal-recursion");
    tree = AuthorityTree.start(dir.resolve("tree"));
    Path conf = Files.writeString(dir.resolve("shoal.conf"), String.join("\n",
        "shoal.listen.udp = \"127.0.0.1:0\"",
        "shoal.listen.tcp = \"127.0.0.1:0\"",
        "shoal.metrics.prometheus.port = 0",
        "shoal.upstreams.default.mode = recursive",
        "shoal.upstreams.default.root_hints = \"" + tree.rootHints() + "\"",
        "shoal.upstreams.default.query_loopback = on",
        "shoal.dnssec.validation = on",
        "shoal.dnssec.trust_anchors = [\"" + tree.trustAnchor() + "\"]",
        "shoal.dnssec.aggressive_nsec = off",
        ""));
    shoal = ShoalProcess.launch("serve", "--config", conf.toString(), "-Dshoal.dnssec.validation=on");
    ShoalProcess.Started started = shoal.awaitStarted(90);
    address = started.udp();
    metrics = new Metrics(started.metrics());
  }

  @AfterClass
  public static void stop() throws Exception {
    if (shoal != null) {
      shoal.close();
    }
    if (tree != null) {
      tree.close();
    }
  }

  private static Message ask(String name, int type) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet() & 0xFFFF, name, type, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    byte[] wire = DnsClient.udp(address, q.toWire(), 12_000);
    assertTrue("no reply to " + name, wire != null);
    Message m = new Message(wire);
    if (m.getHeader().getFlag(Flags.TC)) {
      m = new Message(DnsClient.tcp(address, q.toWire(), 12_000));
    }
    return m;
  }

  private static List<Integer> ede(Message m) {
    OPTRecord opt = m.getOPT();
    return opt == null ? List.of() : opt.getOptions().stream()
        .filter(o -> o.getCode() == EDNSOption.Code.EDNS_EXTENDED_ERROR)
        .map(o -> ((ExtendedErrorCodeOption) o).getErrorCode()).toList();
  }

  private static boolean has(Message m, String owner, int type) {
    for (Record r : m.getSection(Section.ANSWER)) {
      if (r.getName().toString().equalsIgnoreCase(owner) && r.getType() == type) {
        return true;
      }
    }
    return false;
  }

  @Test
  public void aSignedNameIsValidatedAndCarriesItsSignatures() throws Exception {
    Message m = ask("www.sec.test.", Type.A);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertTrue("AD on a name signed down from the root: " + m, m.getHeader().getFlag(Flags.AD));
    assertTrue(has(m, "www.sec.test.", Type.A));
    assertTrue("RRSIG for a DO client", has(m, "www.sec.test.", Type.RRSIG));
    Message nx = ask("nothere.nsec3.example.", Type.A);
    assertEquals(Rcode.NXDOMAIN, nx.getRcode());
    assertTrue("a validated NSEC3 denial has AD", nx.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void anUnsignedZoneIsInsecure() throws Exception {
    Message m = ask("www.plain.test.", Type.A);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertFalse(m.getHeader().getFlag(Flags.AD));
    assertFalse(m.getSection(Section.ANSWER).isEmpty());
  }

  @Test
  public void aDsMatchingNoKeyIsServfail() throws Exception {
    Message m = ask("www.broken.test.", Type.A);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertFalse("an extended error says why", ede(m).isEmpty());
    Message ds = ask("broken.test.", Type.DS);
    assertEquals("the DS itself is the parent's and valid", Rcode.NOERROR, ds.getRcode());
    assertTrue(ds.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void aGluelessDelegationUnderAnotherTldResolves() throws Exception {
    Message m = ask("www.glueless.test.", Type.A);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertTrue(has(m, "www.glueless.test.", Type.A));
    assertTrue(m.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void aCnameIntoAnotherZoneIsFollowed() throws Exception {
    Message m = ask("alias.sec.test.", Type.A);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertTrue(has(m, "alias.sec.test.", Type.CNAME));
    assertTrue("the chain reaches an address: " + m, has(m, "www.nsec3.example.", Type.A)
        || m.getSection(Section.ANSWER).stream().anyMatch(r -> r.getType() == Type.A));
    assertTrue(m.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void lameAndSlowServersAreGotPast() throws Exception {
    assertEquals(Rcode.NOERROR, ask("www.lame.test.", Type.A).getRcode());
    assertEquals(Rcode.NOERROR, ask("www.slow.test.", Type.A).getRcode());
  }

  @Test
  public void loopsAndNxnsEndInServfailWithAnExtendedErrorWithinTheBudget() throws Exception {
    for (String name : List.of("www.sub.loop.test.", "www.cycle1.test.", "www.nxns.test.")) {
      long before = tree.queryCount();
      long t0 = System.nanoTime();
      Message m = ask(name, Type.A);
      long millis = (System.nanoTime() - t0) / 1_000_000;
      long sent = tree.queryCount() - before;
      assertEquals(name, Rcode.SERVFAIL, m.getRcode());
      assertFalse(name + " has an extended error", ede(m).isEmpty());
      assertTrue(name + " cost " + sent + " authority queries", sent <= 64);
      assertTrue(name + " took " + millis + " ms", millis < 10_000);
    }
    assertTrue("the NXNS referral hit the NS-name limit",
        metrics.await(v -> v >= 1, "shoal_recursion_limit_hits_total", "limit=\"ns_names\"") >= 1);
  }

  @Test
  public void aWarmPassSendsNoAuthorityQuery() throws Exception {
    List<String> names = List.of("www.sec.test.", "www.plain.test.", "alias.sec.test.", "www.glueless.test.",
        "nothere.nsec3.example.", "x.wild.sec.test.");
    for (String n : names) {
      ask(n, Type.A);
    }
    long before = tree.queryCount();
    for (String n : names) {
      Message m = ask(n, Type.A);
      assertTrue(n, m.getRcode() == Rcode.NOERROR || m.getRcode() == Rcode.NXDOMAIN);
    }
    assertEquals("authority queries of the warm pass", 0, tree.queryCount() - before);
    assertTrue(metrics.await(v -> v > 0, "shoal_recursion_queries_total", "outcome=\"ok\"") > 0);
    assertTrue(metrics.await(v -> v > 0, "shoal_recursion_resolutions_total", "result=\"noerror\"") > 0);
  }

  @Test
  public void authorityRoundTripsAreTimed() throws Exception {
    double before = metrics.value("shoal_recursion_rtt_seconds_count");
    long asked = tree.queryCount();
    Message m = ask("rtt-probe.sec.test.", Type.A);
    assertEquals(Rcode.NXDOMAIN, m.getRcode());
    assertTrue("a name never asked before went to the authorities", tree.queryCount() > asked);
    assertTrue("each answered authority query is timed",
        metrics.await(v -> v >= before + 1, "shoal_recursion_rtt_seconds_count") >= before + 1);
    assertTrue("in seconds, above zero", metrics.await(v -> v > 0, "shoal_recursion_rtt_seconds_sum") > 0);
    assertTrue("with buckets for quantiles", metrics.await(v -> v > 0, "shoal_recursion_rtt_seconds_bucket") > 0);
    assertTrue("the walk kept zone cuts", metrics.await(v -> v > 0, "shoal_recursion_entries", "kind=\"zone_cuts\"") > 0);
  }
}
