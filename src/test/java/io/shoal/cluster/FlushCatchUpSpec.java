package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Ready means consistent: a node that was down while names were flushed through another node
 * answers none of them from its pre-flush copies (kept on its LMDB volume), from its very first
 * answer on, and its readiness probe says 200 only once those flushes are applied.
 */
public class FlushCatchUpSpec extends JUnitSuite {
  private static final int NODES = 3;
  private static final int NAMES = 30;
  private static final String OLD = "192.0.2.1";
  private static final String EDITED = "192.0.2.2";

  private static String name(int i) {
    return "u" + i + ".example.test.";
  }

  private static String address(Message m) {
    return m.getSection(Section.ANSWER).isEmpty() ? "" : ((ARecord) m.getSection(Section.ANSWER).get(0)).getAddress()
        .getHostAddress();
  }

  /** One UDP exchange; null when no reply came within {@code timeoutMs} (the node is not bound yet). */
  private static Message exchange(InetSocketAddress at, Message query, int timeoutMs) throws IOException {
    byte[] reply = DnsClient.udp(at, query.toWire(), timeoutMs);
    return reply == null ? null : new Message(reply);
  }

  @Test
  public void aReturningNodeServesNoFlushedNameAndIsReadyOnlyOnceCaughtUp() throws Exception {
    List<TestNode> nodes = new ArrayList<>();
    List<Thread> probes = new ArrayList<>();
    AtomicBoolean probing = new AtomicBoolean(true);
    try (TestAuthServer auth = new TestAuthServer()) {
      for (int i = 0; i < NAMES; i++) {
        auth.add(new ARecord(TestAuthServer.name(name(i)), DClass.IN, 300, InetAddress.getByName(OLD)));
      }
      TestCluster cluster = TestCluster.of(NODES);
      // Node 2 comes back on the same DNS port, so it can be asked from before it binds.
      int dnsPort = TestNode.freePort();
      List<String> conf = new ArrayList<>();
      for (int i = 0; i < NODES; i++) {
        Path lmdb = Files.createTempDirectory("shoal-catchup").resolve("answers");
        conf.add(String.join("\n",
            cluster.node(i, "catchup-" + i),
            i == 2 ? "shoal.listen.udp = \"127.0.0.1:" + dnsPort + "\"" : "",
            i == 2 ? "shoal.listen.tcp = \"127.0.0.1:" + dnsPort + "\"" : "",
            "shoal.cluster.owner_timeout = 5s",
            // Ready means joined and caught up: no falling back to "ready alone" in this test.
            "shoal.cluster.join_wait = 120s",
            "shoal.caches.answers.backend = lmdb",
            "shoal.caches.answers.lmdb.path = \"" + lmdb + "\"",
            "shoal.caches.answers.lmdb.shard_count = 2",
            "shoal.caches.answers.lmdb.map_size = 4MiB",
            "shoal.caches.answers.lmdb.commit_window = 0ms"));
        nodes.add(TestNode.start(auth.hostPort(), conf.get(i)));
      }
      TestCluster.awaitRing(nodes, NODES, 120);
      for (int i = 0; i < NAMES; i++) {
        for (int k = 0; k < NODES; k++) {
          Message m = exchange(nodes.get(k).udp(), DnsClient.query(100 * i + k, name(i), Type.A, null), 30_000);
          assertEquals(Rcode.NOERROR, m.getRcode());
          assertEquals(OLD, address(m));
        }
      }
      // Node 2 stops with the names it owns committed to its LMDB volume: the pre-flush answers.
      double held = nodes.get(2).metrics().await(v -> v > 0, "shoal_cache_entries", "node=\"catchup-2\"",
          "cache=\"answers\"");
      assertTrue("node 2 has answers on its volume before it goes down", held > 0);
      nodes.get(2).close();
      TestCluster.awaitRing(nodes.subList(0, 2), 2, 120);

      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
      for (int i = 0; i < NAMES; i++) {
        auth.replace(new ARecord(TestAuthServer.name(name(i)), DClass.IN, 300, InetAddress.getByName(EDITED)));
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + nodes.get(0).server.adminAddress().getPort() + "/cache/flush?name=" + name(i)))
            .header(io.shoal.admin.AdminToken.HEADER, nodes.get(0).adminToken())
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(r.body(), 200, r.statusCode());
        assertTrue(r.body(), r.body().contains("\"recorded_on_every_node\":true"));
      }

