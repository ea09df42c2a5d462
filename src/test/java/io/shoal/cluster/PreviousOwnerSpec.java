package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import io.shoal.wire.CacheKey;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.FixMethodOrder;
import org.junit.Test;
import org.junit.runners.MethodSorters;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * A node that has just joined asks a name's previous owner for the answer it holds before it asks
 * the upstreams, while the answers warm join sends it are still on their way. Here nothing is sent
 * at all (warm join is off on the two first nodes), so every answer the joiner gives without an
 * upstream query came from a previous owner's cache.
 */
// The last test moves the first nodes' clocks on.
@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class PreviousOwnerSpec extends JUnitSuite {
  private static final int NODES = 2;
  private static final int NAMES = 40;
  private static TestAuthServer auth;
  private static final List<TestNode> nodes = new ArrayList<>();
  private static TestNode joiner;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    for (int i = 0; i < NAMES; i++) {
      auth.add(new ARecord(TestAuthServer.name(name(i)), DClass.IN, 300, InetAddress.getByName("192.0.2." + (i + 1))));
      auth.add(new ARecord(TestAuthServer.name(fresh(i)), DClass.IN, 300, InetAddress.getByName("192.0.2." + (i + 1))));
    }
    TestCluster cluster = TestCluster.of(NODES);
    String settings = "\nshoal.cluster.owner_timeout = 1s\nshoal.cluster.warm_join.enabled = off";
    for (int i = 0; i < NODES; i++) {
      nodes.add(TestNode.start(auth.hostPort(), cluster.node(i, "held-" + i) + settings));
    }
    TestCluster.awaitRing(nodes, NODES, 90);
    for (int i = 0; i < NAMES; i++) {
      assertEquals(Rcode.NOERROR, ask(nodes.get(i % NODES), 100 + i, name(i)).getRcode());
      assertEquals(name(i) + " fetched once for the cluster", 1, auth.queries(name(i), Type.A));
    }
    // A window longer than any wait for the ring: the test, not the clock, decides what is asked.
    joiner = TestNode.start(auth.hostPort(), cluster.joiner("joiner")
        + "\nshoal.cluster.owner_timeout = 1s\nshoal.cluster.warm_join.ask_previous_owner = 10m");
    List<TestNode> all = new ArrayList<>(nodes);
    all.add(joiner);
    TestCluster.awaitRing(all, NODES + 1, 90);
  }

  @AfterClass
  public static void stop() throws Exception {
    if (joiner != null) {
      joiner.close();
    }
    for (TestNode n : nodes) {
      n.close();
    }
    auth.close();
  }

  private static String name(int i) {
    return "p" + i + ".example.test.";
  }

  /** Names nobody has asked for before the joiner owns them. */
  private static String fresh(int i) {
    return "f" + i + ".example.test.";
  }

  private static Message ask(TestNode node, int id, String name) throws Exception {
    return DnsClient.udp(node.udp(), DnsClient.query(id, name, Type.A, null));
  }

  /** The {@link #NAMES} names {@code of} makes. */
  private static List<String> all(java.util.function.IntFunction<String> of) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < NAMES; i++) {
      names.add(of.apply(i));
    }
    return names;
  }

  /** Of {@code names}, those the joiner owns, in the first node's ring. */
  private static List<String> ownedByJoiner(List<String> names) {
    OwnerDirectory.Owner it = new OwnerDirectory.Owner(joiner.udp(), joiner.tcp());
    List<String> owned = new ArrayList<>();
    for (String name : names) {
      if (it.equals(nodes.get(0).server.ownerOf(CacheKey.of(name, Type.A, DClass.IN, 0)))) {
        owned.add(name);
      }
    }
    return owned;
  }

  private static double lookups(String outcome) throws Exception {
    return Metrics.value(joiner.metrics().settled(), "shoal_cluster_previous_owner_lookups_total",
        "node=\"joiner\"", "outcome=\"" + outcome + "\"");
  }

  @Test
  public void aTheJoinerAnswersTheNamesItNowOwnsFromTheirPreviousOwnersWithoutUpstream() throws Exception {
    List<String> owned = ownedByJoiner(all(PreviousOwnerSpec::name));
    assertTrue("the joiner owns some of " + NAMES + " names", !owned.isEmpty());
    for (int i = 0; i < owned.size(); i++) {
      Message m = ask(joiner, 1000 + i, owned.get(i));
      assertEquals(owned.get(i), Rcode.NOERROR, m.getRcode());
      assertEquals(owned.get(i), 1, m.getSection(Section.ANSWER).size());
      long ttl = m.getSection(Section.ANSWER).get(0).getTTL();
      assertTrue(owned.get(i) + " keeps the TTL it had left, never more: " + ttl, ttl > 0 && ttl <= 300);
      assertEquals(owned.get(i) + " was not fetched upstream again", 1, auth.queries(owned.get(i), Type.A));
    }
    assertEquals("each came from the previous owner's cache", owned.size(), lookups("held"), 0.0);
    // Kept as the joiner's own: asked without recursion, it answers them from its cache.
    for (int i = 0; i < owned.size(); i++) {
      Message q = DnsClient.query(2000 + i, owned.get(i), Type.A, null);
      q.getHeader().unsetFlag(Flags.RD);
      assertEquals(owned.get(i) + " is in the joiner's cache", Rcode.NOERROR,
          DnsClient.udp(joiner.udp(), q).getRcode());
    }
  }

  @Test
  public void bANameNoNodeHoldsGoesUpstreamOnceAfterThePreviousOwnerSaysSo() throws Exception {
    List<String> owned = ownedByJoiner(all(PreviousOwnerSpec::fresh));
    assertTrue("the joiner owns some of " + NAMES + " names", !owned.isEmpty());
    double notHeld = lookups("not_held");
    for (int i = 0; i < owned.size(); i++) {
      Message m = ask(joiner, 3000 + i, owned.get(i));
      assertEquals(owned.get(i), Rcode.NOERROR, m.getRcode());
      assertEquals(owned.get(i), 1, m.getSection(Section.ANSWER).size());
      assertEquals(owned.get(i) + " fetched once", 1, auth.queries(owned.get(i), Type.A));
    }
    assertEquals("the previous owners held none of them", owned.size(), lookups("not_held") - notHeld, 0.0);
    Map<String, Double> scrape = joiner.metrics().settled();
    double refused = 0;
    for (int k = 0; k < NODES; k++) {
      refused += Metrics.value(scrape, "shoal_refused_total", "node=\"held-" + k + "\"", "reason=\"no_recursion\"");
    }
    assertEquals("a previous owner's \"not here\" is not counted as a client refused", 0.0, refused, 0.0);
  }

  /**
   * The first nodes still hold the names the joiner owns now (warm join is off, so nothing moved
   * them). Served in the last tenth of their TTL, such an answer is not prefetched: only a name's
   * owner refreshes it, or both it and the node that carried it would fetch it upstream every TTL.
   */
  @Test
  public void cANodeThatNoLongerOwnsANameDoesNotPrefetchIt() throws Exception {
    List<String> owned = ownedByJoiner(all(PreviousOwnerSpec::name));
    assertTrue("the joiner owns some of " + NAMES + " names", !owned.isEmpty());
    Map<String, Double> before = joiner.metrics().settled();
    // Each first node's clock to 20 s before the earliest of the answers it holds expires there: the
    // last tenth of their 300 s, where a hit prefetches. RD=0 reads what a node holds, and its TTL.
    List<List<String>> held = new ArrayList<>();
    int holding = 0;
    for (int k = 0; k < NODES; k++) {
      List<String> here = new ArrayList<>();
      long left = Long.MAX_VALUE;
      for (int i = 0; i < owned.size(); i++) {
        Message q = DnsClient.query(4000 + i * NODES + k, owned.get(i), Type.A, null);
        q.getHeader().unsetFlag(Flags.RD);
        Message m = DnsClient.udp(nodes.get(k).udp(), q);
        if (m.getRcode() == Rcode.NOERROR && m.getSection(Section.ANSWER).size() == 1) {
          here.add(owned.get(i));
          left = Math.min(left, m.getSection(Section.ANSWER).get(0).getTTL());
        }
      }
      held.add(here);
      holding += here.size();
      if (!here.isEmpty()) {
        assertTrue("more than 20 s left: " + left, left > 20);
        nodes.get(k).advanceSeconds(left - 20);
      }
    }
    assertTrue("the first nodes still hold the joiner's names", holding >= owned.size());
    for (int k = 0; k < NODES; k++) {
      for (int i = 0; i < held.get(k).size(); i++) {
        Message m = ask(nodes.get(k), 5000 + i * NODES + k, held.get(k).get(i));
        assertEquals(held.get(k).get(i), Rcode.NOERROR, m.getRcode());
        assertEquals(held.get(k).get(i), 1, m.getSection(Section.ANSWER).size());
      }
    }
    Map<String, Double> after = joiner.metrics().settled();
    for (int k = 0; k < NODES; k++) {
      String node = "node=\"held-" + k + "\"";
      assertEquals("held-" + k + " prefetched none of the joiner's names",
          Metrics.value(before, "shoal_prefetches_total", node), Metrics.value(after, "shoal_prefetches_total", node), 0.0);
    }
    for (String name : owned) {
      assertEquals(name + " was not fetched upstream again", 1, auth.queries(name, Type.A));
    }
  }
}
