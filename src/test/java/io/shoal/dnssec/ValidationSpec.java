package io.shoal.dnssec;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.SignedZoneServer;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
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
 * DNSSEC validation end to end: a zone signed in the test (ECDSA P-256), served by a small signed
 * authoritative server, its key's DS the only trust anchor, and shoal validating what it forwards.
 */
public class ValidationSpec extends JUnitSuite {
  private static final AtomicInteger ids = new AtomicInteger();
  /**
   * A validated miss is answered by its upstream deadline (SERVFAIL after it; SlowValidationSpec).
   * The test node's 300 ms timeout makes that 850 ms, which eight concurrent validations in a JVM
   * not yet compiled, on one loaded core, have overrun; these tests are about verdicts, not time.
   */
  private static final String ROOMY_DEADLINE = "shoal.upstreams.default.timeout = 1500ms\n";
  private static final ExecutorService pool = Executors.newFixedThreadPool(8);
  private static SignedZoneServer zone;
  private static Path dir;
  private static TestNode node;
  private static TestNode permissive;
  private static TestNode negative;

  @BeforeClass
  public static void start() throws Exception {
    zone = new SignedZoneServer("signed.test.");
    for (String name : List.of("www", "hit", "counted", "forged", "forged-counted", "expired", "c0", "c1", "c2", "c3",
        "c4", "c5", "c6", "c7")) {
      zone.addA(name + ".signed.test.", "192.0.2.1");
    }
    Instant now = Instant.now();
    zone.window("expired.signed.test.", now.minus(Duration.ofDays(10)), now.minus(Duration.ofDays(1)));
    zone.sign();
    zone.alterA("forged.signed.test.", "192.0.2.66");
    zone.alterA("forged-counted.signed.test.", "192.0.2.66");
    dir = Files.createTempDirectory("shoal-dnssec");
    Path anchor = zone.writeAnchor(dir);
    String anchors = "shoal.dnssec.trust_anchors = [\"" + anchor + "\"]\n" + ROOMY_DEADLINE;
    node = TestNode.start(zone.hostPort(), anchors + "shoal.dnssec.validation = on");
    permissive = TestNode.start(zone.hostPort(), anchors + "shoal.dnssec.validation = permissive");
    negative = TestNode.start(zone.hostPort(),
        anchors + "shoal.dnssec.validation = on\nshoal.dnssec.negative_trust_anchors = [\"signed.test\"]");
  }

  @AfterClass
  public static void stop() throws Exception {
    pool.shutdownNow();
    for (AutoCloseable c : new AutoCloseable[] {node, permissive, negative, zone}) {
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

  /** A query for {@code name} A with the given flags; DO means EDNS with DO set. */
  private static Message ask(TestNode to, String name, boolean dnssecOk, boolean ad, boolean cd) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet(), name, Type.A, null);
    if (dnssecOk) {
      q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    }
    if (ad) {
      q.getHeader().setFlag(Flags.AD);
    }
    if (cd) {
      q.getHeader().setFlag(Flags.CD);
    }
    return DnsClient.udp(new InetSocketAddress("127.0.0.1", to.udp().getPort()), q);
  }

  private static ExtendedErrorCodeOption ede(Message m) {
    OPTRecord opt = m.getOPT();
    assertNotNull("an OPT in the reply to an EDNS query", opt);
    for (EDNSOption o : opt.getOptions()) {
      if (o instanceof ExtendedErrorCodeOption e) {
        return e;
      }
    }
    return null;
  }

  private static String address(Message m) {
    for (Record r : m.getSection(Section.ANSWER)) {
      if (r instanceof ARecord a) {
        return a.getAddress().getHostAddress();
      }
    }
    return null;
  }

  private static boolean hasSignatures(Message m) {
    return m.getSection(Section.ANSWER).stream().anyMatch(r -> r.getType() == Type.RRSIG);
  }

