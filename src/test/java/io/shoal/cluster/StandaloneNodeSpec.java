package io.shoal.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.ShoalProcess;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * A cluster-mode node as a separate process, the way Kubernetes runs it: without a cluster it
 * serves and is ready, and SIGTERM gives it a lameduck before it stops.
 */
public class StandaloneNodeSpec extends JUnitSuite {
  private static TestAuthServer auth;

  @BeforeClass
  public static void upstream() throws Exception {
    auth = new TestAuthServer();
    for (int i = 0; i < 200; i++) {
      auth.add(new ARecord(TestAuthServer.name("s" + i + ".example.test."), DClass.IN, 300,
          InetAddress.getByName("192.0.2." + (i % 250 + 1))));
    }
  }

  @AfterClass
  public static void stopUpstream() {
    auth.close();
  }

  /** A cluster-mode node; {@code contactPoints} are management ports, its own among them. */
  private static ShoalProcess node(String name, int dns, int management, List<Integer> contactPoints, String... extra)
      throws Exception {
    List<String> args = new ArrayList<>(List.of("serve",
        "-Dshoal.listen.udp=127.0.0.1:" + dns, "-Dshoal.listen.tcp=127.0.0.1:" + dns,
        "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(),
        "-Dshoal.metrics.prometheus.port=0",
        "-Dshoal.cluster.enabled=on", "-Dshoal.cluster.node_name=" + name,
        "-Dshoal.cluster.remoting.port=0",
        "-Dshoal.cluster.management.port=" + management,
        "-Dshoal.cluster.discovery.required_contact_points=" + contactPoints.size()));
    for (int i = 0; i < contactPoints.size(); i++) {
      args.add("-Dshoal.cluster.discovery.contact_points." + i + "=127.0.0.1:" + contactPoints.get(i));
    }
    args.addAll(List.of(extra));
    return ShoalProcess.launch(args.toArray(String[]::new));
  }

  private static String ready(int management) {
    return "http://127.0.0.1:" + management + "/ready";
  }

  private static void awaitReady(ShoalProcess p, int management, int seconds) throws Exception {
    Await.until(Duration.ofSeconds(seconds),
        () -> !p.process.isAlive() || ShoalProcess.httpStatus(ready(management)) == 200);
    assertEquals(p.output(), 200, ShoalProcess.httpStatus(ready(management)));
  }

  private static int rcode(int dns, int id, String name) throws Exception {
    byte[] reply = DnsClient.udp(new InetSocketAddress("127.0.0.1", dns),
        DnsClient.query(id, name, Type.A, null).toWire(), 2000);
    return reply == null ? -1 : new Message(reply).getRcode();
  }

  @Test
  public void aNodeWithoutItsClusterIsReadyAndAnswersAndSigtermHasALameduck() throws Exception {
    int dns = TestNode.freePort();
    int management = TestNode.freePort();
    // Two peers that never start: the cluster cannot form (3 contact points required).
    List<Integer> contactPoints = List.of(management, TestNode.freePort(), TestNode.freePort());
    try (ShoalProcess p = node("alone", dns, management, contactPoints,
        "-Dshoal.shutdown.lameduck=3s", "-Dshoal.shutdown.grace=1s")) {
      assertTrue(p.output(), p.awaitOutput("answering on", 60));
      awaitReady(p, management, 30);
      assertEquals(Rcode.NOERROR, rcode(dns, 1, "s0.example.test."));

      p.process.destroy(); // SIGTERM
      long sigterm = System.nanoTime();
      int status = 200;
      while (status == 200 && System.nanoTime() - sigterm < 1_000_000_000L) {
        status = ShoalProcess.httpStatus(ready(management));
      }
      assertTrue("/ready fails within 1 s of SIGTERM, got " + status, status != 200 && status != -1);
      // The lameduck is 3 s: everything sent in its first 2.5 s, cached or not, is answered.
      List<Integer> rcodes = new ArrayList<>();
      int i = 1;
      // Paced, and bounded by count as well as time (200 names are served).
      while (System.nanoTime() - sigterm < 2_500_000_000L && i < 150) {
        rcodes.add(rcode(dns, 100 + i, "s" + i + ".example.test."));
        rcodes.add(rcode(dns, 300 + i, "s0.example.test."));
        i++;
        Thread.sleep(50);
      }
      assertTrue("queries were sent in the lameduck: " + rcodes, rcodes.size() >= 10);
      assertTrue("every query in the lameduck answered: " + rcodes,
          rcodes.stream().allMatch(rc -> rc == Rcode.NOERROR));
      assertEquals(p.output(), 0, p.exit(30));
      assertTrue(p.output(), p.output().contains("lameduck"));
    }
  }

  @Test
  public void kubernetesDiscoveryWithoutAServiceAccountTokenSaysSo() throws Exception {
    java.nio.file.Path missing = java.nio.file.Files.createTempDirectory("no-service-account").resolve("token");
    try {
      TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.cluster.enabled = on",
          "shoal.cluster.remoting.port = 0",
          "shoal.cluster.management.port = 0",
          "shoal.cluster.discovery.method = kubernetes-api",
          "akka.discovery.kubernetes-api.api-token-path = \"" + missing + "\"")).close();
      throw new AssertionError("a node with kubernetes-api discovery and no token started");
    } catch (io.shoal.server.StartupException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("no service account token"));
      assertTrue(e.getMessage(), e.getMessage().contains(missing.toString()));
    }
  }
}
