package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.FixMethodOrder;
import org.junit.Test;
import org.junit.runners.MethodSorters;
import org.scalatestplus.junit.JUnitSuite;
import io.shoal.wire.CacheKey;
import io.shoal.wire.DnsQuery;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.GenericEDNSOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Three nodes in one JVM (separate actor systems on 127.0.0.1, distinct ports) forming a cluster
 * through Cluster Bootstrap with config discovery, in front of one test upstream.
 */
// losingANodeNeverTurnsIntoServfail stops node 2 for good: it must run last, so the order is fixed.
@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class ClusterSpec extends JUnitSuite {
  private static final int NODES = 3;
  private static final int NEAR_ENTRIES = 64;
  /**
   * Longer than an owner (or the test upstream) can take on a loaded core, so a lookup that is
   * merely slow is never given up on: given up, the asking node fetches the name itself (by design)
   * and a test that counts upstream queries or owned entries sees one too many. At 1 s, a run pinned
   * to one busy core did exactly that.
   */
  private static final String OWNER_TIMEOUT = "10s";
  private static final String UPSTREAM_TIMEOUT = "5s";
  /** A client waits out an owner timeout and the upstream query after it: no timing to lose to. */
  private static final int CLIENT_TIMEOUT_MS = 30_000;
  private static TestAuthServer auth;
  private static final List<TestNode> nodes = new ArrayList<>();
  private static final List<String> labels = new ArrayList<>();

  @BeforeClass
  public static void formCluster() throws Exception {
    auth = new TestAuthServer();
    for (int i = 0; i < 60; i++) {
      auth.add(new ARecord(TestAuthServer.name("c" + i + ".example.test."), DClass.IN, 300,
          InetAddress.getByName("192.0.2." + (i + 1))));
      auth.add(new ARecord(TestAuthServer.name("k" + i + ".cap.example.test."), DClass.IN, 300,
          InetAddress.getByName("192.0.2." + (i + 1))));
    }
    TestCluster cluster = TestCluster.of(NODES);
    for (int i = 0; i < NODES; i++) {
      String label = "node-" + i;
      labels.add(label);
      nodes.add(TestNode.start(auth.hostPort(), String.join("\n",
          cluster.node(i, label),
          "shoal.cluster.owner_timeout = " + OWNER_TIMEOUT,
          "shoal.upstreams.default.timeout = " + UPSTREAM_TIMEOUT,
          "shoal.caches.clustered = ${shoal.caches.answers}",
          "shoal.profiles.default.cache = clustered",
          "shoal.caches.capacity = ${shoal.caches.answers}",
          "shoal.profiles.capacity { match = [\"cap.example.test.\"], cache = capacity, upstreams = default }",
          "shoal.cluster.near_cache.max_entries = " + NEAR_ENTRIES)));
    }
    TestCluster.awaitRing(nodes, NODES, 90);
    // First contact between nodes (remoting handshake, serializer start-up) can outlast the
    // owner timeout; warm every path up so the tests see the steady state.
    for (int i = 50; i < 60; i++) {
      for (int k = 0; k < NODES; k++) {
        ask(nodes.get(k), 9000 + i * 10 + k, "c" + i + ".example.test.");
      }
    }
  }

  @AfterClass
  public static void stop() throws Exception {
    for (TestNode n : nodes) {
      try {
        n.close();
      } catch (Exception e) {
        // already stopped by a test
      }
    }
    auth.close();
  }

  private static Message ask(TestNode node, int id, String name) throws Exception {
    return exchange(node, DnsClient.query(id, name, Type.A, null));
  }

  private static Message exchange(TestNode node, Message query) throws Exception {
    byte[] reply = DnsClient.udp(node.udp(), query.toWire(), CLIENT_TIMEOUT_MS);
    if (reply == null) {
      throw new SocketTimeoutException("no UDP reply from " + node.udp());
    }
    return new Message(reply);
  }

  /** Asks with RD=0: the node answers from what it holds, or REFUSED. */
  private static Message cacheOnly(TestNode node, int id, String name) throws Exception {
    Message q = DnsClient.query(id, name, Type.A, null);
    q.getHeader().unsetFlag(Flags.RD);
    return exchange(node, q);
  }

  @Test
  public void aNameIsFetchedUpstreamOnceForTheWholeCluster() throws Exception {
    for (int i = 0; i < 20; i++) {
      String name = "c" + i + ".example.test.";
      for (int k = 0; k < NODES; k++) {
        Message m = ask(nodes.get((i + k) % NODES), 100 * i + k, name);
        assertEquals(Rcode.NOERROR, m.getRcode());
      }
      // Repeats stay local: each node now holds a copy.
      for (int k = 0; k < NODES; k++) {
        ask(nodes.get(k), 100 * i + 10 + k, name);
      }
      assertEquals(name + " fetched once for three nodes", 1, auth.queries(name, Type.A));
    }
    Metrics metrics = nodes.get(0).metrics();
    double remote = metrics.await(v -> v > 0, "shoal_cluster_remote_lookups_total", "outcome=\"answered\"");
    assertTrue("non-owners asked owners, who answered: " + remote, remote > 0);
    assertTrue("answered lookups are timed",
        metrics.await(v -> v >= remote, "shoal_cluster_remote_lookup_seconds_count") >= remote);
    assertEquals("no owner lookup timed out", 0.0,
        metrics.value("shoal_cluster_remote_lookups_total", "outcome=\"timeout\""), 0.0);
    double members = metrics.await(v -> v == NODES, "shoal_cluster_members", "node=\"node-0\"");
    assertEquals(NODES, members, 0.0);
    assertEquals("node-0 routes every member's keys to it", NODES,
        metrics.await(v -> v == NODES, "shoal_cluster_owners", "node=\"node-0\""), 0.0);
  }

  /**
   * The owner lookups a reader sends with its batch of replies are not replies: a node's
   * shoal_queries_total counts its clients' answers only, however many of them it asked owners.
   */
  @Test
  public void clientRepliesAreCountedButNotTheOwnerLookupsSentWithThem() throws Exception {
    TestNode asked = nodes.get(1);
    String node = "node=\"node-1\"";
    Map<String, Double> before = asked.metrics().settled();
    int queries = 9;
    for (int i = 0; i < queries; i++) {
      assertEquals(Rcode.NOERROR, ask(asked, 4000 + i, "c" + (31 + i) + ".example.test.").getRcode());
    }
    Map<String, Double> after = asked.metrics().settled();
    double lookups = Metrics.value(after, "shoal_cluster_remote_lookups_total", node, "outcome=\"answered\"")
        - Metrics.value(before, "shoal_cluster_remote_lookups_total", node, "outcome=\"answered\"");
    assertTrue("node-1 asked owners for some of the names: " + lookups, lookups > 0);
    assertEquals("replies counted on node-1", queries,
        Metrics.value(after, "shoal_queries_total", node, "transport=\"udp\"")
            - Metrics.value(before, "shoal_queries_total", node, "transport=\"udp\""), 0.0);
  }

  /**
   * An owner lookup is a DNS query with shoal's peer option: whichever node gets one resolves it
   * itself, so a lookup is never passed on, even where the rings of two nodes disagree.
   */
  @Test
  public void aQueryMarkedAsAnOwnerLookupIsResolvedWhereItArrives() throws Exception {
    String name = "c25.example.test.";
    Metrics metrics = nodes.get(0).metrics();
    double remoteBefore = metrics.value("shoal_cluster_remote_lookups_total");
    int asked = 2; // nodes 0 and 1: node 2 may have been stopped by another test
    for (int k = 0; k < asked; k++) {
      Message q = DnsClient.query(4000 + k, name, Type.A, null);
      q.addRecord(new OPTRecord(1232, 0, 0, 0, List.of(new GenericEDNSOption(DnsQuery.PEER_OPTION, new byte[0]))),
          Section.ADDITIONAL);
      Message m = exchange(nodes.get(k), q);
      assertEquals(Rcode.NOERROR, m.getRcode());
      assertEquals(1, m.getSection(Section.ANSWER).size());
    }
    assertEquals("each node fetched it itself", asked, auth.queries(name, Type.A));
    assertEquals("no node passed a marked lookup on", remoteBefore,
        metrics.value("shoal_cluster_remote_lookups_total"), 0.0);
  }

  @Test
  public void flushThroughOneNodeEmptiesEveryNode() throws Exception {
    String name = "c30.example.test.";
    for (int k = 0; k < NODES; k++) {
      ask(nodes.get(k), 3000 + k, name);
    }
    assertEquals(1, auth.queries(name, Type.A));
    Metrics metrics = nodes.get(0).metrics();

    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + nodes.get(1).server.adminAddress().getPort()
            + "/cache/flush?name=C30.example.test")).header(io.shoal.admin.AdminToken.HEADER, nodes.get(1).adminToken())
            .POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(r.body(), 200, r.statusCode());
    assertTrue(r.body(), r.body().contains("\"cluster\":true"));
    // Each node applies the flush when the record reaches it. Probe every cache with RD=0 (answered
    // from the cache or its copies only; nothing goes upstream) until none holds the name.
    for (int k = 0; k < NODES; k++) {
      TestNode node = nodes.get(k);
      int id = 3200 + k;
      int rcode = Await.value(Duration.ofSeconds(30), () -> cacheOnly(node, id, name).getRcode(), rc -> rc == Rcode.REFUSED);
      assertEquals(labels.get(k) + " no longer holds " + name, Rcode.REFUSED, rcode);
    }
    Map<String, Double> settled = metrics.settled();
    double[] missesBefore = new double[NODES];
    for (int k = 0; k < NODES; k++) {
      missesBefore[k] = Metrics.value(settled, "shoal_cache_misses_total", "node=\"" + labels.get(k) + "\"",
          "cache=\"clustered\"");
    }

    for (int k = 0; k < NODES; k++) {
      assertEquals(Rcode.NOERROR, ask(nodes.get(k), 3100 + k, name).getRcode());
    }
    assertEquals("the owner fetched it again, once (owner lookups given up on so far: "
            + metrics.value("shoal_cluster_remote_lookups_total", "outcome=\"timeout\"") + ")",
        2, auth.queries(name, Type.A));
    for (int k = 0; k < NODES; k++) {
      String node = "node=\"" + labels.get(k) + "\"";
      double before = missesBefore[k];
      double misses = metrics.await(v -> v >= before + 1, "shoal_cache_misses_total", node, "cache=\"clustered\"");
      assertTrue(labels.get(k) + " missed after the flush", misses >= before + 1);
    }
  }

  @Test
  public void losingANodeNeverTurnsIntoServfail() throws Exception {
    TestNode leaving = nodes.get(2);
    List<Integer> rcodes = new ArrayList<>();
    // The stop begins once queries are flowing, so some are asked before it, some during it.
    CountDownLatch flowing = new CountDownLatch(10);
    AtomicReference<Exception> stopFailed = new AtomicReference<>();
    Thread stopper = new Thread(() -> {
      try {
        flowing.await(60, TimeUnit.SECONDS);
        leaving.close();
      } catch (Exception e) {
        stopFailed.set(e);
      }
    });
    stopper.start();
    // Queries go on until the node has stopped (and a few more), however long a loaded machine
    // takes to stop it: bounded by count as well as by a deadline far beyond a stop's.
    long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    int i = 0;
    while (System.nanoTime() < end && i < 10_000 && (stopper.isAlive() || i < 40)) {
      String name = "c" + (40 + i % 10) + ".example.test.";
      rcodes.add(ask(nodes.get(i % 2), 5000 + i, name).getRcode());
      flowing.countDown();
      i++;
      Thread.sleep(1);
    }
    stopper.join(Duration.ofSeconds(60).toMillis());
    assertTrue("node-2 stopped while the others were asked", !stopper.isAlive());
    assertEquals("node-2 stopped cleanly", null, stopFailed.get());
    assertTrue("queries were sent: " + rcodes.size(), rcodes.size() >= 40);
    assertTrue("no SERVFAIL while ownership moved: " + rcodes, rcodes.stream().allMatch(rc -> rc == Rcode.NOERROR));
    Await.until(Duration.ofSeconds(30), () -> nodes.get(0).server.ownerRingSize() == NODES - 1);
    assertEquals("the ring dropped the node that left", NODES - 1, nodes.get(0).server.ownerRingSize());
    for (int k = 0; k < 20; k++) {
      assertEquals(Rcode.NOERROR, ask(nodes.get(k % 2), 7000 + k, "c" + (40 + k) + ".example.test.").getRcode());
    }
  }

  @Test
  public void eachAnswerIsHeldOnceInTheClusterAndCopiesOnlyInTheNearCache() throws Exception {
    int names = 30;
    // Through nodes 0 and 1 only: another test may have stopped node 2.
    for (int i = 0; i < names; i++) {
      for (int k = 0; k < 2; k++) {
        assertEquals(Rcode.NOERROR, ask(nodes.get(k), 8000 + 10 * i + k, "k" + i + ".cap.example.test.").getRcode());
      }
    }
    Metrics metrics = nodes.get(0).metrics();
    double held = metrics.await(v -> v == names, "shoal_cache_entries", "cache=\"capacity\"");
    assertEquals("each answer in the cache of its owner only, not one per node", names, held, 0.0);
    for (int k = 0; k < 2; k++) {
      double near = metrics.value("shoal_cache_entries", "cache=\"near\"", "node=\"" + labels.get(k) + "\"");
      assertTrue(labels.get(k) + " keeps copies within its near cache: " + near, near > 0 && near <= NEAR_ENTRIES);
    }
  }

  /**
   * The near cache keeps what is asked: names another node owns, each asked once (a crawl, a
   * scan of twice the near cache's size), do not push out the copies of the names this node's
   * clients ask again and again. Before, the copy that expired soonest went first, and with equal
   * TTLs that was the one kept longest: the hot names, every one of them.
   */
  @Test
  public void aScanOfNamesAskedOnceKeepsTheHotCopies() throws Exception {
    TestNode asker = nodes.get(0);
    List<String> earlier = othersNames(asker, "earlier", NEAR_ENTRIES + 16);
    List<String> hot = othersNames(asker, "hot", 6);
    List<String> once = othersNames(asker, "once", 2 * NEAR_ENTRIES + 20);
    int id = 10_000;
    // A node in service: its near cache full of copies of names asked before.
    for (String name : earlier) {
      assertEquals(Rcode.NOERROR, ask(asker, id++, name).getRcode());
    }
    for (int round = 0; round < 12; round++) {
      for (String name : hot) {
        assertEquals(Rcode.NOERROR, ask(asker, id++, name).getRcode());
      }
    }
    for (String name : once) {
      assertEquals(Rcode.NOERROR, ask(asker, id++, name).getRcode());
    }
    Metrics metrics = asker.metrics();
    String node = "node=\"" + labels.get(0) + "\"";
    Map<String, Double> before = metrics.settled();
    for (String name : hot) {
      assertEquals(Rcode.NOERROR, ask(asker, id++, name).getRcode());
    }
    Map<String, Double> after = metrics.settled();
    double nearHits = Metrics.value(after, "shoal_cache_hits_total", node, "cache=\"near\"")
        - Metrics.value(before, "shoal_cache_hits_total", node, "cache=\"near\"");
    double lookups = Metrics.value(after, "shoal_cluster_remote_lookups_total", node)
        - Metrics.value(before, "shoal_cluster_remote_lookups_total", node);
    assertEquals("every hot name answered from its near copy after the scan", hot.size(), nearHits, 0.0);
    assertEquals("no hot name had to be asked of its owner again", 0.0, lookups, 0.0);
  }

  /** {@code count} new names of the test zone that another node than {@code asker} owns. */
  private static List<String> othersNames(TestNode asker, String prefix, int count) {
    List<String> names = new ArrayList<>();
    for (int i = 0; names.size() < count && i < 100 * count; i++) {
      String name = prefix + i + ".near.example.test.";
      if (asker.server.ownerOf(CacheKey.of(name, Type.A, DClass.IN, 0)) != null) {
        auth.addA(name);
        names.add(name);
      }
    }
    assertEquals("names another node owns", count, names.size());
    return names;
  }

  /**
   * A name another node owns is answered again from this node's near copy, looked up before its
   * own answer cache: the repeat is a near-cache hit and no miss in the answer cache, on every
   * node, so a node's answer-cache misses are the names it had to look up.
   */
  @Test
  public void aRepeatOfAnotherNodesNameIsANearHitAndNoAnswerCacheMiss() throws Exception {
    String name = "near1.example.test.";
    auth.addA(name);
    // Through nodes 0 and 1 only: another test may have stopped node 2. One of the two, or node
    // 2, owns the name; a node that does not keeps a copy after its first query.
    for (int k = 0; k < 2; k++) {
      assertEquals(Rcode.NOERROR, ask(nodes.get(k), 9700 + k, name).getRcode());
    }
    Metrics metrics = nodes.get(0).metrics();
    Map<String, Double> before = metrics.settled();
    for (int k = 0; k < 2; k++) {
      assertEquals(Rcode.NOERROR, ask(nodes.get(k), 9710 + k, name).getRcode());
    }
    Map<String, Double> after = metrics.settled();
    double nearHits = 0;
    double answerHits = 0;
    double answerMisses = 0;
    for (int k = 0; k < 2; k++) {
      String node = "node=\"" + labels.get(k) + "\"";
      nearHits += Metrics.value(after, "shoal_cache_hits_total", node, "cache=\"near\"")
          - Metrics.value(before, "shoal_cache_hits_total", node, "cache=\"near\"");
      answerHits += Metrics.value(after, "shoal_cache_hits_total", node, "cache=\"clustered\"")
          - Metrics.value(before, "shoal_cache_hits_total", node, "cache=\"clustered\"");
      answerMisses += Metrics.value(after, "shoal_cache_misses_total", node, "cache=\"clustered\"")
          - Metrics.value(before, "shoal_cache_misses_total", node, "cache=\"clustered\"");
    }
    assertTrue("a node that does not own the name answered its repeat from its copy: " + nearHits, nearHits >= 1);
    assertEquals("every repeat was a hit, in the near cache or the owner's", 2.0, nearHits + answerHits, 0.0);
    assertEquals("no repeat missed in an answer cache", 0.0, answerMisses, 0.0);
  }
}
