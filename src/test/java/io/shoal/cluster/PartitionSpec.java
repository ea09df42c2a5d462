package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import akka.actor.Address;
import akka.cluster.typed.Cluster;
import akka.remote.RARP$;
import akka.remote.transport.ThrottlerTransportAdapter;
import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.ShoalProcess;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCluster;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;
import scala.concurrent.duration.FiniteDuration;

/**
 * A node cut off from both of its peers, as when they die: the split-brain resolver downs it (it
 * is the minority), it keeps answering DNS on its own throughout, and stays ready (its probes on
 * the management port answer 200) while its membership starts over and joins the others again.
 * Three nodes in one JVM; the cut is Artery's test blackhole.
 */
public class PartitionSpec extends JUnitSuite {
  private static final int NODES = 3;
  private static TestAuthServer auth;
  private static final List<TestNode> nodes = new ArrayList<>();
  private static TestCluster cluster;

  @BeforeClass
  public static void formCluster() throws Exception {
    auth = new TestAuthServer();
    for (int i = 0; i < 300; i++) {
      auth.add(new ARecord(TestAuthServer.name("p" + i + ".example.test."), DClass.IN, 300,
          InetAddress.getByName("192.0.2." + (i % 250 + 1))));
    }
    cluster = TestCluster.of(NODES);
    for (int i = 0; i < NODES; i++) {
      nodes.add(TestNode.start(auth.hostPort(), String.join("\n",
          cluster.node(i, "part-" + i),
          "shoal.cluster.owner_timeout = 300ms",
          // Short enough for a test: the resolver decides 3 s after the partition is seen.
          "akka.cluster.split-brain-resolver.stable-after = 3s",
          "akka.remote.artery.advanced.test-mode = on")));
    }
    awaitRing(nodes, NODES, 120);
    // Every node has also taken in that it is a member and caught up on the cluster's flushes:
    // the ring forms a moment before that, and on a slow host the partition must not come first
    // (a node cut off before it knew itself Up is held out of service until join_wait).
    Await.until(Duration.ofSeconds(60), () -> nodes.stream().allMatch(n -> n.server.ready()));
    for (TestNode n : nodes) {
      assertTrue("every node ready before the partition", n.server.ready());
    }
  }

  @AfterClass
  public static void stop() throws Exception {
    for (TestNode n : nodes) {
      n.close();
    }
    auth.close();
  }

  private static void awaitRing(List<TestNode> which, int size, int seconds) throws InterruptedException {
    TestCluster.awaitRing(which, size, seconds);
  }

  private static Address selfAddress(TestNode n) {
    return Cluster.get(n.server.clusterSystem()).selfMember().address();
  }

  private static void blackhole(TestNode from, TestNode to) throws Exception {
    scala.concurrent.Await.result(((akka.remote.RARP) RARP$.MODULE$.apply(from.server.clusterSystem().classicSystem())).provider().transport()
        .managementCommand(new ThrottlerTransportAdapter.SetThrottle(selfAddress(to),
            ThrottlerTransportAdapter.bothDirection(), ThrottlerTransportAdapter.blackholeThrottleMode())),
        FiniteDuration.create(5, TimeUnit.SECONDS));
  }

  /** GETs /ready and /alive, noting each as "path status" (-1: refused or no answer in 2 s). */
  private static void probe(String management, List<String> seen) {
    for (String path : List.of("/ready", "/alive")) {
      seen.add(path + " " + ShoalProcess.httpStatus(management + path));
    }
  }

  @Test
  public void aNodeCutOffFromItsPeersKeepsAnsweringAndJoinsThemAgain() throws Exception {
    TestNode survivor = nodes.get(0);
    akka.actor.typed.ActorSystem<Void> before = survivor.server.clusterSystem();
    long uidBefore = Cluster.get(before).selfMember().uniqueAddress().longUid();
    blackhole(survivor, nodes.get(1));
    blackhole(survivor, nodes.get(2));

    // Until its membership has been downed and started over, every query is answered, and the
    // probes Kubernetes sends to the management port get 200 all along: the node is serving.
    String management = "http://127.0.0.1:" + cluster.managementPort(0);
    List<Integer> rcodes = new ArrayList<>();
    List<String> probes = new ArrayList<>();
    long start = System.nanoTime();
    int i = 0;
    // Paced, and bounded by count as well as time.
    while (survivor.server.clusterSystem() == before && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(60)
        && i < 5000) {
      Message m = DnsClient.udp(survivor.udp(), DnsClient.query(1000 + i, "p" + (i % 200) + ".example.test.", Type.A, null));
      rcodes.add(m.getRcode());
      probe(management, probes);
      i++;
      Thread.sleep(20);
    }
    assertTrue("the survivor's membership was downed and started over", survivor.server.clusterSystem() != before);
    assertTrue("the old membership is gone", before.whenTerminated().isCompleted());
    assertFalse("the node itself did not stop", survivor.server.whenTerminated().toCompletableFuture().isDone());
    assertTrue("queries were sent: " + rcodes.size(), rcodes.size() > 20);
    assertTrue("every query answered while cut off: " + rcodes, rcodes.stream().allMatch(rc -> rc == Rcode.NOERROR));
    assertTrue("/ready and /alive answered 200 at every poll while DNS was answered (-1: no connection): "
        + probes.stream().filter(p -> !p.endsWith(" 200")).toList(), probes.stream().allMatch(p -> p.endsWith(" 200")));
    assertTrue("ready after starting over", Await.until(Duration.ofSeconds(10), survivor.server::ready));
    double rejoins = survivor.metrics().await(v -> v >= 1, "shoal_cluster_rejoins_total", "node=\"part-0\"");
    assertEquals(1, rejoins, 0.0);

    // The new membership finds the other two through bootstrap and joins their cluster; the
    // probes still answer 200 while it does. Bounded by count as well as time.
    long rejoinStart = System.nanoTime();
    List<String> probesRejoining = new ArrayList<>();
    for (int k = 0; k < 2000 && System.nanoTime() - rejoinStart < TimeUnit.SECONDS.toNanos(90)
        && !nodes.stream().allMatch(n -> n.server.ownerRingSize() == NODES); k++) {
      assertEquals(Rcode.NOERROR, DnsClient.udp(survivor.udp(),
          DnsClient.query(7000 + k, "p" + (k % 200) + ".example.test.", Type.A, null)).getRcode());
      probe(management, probesRejoining);
      Thread.sleep(20);
    }
    assertTrue("probes were sent while rejoining: " + probesRejoining.size(), probesRejoining.size() > 0);
    assertTrue("/ready and /alive answered 200 at every poll while rejoining: "
        + probesRejoining.stream().filter(p -> !p.endsWith(" 200")).toList(),
        probesRejoining.stream().allMatch(p -> p.endsWith(" 200")));
    awaitRing(nodes, NODES, 90);
    assertEquals("the new membership's management routes answer on the same port", 200,
        ShoalProcess.httpStatus(management + "/cluster/members"));
    assertNotEquals(uidBefore, Cluster.get(survivor.server.clusterSystem()).selfMember().uniqueAddress().longUid());
    for (int k = 0; k < 30; k++) {
      assertEquals(Rcode.NOERROR, DnsClient.udp(survivor.udp(),
          DnsClient.query(5000 + k, "p" + (200 + k) + ".example.test.", Type.A, null)).getRcode());
    }
  }
}
