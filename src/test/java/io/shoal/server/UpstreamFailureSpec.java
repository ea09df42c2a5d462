package io.shoal.server;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestAuthServer.Mode;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * What a client sees when upstreams fail, end to end against the test authoritative server:
 * upstream REFUSED becomes a remembered SERVFAIL, RD=0 is answered from the cache only, expired
 * answers are served stale (RFC 8767) when the upstream fails or is slow, a dead server is marked
 * down and skipped, and popular names are prefetched before they expire.
 */
public class UpstreamFailureSpec extends JUnitSuite {

  private static ARecord a(String name, long ttl) throws Exception {
    return new ARecord(TestAuthServer.name(name), DClass.IN, ttl, InetAddress.getByName("192.0.2.1"));
  }

  /** A query with EDNS, so replies can carry extended errors. */
  private static Message edns(int id, String name) {
    Message m = DnsClient.query(id, name, Type.A, null);
    m.addRecord(new OPTRecord(1232, 0, 0, 0), Section.ADDITIONAL);
    return m;
  }

  /** The extended DNS error codes in {@code reply}'s OPT. */
  private static List<Integer> ede(Message reply) {
    OPTRecord opt = reply.getOPT();
    assertNotNull("an EDNS client gets an OPT", opt);
    return opt.getOptions().stream().filter(o -> o.getCode() == EDNSOption.Code.EDNS_EXTENDED_ERROR)
        .map(o -> ((ExtendedErrorCodeOption) o).getErrorCode()).toList();
  }

  private static String text(Message reply) {
    return ((ExtendedErrorCodeOption) reply.getOPT().getOptions().get(0)).getText();
  }

  /** Polls (at most 5 s) until {@code auth} saw {@code n} queries for the name; returns the count. */
  private static int awaitQueries(TestAuthServer auth, String name, int type, int n) throws InterruptedException {
    Await.until(Duration.ofSeconds(5), () -> auth.queries(name, type) >= n);
    return auth.queries(name, type);
  }

  /**
   * Polls (at most 10 s) until {@code shoal_upstream_up} with {@code label} is published with
   * {@code value}; a series not published yet does not count (a scrape reads it as 0).
   */
  private static boolean awaitGauge(TestNode node, String label, double value) throws InterruptedException {
    return Await.until(Duration.ofSeconds(10), () -> node.metrics().scrape().entrySet().stream().anyMatch(e ->
        e.getKey().startsWith("shoal_upstream_up{") && e.getKey().contains(label) && e.getValue() == value));
  }

