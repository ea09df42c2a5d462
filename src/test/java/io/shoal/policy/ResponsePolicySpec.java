package io.shoal.policy;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** shoal.policy end to end: a domain list and an RPZ file over UDP and TCP, counted, never asked upstream. */
public class ResponsePolicySpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestNode node;
  private static int nextId = 100;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("fine.example.test.");
    auth.addA("ok.wild.example.test.");
    auth.addA("allowed.ads.example.test.");
    Path dir = Files.createTempDirectory("shoal-policy-spec");
    Path list = Files.writeString(dir.resolve("ads.txt"), "# ads\nads.example.test\n0.0.0.0 tracker.example.test\n");
    Path rpz = Files.writeString(dir.resolve("policy.rpz"), String.join("\n",
        "$ORIGIN rpz.test.", "@ 60 SOA localhost. admin.localhost. 1 3600 600 86400 60",
        "*.wild.example.test CNAME .", "ok.wild.example.test CNAME rpz-passthru.",
        "allowed.ads.example.test CNAME rpz-passthru.", "silent.example.test CNAME rpz-drop.", ""));
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.policy.domain_lists = [\"" + list + " nxdomain\"]",
        "shoal.policy.rpz_files = [\"" + rpz + "\"]"));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private static synchronized int id() {
    nextId = (nextId + 1) & 0xFFFF;
    return nextId;
  }

  private static int ede(Message m) {
    for (EDNSOption o : m.getOPT().getOptions()) {
      if (o instanceof ExtendedErrorCodeOption e) {
        return e.getErrorCode();
      }
    }
    return -1;
  }

  @Test
  public void aListedNameAndNamesBelowItGetNxdomainWithBlockedAndAreCounted() throws Exception {
    Metrics metrics = node.metrics();
    String[] labels = {"list=\"ads.txt\"", "action=\"nxdomain\""};
    double before = metrics.value("shoal_policy_hits_total", labels);
    Message udp = DnsClient.udp(node.udp(), DnsClient.query(id(), "www.ads.example.test.", Type.A, 1232));
    assertEquals(Rcode.NXDOMAIN, udp.getRcode());
    assertEquals(15, ede(udp));
    Message tcp = DnsClient.tcp(node.tcp(), DnsClient.query(id(), "tracker.example.test.", Type.AAAA, 1232));
    assertEquals(Rcode.NXDOMAIN, tcp.getRcode());
    assertEquals(15, ede(tcp));
    assertEquals(before + 2, metrics.await(v -> v >= before + 2, "shoal_policy_hits_total", labels), 0.0);
    assertEquals(0, auth.queries("www.ads.example.test.", Type.A));
    assertEquals(0, auth.queries("tracker.example.test.", Type.AAAA));
    assertEquals(Rcode.NOERROR,
        DnsClient.udp(node.udp(), DnsClient.query(id(), "fine.example.test.", Type.A, null)).getRcode());
    assertEquals(1, auth.queries("fine.example.test.", Type.A));
  }

  @Test
  public void anRpzWildcardBlocksAndPassthruLetsThrough() throws Exception {
    Message blocked = DnsClient.udp(node.udp(), DnsClient.query(id(), "a.wild.example.test.", Type.A, 1232));
    assertEquals(Rcode.NXDOMAIN, blocked.getRcode());
    assertEquals(15, ede(blocked));
    Message through = DnsClient.udp(node.udp(), DnsClient.query(id(), "ok.wild.example.test.", Type.A, 1232));
    assertEquals(Rcode.NOERROR, through.getRcode());
    assertEquals(1, through.getSection(Section.ANSWER).size());
    Message listedButAllowed =
        DnsClient.tcp(node.tcp(), DnsClient.query(id(), "allowed.ads.example.test.", Type.A, null));
    assertEquals(Rcode.NOERROR, listedButAllowed.getRcode());
    assertEquals(1, auth.queries("allowed.ads.example.test.", Type.A));
    Metrics metrics = node.metrics();
    metrics.await(v -> v >= 2, "shoal_policy_hits_total", "list=\"policy.rpz\"", "action=\"passthru\"");
    assertEquals(2.0, metrics.value("shoal_policy_hits_total", "list=\"policy.rpz\"", "action=\"passthru\""), 0.0);
  }

  @Test
  public void dropGetsNoReply() throws Exception {
    byte[] q = DnsClient.query(id(), "silent.example.test.", Type.A, null).toWire();
    assertNull(DnsClient.udp(node.udp(), q, 700));
  }
}
