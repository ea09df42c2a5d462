package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import io.shoal.wire.CacheKey;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The owner of a name whose upstream fails answers the node that asks it for the name as it
 * answers its own clients: with its stale answer (serve-stale), not SERVFAIL; the asking node
 * passes it on to its client as stale. Two nodes in one JVM, node 1 the owner of the names asked.
 */
public class OwnerServeStaleSpec extends JUnitSuite {
  private static final int NODES = 2;
  private static TestAuthServer auth;
  private static final List<TestNode> nodes = new ArrayList<>();
  /** Names node 1 owns, fetched through it, then expired on both nodes' clocks. */
  private static final List<String> owned = new ArrayList<>();

  @BeforeClass
  public static void formCluster() throws Exception {
    auth = new TestAuthServer();
    for (int i = 0; i < 40; i++) {
      auth.add(new ARecord(TestAuthServer.name("s" + i + ".example.test."), DClass.IN, 60,
          InetAddress.getByName("192.0.2." + (i + 1))));
    }
    TestCluster cluster = TestCluster.of(NODES);
    for (int i = 0; i < NODES; i++) {
      nodes.add(TestNode.start(auth.hostPort(), String.join("\n",
          cluster.node(i, "stale-" + i),
          "shoal.cluster.owner_timeout = 1s",
          "shoal.serve_stale { enabled = on, max_stale = 1h, client_timeout = 1800ms }")));
    }
    TestCluster.awaitRing(nodes, NODES, 90);
    TestNode owner = nodes.get(1);
    OwnerDirectory.Owner it = new OwnerDirectory.Owner(owner.udp(), owner.tcp());
    for (int i = 0; i < 40 && owned.size() < 4; i++) {
      String name = "s" + i + ".example.test.";
      if (it.equals(nodes.get(0).server.ownerOf(CacheKey.of(name, Type.A, DClass.IN, 0)))) {
        owned.add(name);
      }
    }
    assertEquals("node 1 owns names to ask for", 4, owned.size());
    for (int i = 0; i < owned.size(); i++) {
      assertEquals(Rcode.NOERROR, DnsClient.udp(owner.udp(), DnsClient.query(10 + i, owned.get(i), Type.A, null))
          .getRcode());
      assertEquals(1, auth.queries(owned.get(i), Type.A));
    }
    // Past the 60 s TTL on both nodes, well within max_stale.
    for (TestNode n : nodes) {
      n.advanceSeconds(120);
    }
  }

  @AfterClass
  public static void stop() throws Exception {
    for (TestNode n : nodes) {
      n.close();
    }
    auth.close();
  }

  /** Asks node 0, which does not own {@code name}, with EDNS so the reply can carry an extended error. */
  private static Message askNonOwner(int id, String name) throws Exception {
    return DnsClient.udp(nodes.get(0).udp(), DnsClient.query(id, name, Type.A, 1232));
  }

  private static void assertStale(String name, Message m) {
    assertEquals(name + " answered, not SERVFAIL", Rcode.NOERROR, m.getRcode());
    List<Record> answer = m.getSection(Section.ANSWER);
    assertEquals(name + ": " + m, 1, answer.size());
    assertTrue(name + " stale answers have TTLs of at most 30 s: " + answer, answer.get(0).getTTL() <= 30);
    OPTRecord opt = m.getOPT();
    assertNotNull(name + " has an OPT", opt);
    List<EDNSOption> ede = opt.getOptions(EDNSOption.Code.EDNS_EXTENDED_ERROR);
    assertEquals(name + " says why: " + opt, 1, ede.size());
    assertEquals(name + " says it is stale", ExtendedErrorCodeOption.STALE_ANSWER,
        ((ExtendedErrorCodeOption) ede.get(0)).getErrorCode());
  }

  private static double staleLookups() throws Exception {
    return nodes.get(0).metrics().value("shoal_cluster_remote_lookups_total", "node=\"stale-0\"",
        "outcome=\"stale\"");
  }

  @Test
  public void anOwnerWhoseUpstreamRefusesAnswersThePeerStale() throws Exception {
    String name = owned.get(0);
    auth.mode(name, TestAuthServer.Mode.REFUSED);
    double before = staleLookups();
    assertStale(name, askNonOwner(100, name));
    assertEquals("the owner asked its upstream once more; the asking node did not", 2, auth.queries(name, Type.A));
    assertTrue("counted as a stale owner lookup",
        nodes.get(0).metrics().await(v -> v >= before + 1, "shoal_cluster_remote_lookups_total",
            "node=\"stale-0\"", "outcome=\"stale\"") >= before + 1);
    // Within the failure-recheck window the owner answers stale again without asking upstream.
    assertStale(name, askNonOwner(101, name));
    assertEquals(2, auth.queries(name, Type.A));
  }

  /**
   * An upstream that does not answer (2 s timeout) outlasts the asking node's owner timeout (1 s):
   * the owner answers the lookup stale after half of that, before the asking node gives up on it.
   */
  @Test
  public void anOwnerWhoseUpstreamIsSilentAnswersThePeerStaleBeforeItsOwnerTimeout() throws Exception {
    String name = owned.get(1);
    auth.mode(name, TestAuthServer.Mode.SILENT);
    assertStale(name, askNonOwner(200, name));
    assertEquals("only the owner asked upstream; the asking node did not go upstream itself",
        2, auth.queries(name, Type.A));
  }
}
