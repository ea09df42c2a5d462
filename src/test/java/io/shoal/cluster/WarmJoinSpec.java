package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.ShoalCli;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import io.shoal.wire.CacheKey;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
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
 * A fourth node joins three warm ones (one JVM, one counting test upstream). With warm join the
 * nodes that hold the names it now owns send them to it, and it answers them with no upstream
 * query; with warm join off on the joiner, each of those names is fetched upstream again. The
 * nodes that sent the joiner its names drop their own copies of them. A node that stops hands the
 * names it owns over to the nodes that own them next.
 */
// The joiner without warm join comes first and leaves before the one with it joins.
@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class WarmJoinSpec extends JUnitSuite {
  private static final int NODES = 3;
  private static final int NAMES = 60;
  private static TestAuthServer auth;
  private static TestCluster cluster;
  private static final List<TestNode> nodes = new ArrayList<>();
  /** The fourth node that warm join filled; it leaves in the last test. */
  private static TestNode warm;

  @BeforeClass
  public static void warmCluster() throws Exception {
    auth = new TestAuthServer();
    for (int i = 0; i < NAMES; i++) {
      auth.add(new ARecord(TestAuthServer.name(name(i)), DClass.IN, 300,
          InetAddress.getByName("192.0.2." + (i + 1))));
      auth.add(new ARecord(TestAuthServer.name(later(i)), DClass.IN, 300,
          InetAddress.getByName("192.0.2." + (i + 1))));
    }
    cluster = TestCluster.of(NODES);
    for (int i = 0; i < NODES; i++) {
      nodes.add(TestNode.start(auth.hostPort(), cluster.node(i, "warm-" + i) + "\nshoal.cluster.owner_timeout = 1s"));
    }
    TestCluster.awaitRing(nodes, NODES, 90);
    // Every name through every node: its owner fetches it once, the others keep near copies.
    for (int i = 0; i < NAMES; i++) {
      for (int k = 0; k < NODES; k++) {
        assertEquals(Rcode.NOERROR, ask(nodes.get(k), 100 + i * NODES + k, name(i)).getRcode());
      }
    }
    for (int i = 0; i < NAMES; i++) {
      assertEquals(name(i) + " fetched once for the cluster", 1, auth.queries(name(i), Type.A));
    }
  }

  @AfterClass
  public static void stop() throws Exception {
    if (warm != null) {
      warm.close();
    }
    for (TestNode n : nodes) {
      n.close();
    }
    auth.close();
  }

  private static String name(int i) {
    return "w" + i + ".example.test.";
  }

  /** Names first asked once the fourth node is in. */
  private static String later(int i) {
    return "x" + i + ".example.test.";
  }

  private static Message ask(TestNode node, int id, String name) throws Exception {
    return DnsClient.udp(node.udp(), DnsClient.query(id, name, Type.A, null));
  }

  /** Asks with RD=0: the node answers from what it holds, or REFUSED. */
  private static Message cacheOnly(TestNode node, int id, String name) throws Exception {
    Message q = DnsClient.query(id, name, Type.A, null);
    q.getHeader().unsetFlag(Flags.RD);
    return DnsClient.udp(node.udp(), q);
  }

  private static int upstreamQueries() {
    int sum = 0;
    for (int i = 0; i < NAMES; i++) {
      sum += auth.queries(name(i), Type.A);
    }
    return sum;
  }

  /** The names that {@code joiner} owns in the ring of another node (of the first, unless it is that one). */
  private static List<String> ownedBy(TestNode joiner) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < NAMES; i++) {
      names.add(name(i));
    }
    return ownedBy(joiner, names);
  }

  private static List<String> ownedBy(TestNode joiner, List<String> names) {
    OwnerDirectory.Owner it = new OwnerDirectory.Owner(joiner.udp(), joiner.tcp());
    // A node's own ring names no owner for the keys it owns itself.
    TestNode viewer = joiner == nodes.get(0) ? nodes.get(1) : nodes.get(0);
    List<String> owned = new ArrayList<>();
    for (String name : names) {
      if (it.equals(viewer.server.ownerOf(CacheKey.of(name, Type.A, DClass.IN, 0)))) {
        owned.add(name);
      }
    }
    return owned;
  }

  /** Starts a joiner and waits until every node (it too) has it in the ring. */
  private static TestNode join(String label, String extra) throws Exception {
    TestNode joiner = TestNode.start(auth.hostPort(),
        cluster.joiner(label) + "\nshoal.cluster.owner_timeout = 1s\n" + extra);
    List<TestNode> all = new ArrayList<>(nodes);
    all.add(joiner);
    TestCluster.awaitRing(all, NODES + 1, 90);
    return joiner;
  }

  @Test
  public void aJoinerWithoutWarmJoinFetchesTheNamesItNowOwnsUpstream() throws Exception {
    TestNode cold = join("cold", "shoal.cluster.warm_join.enabled = off");
    try {
      List<String> owned = ownedBy(cold);
      assertTrue("the joiner owns some of " + NAMES + " names", !owned.isEmpty());
      int before = upstreamQueries();
      for (int i = 0; i < NAMES; i++) {
        Message m = ask(cold, 1000 + i, name(i));
        assertEquals(name(i), Rcode.NOERROR, m.getRcode());
        assertEquals(name(i), 1, m.getSection(Section.ANSWER).size());
      }
      assertEquals("each name the joiner owns went upstream again, the others to their owners",
          owned.size(), upstreamQueries() - before);
      assertEquals("it took no answers in", 0.0, cold.metrics().value(
          "shoal_cluster_warm_join_answers_total", "node=\"cold\"", "direction=\"received\""), 0.0);
      assertEquals("the nodes that offered them kept their own", 0.0, released(cold.metrics().settled()), 0.0);
    } finally {
      cold.close();
    }
    TestCluster.awaitRing(nodes, NODES, 60);
  }

  @Test
  public void bAJoinerIsSentTheNamesItNowOwnsAndAnswersThemWithoutUpstream() throws Exception {
    Metrics metrics = nodes.get(0).metrics();
    double sentBefore = 0;
    for (int k = 0; k < NODES; k++) {
      sentBefore += metrics.value("shoal_cluster_warm_join_answers_total", "node=\"warm-" + k + "\"",
          "direction=\"sent\"");
    }
    // A window longer than the test: only the end of every member's transfer can close it.
    warm = join("warm", "shoal.cluster.warm_join.ask_previous_owner = 10m");
    {
      List<String> owned = ownedBy(warm);
      assertTrue("the joiner owns some of " + NAMES + " names", !owned.isEmpty());
      int before = upstreamQueries();
      // The transfer: until the joiner holds every name it owns (RD=0 asks nobody else).
      int[] id = {2000};
      for (String name : owned) {
        int rcode = Await.value(Duration.ofSeconds(30), () -> cacheOnly(warm, id[0]++ & 0xFFFF, name).getRcode(),
            rc -> rc == Rcode.NOERROR);
        assertEquals("the joiner was sent " + name, Rcode.NOERROR, rcode);
      }
      for (int i = 0; i < NAMES; i++) {
        Message m = ask(warm, 3000 + i, name(i));
        assertEquals(name(i), Rcode.NOERROR, m.getRcode());
        assertEquals(name(i), 1, m.getSection(Section.ANSWER).size());
        long ttl = m.getSection(Section.ANSWER).get(0).getTTL();
        assertTrue(name(i) + " keeps the TTL it had left, never more: " + ttl, ttl > 0 && ttl <= 300);
      }
      assertEquals("no name went upstream again: the joiner's own were sent to it, the others are at their owners",
          0, upstreamQueries() - before);
      double received = warm.metrics().await(v -> v >= owned.size(),
          "shoal_cluster_warm_join_answers_total", "node=\"warm\"", "direction=\"received\"");
      assertTrue("the joiner counted what it received: " + received, received >= owned.size());
      double sent = 0;
      for (int k = 0; k < NODES; k++) {
        sent += metrics.value("shoal_cluster_warm_join_answers_total", "node=\"warm-" + k + "\"",
            "direction=\"sent\"");
      }
      assertTrue("the nodes counted what they sent: " + (sent - sentBefore), sent - sentBefore >= owned.size());
      // Once every member has ended its transfer, a miss for a name the joiner owns goes upstream
      // without asking a previous owner first (each try asks a name nobody has asked before).
      int[] next = {0};
      boolean stopped = Await.until(Duration.ofSeconds(40), () -> {
        String name = null;
        while (name == null && next[0] < 500) {
          String candidate = "y" + next[0]++ + ".example.test.";
          name = ownedBy(warm, List.of(candidate)).isEmpty() ? null : candidate;
        }
        if (name == null) {
          return false;
        }
        try {
          double asked = previousOwnerLookups(warm.metrics().settled());
          assertEquals(name, Rcode.NXDOMAIN, ask(warm, 7000 + next[0], name).getRcode());
          return previousOwnerLookups(warm.metrics().settled()) == asked;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      assertTrue("the joiner stopped asking previous owners once the transfers ended", stopped);
    }
  }

  /** Lookups the joiner ("warm") made at a previous owner, every outcome, in {@code scrape}. */
  private static double previousOwnerLookups(Map<String, Double> scrape) {
    return Metrics.value(scrape, "shoal_cluster_previous_owner_lookups_total", "node=\"warm\"");
  }

  /**
   * The nodes that sent the joiner its names removed them from their own caches once it stored
   * them (a cache sized for the names a node owns keeps no copies of others'), and kept the names
   * they still own. Asked again, a moved name is answered by its new owner, not fetched upstream.
   */
  @Test
  public void cTheNodesThatSentTheJoinerItsNamesReleaseTheirCopies() throws Exception {
    List<String> moved = ownedBy(warm);
    for (int k = 0; k < NODES; k++) {
      TestNode node = nodes.get(k);
      List<String> kept = ownedBy(node);
      assertTrue("warm-" + k + " still owns some of " + NAMES + " names", !kept.isEmpty());
      // Released batch by batch as the joiner acknowledges them: until none of the moved names is left.
      String dump = Await.value(Duration.ofSeconds(30), () -> dump(node),
          d -> moved.stream().noneMatch(name -> dumped(d, name)));
      for (String name : moved) {
        assertFalse("warm-" + k + " released " + name + ", which the joiner owns now:\n" + dump, dumped(dump, name));
      }
      for (String name : kept) {
        assertTrue("warm-" + k + " still holds " + name + ", which it owns:\n" + dump, dumped(dump, name));
      }
      double entries = node.metrics().await(v -> v == kept.size(),
          "shoal_cache_entries", "node=\"warm-" + k + "\"", "cache=\"answers\"");
      assertEquals("warm-" + k + "'s answer cache holds the names it owns, no more", kept.size(), entries, 0.0);
    }
    Map<String, Double> scrape = nodes.get(0).metrics().settled();
    assertEquals("the nodes counted what they released", moved.size(), released(scrape), 0.0);
    int before = upstreamQueries();
    for (int i = 0; i < moved.size(); i++) {
      for (int k = 0; k < NODES; k++) {
        Message m = ask(nodes.get(k), 6000 + i * NODES + k, moved.get(i));
        assertEquals(moved.get(i), Rcode.NOERROR, m.getRcode());
        assertEquals(moved.get(i), 1, m.getSection(Section.ANSWER).size());
      }
    }
    assertEquals("the released names are answered by the joiner, not fetched again", 0, upstreamQueries() - before);
  }

  /** Answers the three first nodes released by warm join, in {@code scrape}. */
  private static double released(Map<String, Double> scrape) {
    double sum = 0;
    for (int k = 0; k < NODES; k++) {
      sum += Metrics.value(scrape, "shoal_cluster_warm_join_answers_total", "node=\"warm-" + k + "\"",
          "direction=\"released\"");
    }
    return sum;
  }

  /** {@code shoal cache dump} of {@code node}'s own caches, through its admin endpoint. */
  private static String dump(TestNode node) {
    ShoalCli.Run run = ShoalCli.run("cache", "dump", "--admin", "127.0.0.1:" + node.server.adminAddress().getPort(),
        "--token-file", node.adminTokenFile().toString());
    assertEquals(run.err(), 0, run.status());
    return run.out();
  }

  /** Whether {@code dump} has an A record of {@code name}. */
  private static boolean dumped(String dump, String name) {
    return Pattern.compile("(?m)^" + Pattern.quote(name) + "\\s+\\d+\\s+IN\\s+A\\s").matcher(dump).find();
  }

  /**
   * A node told to stop hands the answers it owns over to the nodes that own them once it has
   * left: names only it held are answered by the others without an upstream query.
   */
  @Test
  public void dANodeThatStopsHandsTheNamesItOwnsOverBeforeItLeaves() throws Exception {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < NAMES; i++) {
      names.add(later(i));
    }
    List<String> owned = ownedBy(warm, names);
    assertTrue("the fourth node owns some of " + NAMES + " names", !owned.isEmpty());
    // Asked only through their owner: no other node holds them, not even as a near copy.
    for (int i = 0; i < owned.size(); i++) {
      assertEquals(Rcode.NOERROR, ask(warm, 4000 + i, owned.get(i)).getRcode());
      assertEquals(owned.get(i), 1, auth.queries(owned.get(i), Type.A));
    }
    warm.close();
    warm = null;
    TestCluster.awaitRing(nodes, NODES, 60);
    for (int i = 0; i < owned.size(); i++) {
      for (int k = 0; k < NODES; k++) {
        Message m = ask(nodes.get(k), 5000 + i * NODES + k, owned.get(i));
        assertEquals(owned.get(i), Rcode.NOERROR, m.getRcode());
        assertEquals(owned.get(i), 1, m.getSection(Section.ANSWER).size());
      }
      assertEquals(owned.get(i) + " was handed over, not fetched again", 1, auth.queries(owned.get(i), Type.A));
    }
  }

  /**
   * A stopping node leaves the other nodes' owner rings while it still answers DNS: their lookups
   * of its names go to the new owners from then on, never to a node that no longer reads (they
   * would time out and go upstream). It waits for every other node to confirm the drop, so this
   * holds on a host too busy to spread the withdrawal within any fixed time.
   */
  @Test
  public void eAStoppingNodeLeavesTheOtherRingsWhileItStillAnswers() throws Exception {
    TestNode late = join("late", "");
    java.util.concurrent.CompletableFuture<Void> closed = java.util.concurrent.CompletableFuture.runAsync(() -> {
      try {
        late.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    // Polled every 50 ms: well inside the second the stopping node reads on after the drop.
    boolean droppedEverywhere = Await.until(Duration.ofSeconds(40),
        () -> nodes.stream().allMatch(n -> n.server.ownerRingSize() == NODES));
    assertTrue("every other node's ring dropped the stopping node", droppedEverywhere);
    // The drop is confirmed to the stopping node, which then still reads for a second: a query sent
    // now is read and answered (its answer may wait behind the stop, so the timeout is generous).
    byte[] reply = DnsClient.udp(late.udp(), DnsClient.query(6000, name(0), Type.A, null).toWire(), 5000);
    closed.get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertTrue("the stopping node answered DNS after the others had dropped it from their rings", reply != null);
    assertEquals(Rcode.NOERROR, new Message(reply).getRcode());
  }
}