  @Test
  public void aSecureAnswerCarriesAdOnlyToClientsThatSetDoOrAd() throws Exception {
    Message withDo = ask(node, "www.signed.test.", true, false, false);
    assertEquals(Rcode.NOERROR, withDo.getRcode());
    assertTrue("AD for a DO client", withDo.getHeader().getFlag(Flags.AD));
    assertTrue("signatures for a DO client", hasSignatures(withDo));

    Message withAd = ask(node, "www.signed.test.", false, true, false);
    assertTrue("AD for an AD client", withAd.getHeader().getFlag(Flags.AD));
    assertFalse("no signatures without DO", hasSignatures(withAd));
    assertEquals("192.0.2.1", address(withAd));

    int upstream = zone.queries("www.signed.test.", Type.A);
    Message plain = ask(node, "www.signed.test.", false, false, false);
    assertEquals(Rcode.NOERROR, plain.getRcode());
    assertFalse("no AD for a client that set neither DO nor AD", plain.getHeader().getFlag(Flags.AD));
    assertEquals("192.0.2.1", address(plain));
    assertEquals("the same cached answer as the AD client's", upstream, zone.queries("www.signed.test.", Type.A));
  }

  @Test
  public void aRepeatedQueryIsACacheHitThatStillCarriesAd() throws Exception {
    Message first = ask(node, "hit.signed.test.", true, false, false);
    assertTrue(first.getHeader().getFlag(Flags.AD));
    int upstream = zone.queries("hit.signed.test.", Type.A);
    assertEquals(1, upstream);
    Message second = ask(node, "hit.signed.test.", true, false, false);
    assertTrue("AD from the cache", second.getHeader().getFlag(Flags.AD));
    assertTrue(hasSignatures(second));
    assertEquals("no more upstream queries", upstream, zone.queries("hit.signed.test.", Type.A));
  }

  @Test
  public void aRecordAlteredAfterSigningIsServfailWithDnssecBogus() throws Exception {
    Message m = ask(node, "forged.signed.test.", true, false, false);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    assertTrue(m.getSection(Section.ANSWER).isEmpty());
    ExtendedErrorCodeOption why = ede(m);
    assertNotNull("an extended DNS error", why);
    assertEquals(ExtendedErrorCodeOption.DNSSEC_BOGUS, why.getErrorCode());

    // Remembered for servfail_ttl: the repeat is answered from the cache, saying so (Cached Error).
    int upstream = zone.queries("forged.signed.test.", Type.A);
    Message again = ask(node, "forged.signed.test.", true, false, false);
    assertEquals(Rcode.SERVFAIL, again.getRcode());
    assertEquals(ExtendedErrorCodeOption.CACHED_ERROR, ede(again).getErrorCode());
    assertEquals(upstream, zone.queries("forged.signed.test.", Type.A));
  }