  @Test
  public void anUpstreamRefusedIsAServfailSayingWhyAndIsRemembered() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("refused.example.test.", 60)).mode("refused.example.test.", Mode.REFUSED);
      try (TestNode node = TestNode.start(auth.hostPort(), "")) {
        Message first = DnsClient.udp(node.udp(), edns(0x2001, "refused.example.test."));
        assertEquals(Rcode.SERVFAIL, first.getRcode());
        assertEquals("No Reachable Authority", List.of(22), ede(first));
        assertEquals("upstream refused", text(first));

        Message again = DnsClient.udp(node.udp(), edns(0x2002, "refused.example.test."));
        assertEquals(Rcode.SERVFAIL, again.getRcode());
        assertEquals("Cached Error", List.of(13), ede(again));
        assertEquals("remembered: asked upstream once", 1, auth.queries("refused.example.test.", Type.A));

        node.advanceSeconds(6); // servfail_ttl is 5 s
        DnsClient.udp(node.udp(), edns(0x2003, "refused.example.test."));
        assertEquals("asked again once the SERVFAIL expired", 2, auth.queries("refused.example.test.", Type.A));
      }
    }
  }

  @Test
  public void aQueryWithoutRecursionDesiredIsAnsweredFromTheCacheOnly() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("cached.example.test.", 60)).add(a("snooped.example.test.", 60));
      try (TestNode node = TestNode.start(auth.hostPort(), "")) {
        double refusedBefore = node.metrics().value("shoal_refused_total", "reason=\"no_recursion\"");
        DnsClient.udp(node.udp(), edns(0x2101, "cached.example.test."));

        Message hit = edns(0x2102, "cached.example.test.");
        hit.getHeader().unsetFlag(Flags.RD);
        Message hitReply = DnsClient.udp(node.udp(), hit);
        assertEquals(Rcode.NOERROR, hitReply.getRcode());
        assertEquals(1, hitReply.getSection(Section.ANSWER).size());
        assertTrue("RD echoed as 0", !hitReply.getHeader().getFlag(Flags.RD));

        Message miss = edns(0x2103, "snooped.example.test.");
        miss.getHeader().unsetFlag(Flags.RD);
        Message missReply = DnsClient.udp(node.udp(), miss);
        assertEquals(Rcode.REFUSED, missReply.getRcode());
        assertEquals("Not Authoritative", List.of(20), ede(missReply));
        assertEquals("nothing went upstream", 0, auth.queries("snooped.example.test.", Type.A));
        assertEquals(refusedBefore + 1, node.metrics().await(v -> v >= refusedBefore + 1, "shoal_refused_total",
            "reason=\"no_recursion\""), 0.0);

        node.advanceSeconds(55); // the last tenth of the 60 s answer: a hit with RD=1 would prefetch
        Message late = edns(0x2104, "cached.example.test.");
        late.getHeader().unsetFlag(Flags.RD);
        assertEquals(Rcode.NOERROR, DnsClient.udp(node.udp(), late).getRcode());
        Thread.sleep(500);
        assertEquals("an RD=0 hit does not prefetch", 1, auth.queries("cached.example.test.", Type.A));
      }
    }
  }

  @Test
  public void anExpiredAnswerIsServedStaleWhenTheUpstreamFailsAndNotOverwritten() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("stale.example.test.", 60)).add(a("never.example.test.", 60));
      try (TestNode node = TestNode.start(auth.hostPort(), "")) {
        Metrics metrics = node.metrics();
        double before = metrics.value("shoal_stale_answers_total", "reason=\"upstream_failed\"");
        DnsClient.udp(node.udp(), edns(0x2201, "stale.example.test."));
        node.advanceSeconds(120); // expired a minute ago
        auth.silent(true);

        Message stale = DnsClient.udp(node.udp(), edns(0x2202, "stale.example.test."));
        assertEquals(Rcode.NOERROR, stale.getRcode());
        Record answer = stale.getSection(Section.ANSWER).get(0);
        assertEquals("192.0.2.1", ((ARecord) answer).getAddress().getHostAddress());
        assertTrue("a stale TTL is at most 30: " + answer.getTTL(), answer.getTTL() > 0 && answer.getTTL() <= 30);
        assertEquals("Stale Answer", List.of(3), ede(stale));

        Message never = DnsClient.udp(node.udp(), edns(0x2204, "never.example.test."));
        assertEquals("nothing cached, nothing stale: SERVFAIL", Rcode.SERVFAIL, never.getRcode());
        assertEquals(List.of(22), ede(never));
        assertEquals(before + 1, metrics.await(v -> v >= before + 1, "shoal_stale_answers_total",
            "reason=\"upstream_failed\""), 0.0);

        // No upstream answered: nothing holds the name back once one does (health decides when to ask).
        auth.silent(false);
        Message fresh = DnsClient.udp(node.udp(), edns(0x2205, "stale.example.test."));
        assertEquals(List.of(), ede(fresh));
        assertEquals(60, fresh.getSection(Section.ANSWER).get(0).getTTL());
      }
    }
  }

  @Test
  public void aNameItsUpstreamFailsIsServedStaleWithoutAskingAgainForThirtySeconds() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("broken.example.test.", 60));
      try (TestNode node = TestNode.start(auth.hostPort(), "")) {
        DnsClient.udp(node.udp(), edns(0x2211, "broken.example.test."));
        node.advanceSeconds(61);
        auth.mode("broken.example.test.", Mode.REFUSED);

        Message first = DnsClient.udp(node.udp(), edns(0x2212, "broken.example.test."));
        assertEquals("stale, not the upstream's refusal", List.of(3), ede(first));
        int asked = auth.queries("broken.example.test.", Type.A);
        Message again = DnsClient.udp(node.udp(), edns(0x2213, "broken.example.test."));
        assertEquals(List.of(3), ede(again));
        assertEquals("the failure-recheck window: not asked again", asked,
            auth.queries("broken.example.test.", Type.A));

        node.advanceSeconds(31);
        DnsClient.udp(node.udp(), edns(0x2214, "broken.example.test."));
        assertEquals("asked again after 30 s", asked + 1, auth.queries("broken.example.test.", Type.A));
      }
    }
  }

  @Test
  public void anAnswerExpiredLongerThanMaxStaleOrWithServeStaleOffIsServfail() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("old.example.test.", 60));
      try (TestNode node = TestNode.start(auth.hostPort(), "shoal.serve_stale.max_stale = 10m");
           TestNode off = TestNode.start(auth.hostPort(), "shoal.serve_stale.enabled = off")) {
        DnsClient.udp(node.udp(), edns(0x2301, "old.example.test."));
        DnsClient.udp(off.udp(), edns(0x2302, "old.example.test."));
        node.advanceSeconds(60 + 601);
        off.advanceSeconds(61);
        auth.silent(true);

        assertEquals(Rcode.SERVFAIL, DnsClient.udp(node.udp(), edns(0x2303, "old.example.test.")).getRcode());
        assertEquals(Rcode.SERVFAIL, DnsClient.udp(off.udp(), edns(0x2304, "old.example.test.")).getRcode());
      }
    }
  }

  @Test
  public void aClientWaitingLongerThanTheClientTimeoutGetsTheStaleAnswerAndTheFetchStillRefreshes() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("slow.example.test.", 60));
      try (TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.upstreams.default.timeout = 5s",
          "shoal.serve_stale.client_timeout = 200ms"))) {
        double before = node.metrics().value("shoal_stale_answers_total", "reason=\"client_timeout\"");
        // Kamon is process-wide: fills of nodes other tests ran are counted in the same series.
        double fillsBefore = Metrics.value(node.metrics().settled(), "shoal_cache_fill_seconds_count");
        DnsClient.udp(node.udp(), edns(0x2401, "slow.example.test."));
        node.advanceSeconds(61);
        auth.delay(1500);

        Message stale = DnsClient.udp(node.udp(), edns(0x2402, "slow.example.test."));
        assertEquals(List.of(3), ede(stale));
        assertEquals(before + 1, node.metrics().await(v -> v >= before + 1, "shoal_stale_answers_total",
            "reason=\"client_timeout\""), 0.0);

        auth.delay(0);
        // The slow answer arrives and fills the cache: the second fill after the first answer's.
        assertEquals(fillsBefore + 2, node.metrics().await(v -> v >= fillsBefore + 2, "shoal_cache_fill_seconds_count"),
            0.0);
        Message fresh = DnsClient.udp(node.udp(), edns(0x2403, "slow.example.test."));
        assertEquals(List.of(), ede(fresh));
        assertEquals("the refreshed answer, a hit", 2, auth.queries("slow.example.test.", Type.A));
      }
    }
  }

  @Test
  public void aDeadServerIsMarkedDownFailsFastAndComesBackWhenItAnswersAProbe() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      for (int i = 0; i < 10; i++) {
        auth.add(a("n" + i + ".example.test.", 60));
      }
      try (TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.serve_stale.enabled = off",
          "shoal.upstreams.default.timeout = 200ms",
          "shoal.upstreams.default.backoff = 300ms",
          "shoal.upstreams.default.max_backoff = 300ms"))) {
        String label = "upstream=\"" + auth.hostPort() + "\"";
        auth.silent(true);
        for (int i = 0; i < 3; i++) {
          assertEquals(Rcode.SERVFAIL, DnsClient.udp(node.udp(), edns(0x2500 + i, "n" + i + ".example.test.")).getRcode());
        }
        assertTrue("marked down once the probe went unanswered", awaitGauge(node, label, 0.0));
        Message fast = DnsClient.udp(node.udp(), edns(0x2503, "n3.example.test."));
        assertEquals(Rcode.SERVFAIL, fast.getRcode());
        assertEquals(List.of(22), ede(fast));
        assertEquals("a server marked down is not asked", 0, auth.queries("n3.example.test.", Type.A));

        auth.silent(false);
        assertTrue("marked up by a probe", awaitGauge(node, label, 1.0));
        assertEquals(Rcode.NOERROR, DnsClient.udp(node.udp(), edns(0x2504, "n4.example.test.")).getRcode());
      }
    }
  }

  @Test
  public void aServerThatTimesOutOnOneNameButAnswersTheProbeStaysUp() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("broken.example.test.", 60)).add(a("fine.example.test.", 60))
          .mode("broken.example.test.", Mode.SILENT);
      try (TestNode node = TestNode.start(auth.hostPort(), "shoal.serve_stale.enabled = off")) {
        for (int i = 0; i < 5; i++) {
          assertEquals(Rcode.SERVFAIL, DnsClient.udp(node.udp(), edns(0x2600 + i, "broken.example.test.")).getRcode());
        }
        assertTrue("probed", awaitQueries(auth, ".", Type.NS, 1) >= 1);
        assertEquals(Rcode.NOERROR, DnsClient.udp(node.udp(), edns(0x2610, "fine.example.test.")).getRcode());
        assertTrue("still up", awaitGauge(node, "upstream=\"" + auth.hostPort() + "\"", 1.0));
      }
    }
  }

  @Test
  public void aFailedPrefetchKeepsTheGoodAnswerAndIsNotRetriedOnEveryHit() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("steady.example.test.", 100));
      try (TestNode node = TestNode.start(auth.hostPort(), "")) {
        double before = node.metrics().value("shoal_prefetches_total");
        DnsClient.udp(node.udp(), edns(0x2801, "steady.example.test."));
        node.advanceSeconds(95);
        auth.mode("steady.example.test.", Mode.REFUSED);
        for (int i = 0; i < 5; i++) {
          Message hit = DnsClient.udp(node.udp(), edns(0x2802 + i, "steady.example.test."));
          assertEquals(Rcode.NOERROR, hit.getRcode());
          assertEquals("the cached answer, untouched by the failed prefetch", 5,
              hit.getSection(Section.ANSWER).get(0).getTTL());
          Thread.sleep(100);
        }
        assertEquals("one prefetch, not one per hit", 2, awaitQueries(auth, "steady.example.test.", Type.A, 2));
        assertEquals(before + 1, node.metrics().settled().entrySet().stream()
            .filter(e -> e.getKey().startsWith("shoal_prefetches_total")).mapToDouble(e -> e.getValue()).sum(), 0.0);
      }
    }
  }

  @Test
  public void aHitInTheLastTenthOfItsLifetimeIsPrefetched() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(a("popular.example.test.", 100));
      try (TestNode node = TestNode.start(auth.hostPort(), "")) {
        double before = node.metrics().value("shoal_prefetches_total");
        DnsClient.udp(node.udp(), edns(0x2701, "popular.example.test."));
        node.advanceSeconds(50);
        DnsClient.udp(node.udp(), edns(0x2702, "popular.example.test."));
        assertEquals("half way: no prefetch", 1, auth.queries("popular.example.test.", Type.A));

        node.advanceSeconds(45); // 5 s left of 100
        Message late = DnsClient.udp(node.udp(), edns(0x2703, "popular.example.test."));
        assertEquals("answered from the cache", 5, late.getSection(Section.ANSWER).get(0).getTTL());
        assertEquals(before + 1, node.metrics().await(v -> v >= before + 1, "shoal_prefetches_total"), 0.0);
        assertEquals("fetched again in the background", 2, awaitQueries(auth, "popular.example.test.", Type.A, 2));

        node.advanceSeconds(10); // past the first answer's expiry
        Message after = DnsClient.udp(node.udp(), edns(0x2704, "popular.example.test."));
        assertEquals("the prefetched answer, a hit", 90, after.getSection(Section.ANSWER).get(0).getTTL());
        assertEquals(2, auth.queries("popular.example.test.", Type.A));
      }
    }
  }
}
