package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Flushes that stick: a node that is down while names are flushed through another node does not
 * serve its pre-flush copies (kept on its LMDB volume) when it comes back.
 */
public class FlushRecordSpec extends JUnitSuite {
  private static final int NODES = 3;
  private static final int NAMES = 30;

  private static String name(int i) {
    return "f" + i + ".example.test.";
  }

  private static String address(Message m) {
    return ((ARecord) m.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress();
  }

  private static void awaitRing(List<TestNode> which, int size) throws InterruptedException {
    TestCluster.awaitRing(which, size, 120);
  }

  @Test
  public void aFlushIssuedWhileANodeIsDownHoldsWhenItComesBack() throws Exception {
    List<TestNode> nodes = new ArrayList<>();
    try (TestAuthServer auth = new TestAuthServer()) {
      for (int i = 0; i < NAMES; i++) {
        auth.add(new ARecord(TestAuthServer.name(name(i)), DClass.IN, 300, InetAddress.getByName("192.0.2.1")));
      }
      TestCluster cluster = TestCluster.of(NODES);
      List<String> conf = new ArrayList<>();
      for (int i = 0; i < NODES; i++) {
        Path lmdb = Files.createTempDirectory("shoal-flush").resolve("answers");
        conf.add(String.join("\n",
            cluster.node(i, "flush-" + i),
            "shoal.cluster.owner_timeout = 1s",
            // Ready means joined and caught up: no falling back to "ready alone" in this test.
            "shoal.cluster.join_wait = 120s",
            "shoal.caches.answers.backend = lmdb",
            "shoal.caches.answers.lmdb.path = \"" + lmdb + "\"",
            "shoal.caches.answers.lmdb.shard_count = 2",
            "shoal.caches.answers.lmdb.map_size = 4MiB",
            "shoal.caches.answers.lmdb.commit_window = 0ms"));
        nodes.add(TestNode.start(auth.hostPort(), conf.get(i)));
      }
      awaitRing(nodes, NODES);
      // Every node holds every name: as its owner, or as a copy of the owner's answer.
      for (int i = 0; i < NAMES; i++) {
        for (int k = 0; k < NODES; k++) {
          Message m = DnsClient.udp(nodes.get(k).udp(), DnsClient.query(100 * i + k, name(i), Type.A, null));
          assertEquals(Rcode.NOERROR, m.getRcode());
          assertEquals("192.0.2.1", address(m));
        }
      }
      // Node 2 goes down with answers committed to its LMDB volume (write-behind): the pre-flush
      // copies the flush must hold against when it comes back.
      double held = nodes.get(2).metrics().await(v -> v > 0, "shoal_cache_entries", "node=\"flush-2\"",
          "cache=\"answers\"");
      assertTrue("node 2 has answers on its volume before it goes down", held > 0);
      nodes.get(2).close();
      awaitRing(nodes.subList(0, 2), 2);

      // The zone is edited and the names flushed through node 0 while node 2 is down.
      HttpClient http = HttpClient.newHttpClient();
      for (int i = 0; i < NAMES; i++) {
        auth.replace(new ARecord(TestAuthServer.name(name(i)), DClass.IN, 300, InetAddress.getByName("192.0.2.2")));
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + nodes.get(0).server.adminAddress().getPort() + "/cache/flush?name=" + name(i)))
            .header(io.shoal.admin.AdminToken.HEADER, nodes.get(0).adminToken())
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(r.body(), 200, r.statusCode());
        assertTrue(r.body(), r.body().contains("\"recorded_on_every_node\":true"));
      }

      TestNode back = TestNode.start(auth.hostPort(), conf.get(2));
      nodes.set(2, back);
      assertTrue("the returning node reports ready", Await.until(Duration.ofSeconds(120), back.server::ready));
      awaitRing(nodes, NODES);
      for (int i = 0; i < NAMES; i++) {
        Message m = DnsClient.udp(back.udp(), DnsClient.query(5000 + i, name(i), Type.A, null));
        assertEquals(Rcode.NOERROR, m.getRcode());
        assertEquals(name(i) + " is answered as edited, not from the pre-flush copy", "192.0.2.2", address(m));
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