  @Test
  public void concurrentMissesInOneZoneAskForItsKeyOnce() throws Exception {
    int before = zone.queries("signed.test.", Type.DNSKEY);
    try (TestNode fresh = TestNode.start(zone.hostPort(), "shoal.dnssec.trust_anchors = [\"" + dir.resolve("anchor.key")
        + "\"]\nshoal.dnssec.validation = on\n" + ROOMY_DEADLINE)) {
      // The node's check at start asks for the anchor's DNSKEY; validations soon after may join it.
      int checked = io.shoal.testing.Await.value(java.time.Duration.ofSeconds(10),
          () -> zone.queries("signed.test.", Type.DNSKEY), n -> n >= before + 1);
      List<CompletableFuture<Message>> replies = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        String name = "c" + i + ".signed.test.";
        replies.add(CompletableFuture.supplyAsync(() -> {
          try {
            return ask(fresh, name, true, false, false);
          } catch (Exception e) {
            throw new CompletionException(e);
          }
        }, pool));
      }
      for (CompletableFuture<Message> r : replies) {
        assertTrue(r.get(10, TimeUnit.SECONDS).getHeader().getFlag(Flags.AD));
      }
      int asked = zone.queries("signed.test.", Type.DNSKEY) - checked;
      assertTrue("at most one DNSKEY query for eight concurrent validations: " + asked, asked <= 1);
    }
  }

  @Test
  public void anExpiredSignatureIsServfailWithSignatureExpired() throws Exception {
    Message m = ask(node, "expired.signed.test.", true, false, false);
    assertEquals(Rcode.SERVFAIL, m.getRcode());
    ExtendedErrorCodeOption why = ede(m);
    assertNotNull("an extended DNS error", why);
    assertEquals(ExtendedErrorCodeOption.SIGNATURE_EXPIRED, why.getErrorCode());
  }

  @Test
  public void checkingDisabledGetsTheAlteredAnswerUnvalidated() throws Exception {
    Message m = ask(node, "forged.signed.test.", true, false, true);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertEquals("192.0.2.66", address(m));
    assertFalse(m.getHeader().getFlag(Flags.AD));
    assertTrue("CD echoed", m.getHeader().getFlag(Flags.CD));
  }

  @Test
  public void aNegativeTrustAnchorPassesTheZoneOnUnvalidated() throws Exception {
    Message forged = ask(negative, "forged.signed.test.", true, false, false);
    assertEquals(Rcode.NOERROR, forged.getRcode());
    assertEquals("192.0.2.66", address(forged));
    assertFalse(forged.getHeader().getFlag(Flags.AD));
    Message good = ask(negative, "www.signed.test.", true, false, false);
    assertEquals(Rcode.NOERROR, good.getRcode());
    assertFalse("unvalidated, so no AD", good.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void nxdomainProvenByNsecCarriesAd() throws Exception {
    Message m = ask(node, "nope.signed.test.", true, false, false);
    assertEquals(Rcode.NXDOMAIN, m.getRcode());
    assertTrue("AD on a proven NXDOMAIN", m.getHeader().getFlag(Flags.AD));
    assertTrue(m.getSection(Section.AUTHORITY).stream().anyMatch(r -> r.getType() == Type.NSEC));
  }

  @Test
  public void nodataProvenByNsecCarriesAd() throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet(), "www.signed.test.", Type.AAAA, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    Message m = DnsClient.udp(new InetSocketAddress("127.0.0.1", node.udp().getPort()), q);
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertTrue(m.getSection(Section.ANSWER).isEmpty());
    assertTrue("AD on a proven NODATA", m.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void permissiveAnswersTheAlteredRecordWithoutAd() throws Exception {
    Message forged = ask(permissive, "forged.signed.test.", true, false, false);
    assertEquals(Rcode.NOERROR, forged.getRcode());
    assertEquals("192.0.2.66", address(forged));
    assertFalse(forged.getHeader().getFlag(Flags.AD));
    Message good = ask(permissive, "www.signed.test.", true, false, false);
    assertTrue("secure answers still get AD", good.getHeader().getFlag(Flags.AD));
  }

  @Test
  public void secureAndBogusAnswersAreCounted() throws Exception {
    Metrics metrics = node.metrics();
    Map<String, Double> before = metrics.settled();
    assertTrue(ask(node, "counted.signed.test.", true, false, false).getHeader().getFlag(Flags.AD));
    assertEquals(Rcode.SERVFAIL, ask(node, "forged-counted.signed.test.", true, false, false).getRcode());
    Map<String, Double> after = metrics.settled();
    String answers = "shoal_dnssec_answers_total";
    assertTrue(Metrics.value(after, answers, "status=\"secure\"") >= Metrics.value(before, answers, "status=\"secure\"") + 1);
    assertTrue(Metrics.value(after, answers, "status=\"bogus\"") >= Metrics.value(before, answers, "status=\"bogus\"") + 1);
    String failures = "shoal_dnssec_validation_failures_total";
    assertTrue(Metrics.value(after, failures, "reason=\"dnssec_bogus\"")
        >= Metrics.value(before, failures, "reason=\"dnssec_bogus\"") + 1);
  }
}
