package io.shoal.reload;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * A reload applied to a running node: a new upstream list and a new blocklist take effect, a
 * cached answer stays a hit, and a bad or restart-only config is refused whole with the old one
 * still answering.
 */
public class ReloadSpec extends JUnitSuite {
  private TestAuthServer first;
  private TestAuthServer second;
  private TestNode node;
  private Path blocklist;
  private int nextId = 300;

  @Before
  public void start() throws Exception {
    first = new TestAuthServer();
    second = new TestAuthServer();
    first.addA("cached.example.test.");
    first.addA("later.example.test.");
    second.add(a("later.example.test.", "192.0.2.8"));
    second.add(a("third.example.test.", "192.0.2.8"));
    second.add(a("stale.example.test.", "192.0.2.8"));
    blocklist = Files.createTempDirectory("shoal-reload-spec").resolve("blocked.txt");
    Files.writeString(blocklist, "blocked.example.test\n");
    node = TestNode.start(first.hostPort(), "");
  }

  @After
  public void stop() throws Exception {
    node.close();
    first.close();
    second.close();
  }

  private static Record a(String name, String address) throws Exception {
    return new ARecord(TestAuthServer.name(name), DClass.IN, 60, InetAddress.getByName(address));
  }

  private int id() {
    nextId = (nextId + 1) & 0xFFFF;
    return nextId;
  }

  private Message ask(String name) throws Exception {
    return DnsClient.udp(node.udp(), DnsClient.query(id(), name, Type.A, 1232));
  }

  private static String address(Message m) {
    Record[] answer = m.getSectionArray(Section.ANSWER);
    return answer.length == 0 ? "none" : ((ARecord) answer[0]).getAddress().getHostAddress();
  }

  private static int ede(Message m) {
    for (EDNSOption o : m.getOPT().getOptions()) {
      if (o instanceof ExtendedErrorCodeOption e) {
        return e.getErrorCode();
      }
    }
    return -1;
  }

  /** The new upstreams and blocklist, as an operator would edit the file. */
  private String edited() {
    return String.join("\n",
        "shoal.upstreams.default.servers = [\"" + second.hostPort() + "\"]",
        "shoal.policy.domain_lists = [\"" + blocklist + " nxdomain\"]");
  }

  @Test
  public void aNewUpstreamAndBlocklistApplyAndTheCacheStays() throws Exception {
    assertEquals("192.0.2.7", address(ask("cached.example.test.")));
    assertEquals(1, first.queries("cached.example.test.", Type.A));

    ConfigReload.Outcome outcome = node.reload(edited());
    assertTrue(outcome.message(), outcome.applied());
    assertTrue(outcome.message(), outcome.message().contains("shoal.upstreams")
        && outcome.message().contains("shoal.policy"));

    // Still a hit: asked of neither upstream again.
    Message cached = ask("cached.example.test.");
    assertEquals("192.0.2.7", address(cached));
    assertEquals(1, first.queries("cached.example.test.", Type.A));
    assertEquals(0, second.queries("cached.example.test.", Type.A));
    // A miss goes to the new upstream only.
    assertEquals("192.0.2.8", address(ask("later.example.test.")));
    assertEquals(0, first.queries("later.example.test.", Type.A));
    // The new blocklist blocks, with EDE 15 (Blocked), and nothing goes upstream.
    Message blocked = ask("www.blocked.example.test.");
    assertEquals(Rcode.NXDOMAIN, blocked.getRcode());
    assertEquals(15, ede(blocked));
    assertEquals(0, second.queries("www.blocked.example.test.", Type.A));
  }

  @Test
  public void aConfigWithABadFileIsRefusedWholeAndTheRunningOneKept() throws Exception {
    assertTrue(node.reload(edited()).applied());
    Metrics metrics = new Metrics(node.server.metricsEndpoint());
    // This node's series carry no node label; cluster nodes other specs started in this JVM keep theirs.
    String refusedSeries = "shoal_config_reloads_total{result=\"refused\"}";
    String lastSeries = "shoal_config_last_reload_successful";
    double refusedBefore = metrics.settled().getOrDefault(refusedSeries, 0.0);

    Path missing = blocklist.resolveSibling("no-such-list.txt");
    ConfigReload.Outcome outcome = node.reload(String.join("\n",
        "shoal.upstreams.default.servers = [\"" + first.hostPort() + "\"]",
        "shoal.policy.domain_lists = [\"" + missing + " nxdomain\"]"));
    assertFalse(outcome.message(), outcome.applied());
    assertTrue(outcome.message(), outcome.message().contains("shoal.policy.domain_lists"));
    assertTrue(outcome.message(), outcome.message().contains("no-such-list.txt"));

    // Neither half of the refused file applied: the old list blocks, misses go to the old upstream.
    assertEquals(Rcode.NXDOMAIN, ask("blocked.example.test.").getRcode());
    assertEquals("192.0.2.8", address(ask("third.example.test.")));
    assertEquals(0, first.queries("third.example.test.", Type.A));
    metrics.awaitSeries(v -> v >= refusedBefore + 1, refusedSeries);
    assertEquals(0.0, metrics.awaitSeries(v -> v == 0.0, lastSeries), 0.0);

    assertTrue(node.reload(edited()).applied());
    assertEquals(1.0, metrics.awaitSeries(v -> v == 1.0, lastSeries), 0.0);
  }

