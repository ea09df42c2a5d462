package io.shoal.testing;

import static org.junit.Assert.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Cluster-mode settings for test nodes in one JVM, and waiting for their owner ring. */
public final class TestCluster {
  private final int[] management;

  private TestCluster(int nodes) {
    management = new int[nodes];
    for (int i = 0; i < nodes; i++) {
      management[i] = TestNode.freePort();
    }
  }

  /** Free management ports for {@code nodes} nodes, each node's contact points listing all. */
  public static TestCluster of(int nodes) {
    return new TestCluster(nodes);
  }

  /** The management port (/ready, /alive, bootstrap) given to node {@code i}. */
  public int managementPort(int i) {
    return management[i];
  }

  /** HOCON for node {@code i}: cluster mode, its name and ports, config discovery of every node. */
  public String node(int i, String name) {
    List<String> contactPoints = new ArrayList<>();
    for (int port : management) {
      contactPoints.add("\"127.0.0.1:" + port + "\"");
    }
    return String.join("\n",
        "shoal.cluster.enabled = on",
        "shoal.cluster.node_name = " + name,
        "shoal.cluster.remoting.port = " + TestNode.freePort(),
        "shoal.cluster.management.port = " + management[i],
        "shoal.cluster.discovery.contact_points = [" + String.join(", ", contactPoints) + "]",
        "shoal.cluster.discovery.required_contact_points = " + management.length,
        "shoal.upstreams.default.timeout = 2s",
        "shoal.dnssec.validation = off");
  }

  /**
   * HOCON for a node that joins the cluster these nodes formed: its own management port, and the
   * nodes' management ports as contact points (they answer with their seed nodes, so it joins).
   */
  public String joiner(String name) {
    return node(0, name) + "\nshoal.cluster.management.port = " + TestNode.freePort();
  }

  /**
   * Waits (at most {@code seconds}) until every node's owner ring has {@code size} nodes and every
   * node is ready: a node answers from its caches only once it has caught up on the cluster's
   * flushes, a moment after its ring forms, and a test that counts hits or upstream queries must
   * not begin in that moment.
   */
  public static void awaitRing(List<TestNode> nodes, int size, int seconds) throws InterruptedException {
    Await.until(Duration.ofSeconds(seconds),
        () -> nodes.stream().allMatch(n -> n.server.ownerRingSize() == size && n.server.ready()));
    for (TestNode n : nodes) {
      assertEquals("owner ring of every node", size, n.server.ownerRingSize());
      assertEquals("every node ready (caught up on the cluster's flushes)", true, n.server.ready());
    }
  }
}