      // From before node 2 starts: its readiness, and its answers to every flushed name.
      InetSocketAddress dns = new InetSocketAddress("127.0.0.1", dnsPort);
      List<Integer> readiness = Collections.synchronizedList(new ArrayList<>());
      List<String> answers = Collections.synchronizedList(new ArrayList<>());
      List<String> heldWhenReady = Collections.synchronizedList(new ArrayList<>());
      URI ready = URI.create("http://127.0.0.1:" + cluster.managementPort(2) + "/ready");
      long deadline = System.nanoTime() + Duration.ofSeconds(240).toNanos();
      probes.add(new Thread(() -> {
        boolean sawReady = false;
        for (int n = 0; n < 100_000 && probing.get() && System.nanoTime() < deadline; n++) {
          int status;
          try {
            status = http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
          } catch (IOException e) {
            status = -1; // not listening yet
          } catch (InterruptedException e) {
            return;
          }
          readiness.add(status);
          if (status == 200 && !sawReady) {
            sawReady = true;
            // Ready: what the node's caches hold now must be what the cluster holds. RD=0 answers
            // from the caches only (REFUSED when they hold nothing), so a pre-flush copy shows.
            for (int i = 0; i < NAMES; i++) {
              try {
                Message q = DnsClient.query(20_000 + i, name(i), Type.A, null);
                q.getHeader().unsetFlag(Flags.RD);
                Message m = exchange(dns, q, 30_000);
                if (m != null && m.getRcode() == Rcode.NOERROR && !EDITED.equals(address(m))) {
                  heldWhenReady.add(name(i) + " " + address(m));
                }
              } catch (IOException e) {
                heldWhenReady.add(name(i) + " " + e);
              }
            }
          }
          try {
            Thread.sleep(20);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "ready-probe"));
      probes.add(new Thread(() -> {
        for (int n = 0; n < 100_000 && probing.get() && System.nanoTime() < deadline; n++) {
          int i = n % NAMES;
          try {
            Message m = exchange(dns, DnsClient.query(30_000 + n % 30_000, name(i), Type.A, null), 300);
            if (m != null) {
              answers.add(name(i) + " " + Rcode.string(m.getRcode()) + " " + address(m) + " ready-probes-so-far="
                  + readiness.stream().filter(s -> s == 200).count());
            }
          } catch (IOException e) {
            // not bound yet
          }
        }
      }, "dns-probe"));
      probes.forEach(Thread::start);

      TestNode back = TestNode.start(auth.hostPort(), conf.get(2));
      nodes.set(2, back);
      assertTrue("the returning node reports ready", Await.until(Duration.ofSeconds(120), back.server::ready));
      TestCluster.awaitRing(nodes, NODES, 120);
      // The probes go on until each has seen the node ready (bounded by their own deadline).
      Await.until(Duration.ofSeconds(60), () -> readiness.contains(200) && answers.size() > NAMES);
      probing.set(false);
      for (Thread t : probes) {
        t.join(Duration.ofSeconds(60).toMillis());
      }

      List<String> old = answers.stream().filter(a -> !a.contains(" " + EDITED + " ")).toList();
      assertTrue("node 2 answered the flushed names: " + answers.size(), answers.size() > NAMES);
      assertEquals("no flushed name answered from node 2's pre-flush copy, from its first answer on "
              + "(of " + answers.size() + " answers, " + old.size() + " were; the first of them)",
          List.of(), old.stream().limit(NAMES).toList());
      int firstReady = readiness.indexOf(200);
      assertTrue("the readiness probe saw the node ready: " + readiness, firstReady >= 0);
      assertEquals("once ready, ready for good (no 200 before the flushes were applied): " + readiness,
          List.of(), readiness.subList(firstReady, readiness.size()).stream().filter(s -> s != 200).toList());
      assertEquals("when /ready first said 200, node 2's caches held no pre-flush answer", List.of(), heldWhenReady);
      for (int i = 0; i < NAMES; i++) {
        Message m = exchange(back.udp(), DnsClient.query(5000 + i, name(i), Type.A, null), 30_000);
        assertEquals(Rcode.NOERROR, m.getRcode());
        assertEquals(name(i) + " is answered as edited", EDITED, address(m));
      }
    } finally {
      probing.set(false);
      for (Thread t : probes) {
        t.join(Duration.ofSeconds(60).toMillis());
      }
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