  @Test
  public void aKeyThatNeedsARestartIsNamedAndNothingApplied() throws Exception {
    ConfigReload.Outcome outcome = node.reload(String.join("\n", edited(), "shoal.ingress.workers = 3"));
    assertFalse(outcome.message(), outcome.applied());
    assertTrue(outcome.message(), outcome.message().contains("shoal.ingress") && outcome.message().contains("restart"));
    // Not blocked (the old upstream's own NXDOMAIN, without EDE 15), and asked of the old upstream.
    assertEquals(-1, ede(ask("blocked.example.test.")));
    assertEquals(1, first.queries("blocked.example.test.", Type.A));
    assertEquals(second.asked(), 0, second.totalQueries());
  }

  @Test
  public void anInvalidValueIsRefusedNamingItsKey() throws Exception {
    ConfigReload.Outcome outcome = node.reload("shoal.serve_stale.max_stale = soon");
    assertFalse(outcome.message(), outcome.applied());
    assertTrue(outcome.message(), outcome.message().contains("shoal.serve_stale.max_stale"));
  }

  @Test
  public void accessControlChangesForTheNextQuery() throws Exception {
    assertEquals(Rcode.NOERROR, ask("cached.example.test.").getRcode());
    assertTrue(node.reload("shoal.access_control = [\"127.0.0.0/8 refuse\"]").applied());
    assertEquals(Rcode.REFUSED, ask("cached.example.test.").getRcode());
    ConfigReload.Outcome back = node.reload("");
    assertTrue(back.message(), back.applied());
    assertEquals(Rcode.NOERROR, ask("cached.example.test.").getRcode());
  }

  @Test
  public void aReloadThatChangesNothingSaysSo() throws Exception {
    ConfigReload.Outcome outcome = node.reload("");
    assertTrue(outcome.message(), outcome.applied());
    assertTrue(outcome.message(), outcome.message().contains("no key changed"));
  }

  @Test
  public void aChangedQueryLogKeepsTheStreamSoFarAsFileDotOne() throws Exception {
    Path dnstap = Files.createTempDirectory("shoal-reload-dnstap").resolve("queries.dnstap");
    String log = "shoal.log.dnstap.file = \"" + dnstap + "\"";
    TestNode logged = TestNode.start(first.hostPort(), log);
    try {
      DnsClient.udp(logged.udp(), DnsClient.query(id(), "cached.example.test.", Type.A, null));
      ConfigReload.Outcome outcome = logged.reload(log + "\nshoal.log.dnstap.identity = \"resolver-2\"");
      assertTrue(outcome.message(), outcome.applied());
      DnsClient.udp(logged.udp(), DnsClient.query(id(), "later.example.test.", Type.A, null));
    } finally {
      logged.close();
    }
    // Both streams complete: each starts with the Frame Streams content type and ends with its stop frame.
    for (Path f : new Path[] {dnstap.resolveSibling("queries.dnstap.1"), dnstap}) {
      byte[] bytes = Files.readAllBytes(f);
      assertTrue(f + " has the dnstap content type", new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1)
          .contains("protobuf:dnstap.Dnstap"));
      assertTrue(f + " has queries in it", bytes.length > 100);
      byte[] stop = {0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 3};
      assertTrue(f + " ends with a stop frame",
          java.util.Arrays.equals(stop, java.util.Arrays.copyOfRange(bytes, bytes.length - 12, bytes.length)));
    }
    assertTrue(new String(Files.readAllBytes(dnstap), java.nio.charset.StandardCharsets.ISO_8859_1)
        .contains("resolver-2"));
  }
}
