package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.study.host.Prerequisites;
import io.shoal.testing.AuthorityTree;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.Assume;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * A cluster-wide flush reaches every node's recursion state, not only the answer caches: two
 * nodes in {@code mode = recursive} over the authority tree each resolve the names they own and
 * keep the zone cuts and records of the walk; a flush of the root through node 0 empties node 1's
 * recursion state as well ({@code shoal_recursion_entries} of node 1 falls to 0).
 */
public class RecursionFlushSpec extends JUnitSuite {
  private static final int NODES = 2;
  private static final String ENTRIES = "shoal_recursion_entries";
  /** Names in several zones, enough that each node owns some (24 names: all on one node, 1 in 8 million). */
  private static final List<String> NAMES = java.util.stream.IntStream.range(0, 24)
      .mapToObj(i -> "n" + i + "." + List.of("sec.test.", "plain.test.", "nsec3.example.", "open.example.").get(i % 4))
      .toList();

  @Test
  public void aFlushThroughOneNodeEmptiesEveryNodesRecursionState() throws Exception {
    for (String tool : List.of("knotd", "knotc", "keymgr")) {
      Assume.assumeTrue("RecursionFlushSpec CANCELED: " + tool + " is not installed (apt-get install -y knot)",
          Prerequisites.find(tool).isPresent());
    }
    Path dir = Files.createTempDirectory("shoal-recursion-flush");
    List<TestNode> nodes = new ArrayList<>();
    try (AuthorityTree tree = AuthorityTree.start(dir.resolve("tree"))) {
      TestCluster cluster = TestCluster.of(NODES);
      for (int i = 0; i < NODES; i++) {
        nodes.add(TestNode.start("127.0.0.1:1", String.join("\n",
            cluster.node(i, "rflush-" + i),
            "shoal.cluster.owner_timeout = 3s",
            "shoal.upstreams.default.mode = recursive",
            "shoal.upstreams.default.root_hints = \"" + tree.rootHints() + "\"",
            "shoal.upstreams.default.query_loopback = on")));
      }
      TestCluster.awaitRing(nodes, NODES, 120);
      int id = 0;
      for (String name : NAMES) {
        for (TestNode n : nodes) {
          Message m = DnsClient.udp(n.udp(), DnsClient.query(++id, name, Type.A, null));
          assertTrue(name + " resolved: " + m, m.getRcode() == Rcode.NOERROR || m.getRcode() == Rcode.NXDOMAIN);
        }
      }
      for (int i = 0; i < NODES; i++) {
        String node = "node=\"rflush-" + i + "\"";
        assertTrue("node " + i + " resolved names it owns and kept zone cuts",
            nodes.get(i).metrics().await(v -> v > 0, ENTRIES, node, "kind=\"zone_cuts\"") > 0);
      }

      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
              + nodes.get(0).server.adminAddress().getPort() + "/cache/flush?name=."))
          .header(io.shoal.admin.AdminToken.HEADER, nodes.get(0).adminToken())
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(r.body(), 200, r.statusCode());

      Metrics other = nodes.get(1).metrics();
      for (String kind : List.of("zone_cuts", "rrsets", "servers")) {
        assertEquals("node 1's " + kind + " after a flush of . through node 0", 0.0,
            other.await(v -> v == 0, ENTRIES, "node=\"rflush-1\"", "kind=\"" + kind + "\""), 0.0);
      }
    } finally {
      for (TestNode n : nodes) {
        try {
          n.close();
        } catch (Exception e) {
          // stopped already
        }
      }
    }
  }
}
