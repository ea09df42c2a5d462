package io.shoal.dnssec;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.DnsRelay;
import io.shoal.testing.LogRecorder;
import io.shoal.testing.SignedZoneServer;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
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
 * An upstream that cannot do DNSSEC: a relay in front of a signed zone's server that strips every
 * RRSIG from the replies, as some forwarders and middleboxes do. Answers stay SERVFAIL with EDE 9
 * or 10 (as Unbound answers them), and shoal says why once in its log, with the remedy, and in
 * shoal_dnssec_upstream_capable.
 */
public class UpstreamDnssecSpec extends JUnitSuite {
  private static final AtomicInteger ids = new AtomicInteger();
  private static SignedZoneServer zone;
  private static DnsRelay relay;
  private static Path dir;
  private static LogRecorder logs;
  private static TestNode node;
  private static int management;

  @BeforeClass
  public static void start() throws Exception {
    zone = new SignedZoneServer("stripped.test.");
    zone.addA("www.stripped.test.", "192.0.2.1");
    zone.addA("mail.stripped.test.", "192.0.2.2");
    zone.sign();
    String[] hostPort = zone.hostPort().split(":");
    relay = new DnsRelay(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])), true);
    dir = Files.createTempDirectory("shoal-stripped");
    logs = LogRecorder.start();
    management = TestNode.freePort();
    // A group of its own: shoal_dnssec_upstream_capable{upstream="default"} is also set by the
    // nodes of other specs run earlier in the same JVM (one metrics registry per process).
    node = TestNode.start(relay.hostPort(),
        "shoal.dnssec.trust_anchors = [\"" + zone.writeAnchor(dir) + "\"]\nshoal.dnssec.validation = on\n"
            // One relay hop more than the other specs, on a host that may be busy.
            + "shoal.upstreams.stripping { servers = [\"" + relay.hostPort() + "\"], timeout = 2s }\n"
            + "shoal.profiles.default.upstreams = stripping\n"
            // Cluster mode for its management port's /ready; a cluster of one, ready without waiting for it.
            + "shoal.cluster.enabled = on\nshoal.cluster.remoting.port = 0\n"
            + "shoal.cluster.management.port = " + management + "\n"
            + "shoal.cluster.discovery.contact_points = [\"127.0.0.1:" + management + "\"]\n"
            + "shoal.cluster.discovery.required_contact_points = 1\nshoal.cluster.join_wait = 0s");
  }

  @AfterClass
  public static void stop() throws Exception {
    for (AutoCloseable c : new AutoCloseable[] {node, relay, zone, logs}) {
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

  private static Message ask(String name) throws Exception {
    Message q = DnsClient.query(ids.incrementAndGet() & 0xFFFF, name, Type.A, null);
    q.addRecord(new OPTRecord(1232, 0, 0, ExtendedFlags.DO), Section.ADDITIONAL);
    return DnsClient.udp(new InetSocketAddress("127.0.0.1", node.udp().getPort()), q);
  }

  /** /ready's status and body, or status -1 while nothing answers. */
  private static java.util.Map.Entry<Integer, String> ready() {
    try {
      java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + management + "/ready"))
              .timeout(Duration.ofSeconds(2)).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      return java.util.Map.entry(r.statusCode(), r.body());
    } catch (IOException e) {
      return java.util.Map.entry(-1, "");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return java.util.Map.entry(-1, "");
    }
  }

  @Test
  public void anUpstreamThatStripsSignaturesIsNamedAtStartOnceWithTheRemedy() throws Exception {
    // Before any client asks: the check runs at start.
    List<String> atStart = Await.value(Duration.ofSeconds(10), () -> logs.mentioning("cannot do DNSSEC"), l -> !l.isEmpty());
    assertTrue(atStart.get(0), atStart.get(0).contains("upstream group 'stripping'"));
    // Ready (the node still answers from its cache, CD queries, names under negative trust
    // anchors), with the problem and its remedy on the page.
    java.util.Map.Entry<Integer, String> ready = Await.value(Duration.ofSeconds(30), UpstreamDnssecSpec::ready,
        r -> r.getKey() == 200 && r.getValue().contains("cannot do DNSSEC"));
    assertEquals(200, (int) ready.getKey());
    assertTrue(ready.getValue(), ready.getValue().startsWith("OK\nwarning: upstream group 'stripping' cannot do DNSSEC: "
        + "it strips RRSIG records"));
    assertTrue(ready.getValue(), ready.getValue().contains("dnssec.validation = off"));
    for (String name : List.of("www.stripped.test.", "mail.stripped.test.")) {
      Message m = ask(name);
      assertEquals(name, Rcode.SERVFAIL, m.getRcode());
      ExtendedErrorCodeOption why = null;
      for (EDNSOption o : m.getOPT().getOptions()) {
        if (o instanceof ExtendedErrorCodeOption e) {
          why = e;
        }
      }
      assertNotNull(name + ": an extended DNS error", why);
      assertTrue(name + ": EDE 9 or 10, got " + why.getErrorCode() + " " + why.getText(),
          why.getErrorCode() == ExtendedErrorCodeOption.DNSKEY_MISSING
              || why.getErrorCode() == ExtendedErrorCodeOption.RRSIGS_MISSING);
    }
    List<String> said = Await.value(Duration.ofSeconds(10), () -> logs.mentioning("cannot do DNSSEC"), l -> !l.isEmpty());
    assertEquals("said once: " + said, 1, said.size());
    String line = said.get(0);
    assertTrue(line, line.contains("upstream group 'stripping'") && line.contains("strips RRSIG records"));
    assertTrue(line, line.contains("dnssec.validation = off") && line.contains("upstreams.stripping.servers"));
    // The series must be there (an absent one would read 0 too) and say 0.
    java.util.Map<String, Double> scrape = Await.value(Duration.ofSeconds(10), () -> node.metrics().scrape(),
        m -> m.keySet().stream().anyMatch(k -> k.startsWith("shoal_dnssec_upstream_capable{") && k.contains("upstream=\"stripping\""))
            && io.shoal.testing.Metrics.value(m, "shoal_dnssec_upstream_capable", "upstream=\"stripping\"") == 0.0);
    assertEquals(0.0, io.shoal.testing.Metrics.value(scrape, "shoal_dnssec_upstream_capable", "upstream=\"stripping\""), 0.0);
    // A third failing name does not say it again.
    ask("nope.stripped.test.");
    assertEquals(1, logs.mentioning("cannot do DNSSEC").size());
  }
}
