package io.shoal.cli;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.ShoalProcess;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** shoal as an operator runs it: a separate JVM, exit codes, messages, signals. */
public class ProcessSpec extends JUnitSuite {

  @Test
  public void badConfigurationNamesTheKeyAndExitsTwoBeforeBinding() throws Exception {
    int port = TestNode.freePort();
    Path conf = Files.createTempFile("shoal-bad", ".conf");
    Files.writeString(conf, String.join("\n",
        "shoal.listen.udp = \"127.0.0.1:" + port + "\"",
        "shoal.listen.tcp = \"127.0.0.1:" + port + "\"",
        "shoal.upstreams.default.servers = [\"127.0.0.1:9\"]",
        "shoal.caches.answers.when_full = lru"));
    ShoalProcess p = ShoalProcess.launch("serve", "--config", conf.toString());
    assertEquals(2, p.exit(60));
    String out = p.output();
    assertTrue(out, out.contains("shoal.caches.answers.when_full"));
    assertTrue(out, out.contains("allowed values: evict_one, sample"));
    assertTrue(out, !out.contains("answering on"));
  }

  @Test
  public void missingConfigFileAndUnknownOptionExitTwo() throws Exception {
    ShoalProcess missing = ShoalProcess.launch("serve", "--config", "/nonexistent/shoal.conf");
    assertEquals(2, missing.exit(60));
    assertTrue(missing.output().contains("no such file"));
    ShoalProcess bogus = ShoalProcess.launch("serve", "--bogus");
    assertEquals(2, bogus.exit(60));
    assertTrue(bogus.output().contains("Unknown option"));
  }

  @Test
  public void everyCommandHasHelp() throws Exception {
    for (String[] args : new String[][] {{"--help"}, {"serve", "--help"}, {"config", "--help"}}) {
      ShoalProcess p = ShoalProcess.launch(args);
      assertEquals(0, p.exit(60));
      String out = p.output();
      assertTrue(out, out.contains("Usage: shoal"));
      assertTrue(out, out.contains("--help"));
    }
  }

  @Test
  public void lmdbMapsLargerThanTheAddressSpaceExitTwoNamingTheKeys() throws Exception {
    Path data = Files.createTempDirectory("shoal-maps").resolve("answers");
    // 256 x 1 TiB: more than the 128 TiB a 64-bit Linux process can map at all.
    ShoalProcess p = ShoalProcess.launch("serve", "-Dshoal.listen.udp=127.0.0.1:0", "-Dshoal.listen.tcp=127.0.0.1:0",
        "-Dshoal.upstreams.default.servers.0=127.0.0.1:9", "-Dshoal.metrics.enabled=off",
        "-Dshoal.caches.answers.backend=lmdb", "-Dshoal.caches.answers.lmdb.path=" + data,
        "-Dshoal.caches.answers.lmdb.map_size=1TiB", "-Dshoal.caches.answers.lmdb.shard_count=256");
    assertEquals(2, p.exit(60));
    String out = p.output();
    assertTrue(out, out.contains("shoal.caches.answers.lmdb.map_size") && out.contains("shoal.caches.answers.lmdb.shard_count"));
    assertTrue(out, !out.contains("answering on"));
    assertTrue("no shard was opened", !Files.exists(data));
  }

  @Test
  public void portInUseExitsOneWithTheAddress() throws Exception {
    try (DatagramSocket taken = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      String addr = "127.0.0.1:" + taken.getLocalPort();
      ShoalProcess p = ShoalProcess.launch("serve", "-Dshoal.listen.udp=" + addr, "-Dshoal.listen.tcp=127.0.0.1:0",
          "-Dshoal.upstreams.default.servers.0=127.0.0.1:9", "-Dshoal.metrics.enabled=off");
      assertEquals(1, p.exit(60));
      String out = p.output();
      assertTrue(out, out.contains("cannot listen on UDP") && out.contains(String.valueOf(taken.getLocalPort())));
    }
  }

  @Test
  public void theRunnableJarServesOnItsEmbeddedConfig() throws Exception {
    Path jar = Path.of("target", "shoal.jar");
    org.junit.Assume.assumeTrue("target/shoal.jar is built by mvn package; run with mvn verify",
        Files.isRegularFile(jar));
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(new ARecord(TestAuthServer.name("jar.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.6")));
      ShoalProcess p = ShoalProcess.launchJar(jar,
          "serve", "-Dshoal.listen.udp=127.0.0.1:0", "-Dshoal.listen.tcp=127.0.0.1:0",
          "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(), "-Dshoal.metrics.prometheus.port=0");
      try {
        ShoalProcess.Started node = p.awaitStarted(60);
        Message m = DnsClient.udp(node.udp(), DnsClient.query(5, "jar.example.test.", Type.A, null));
        assertEquals(Rcode.NOERROR, m.getRcode());
        // Kamon publishes once per tick: the miss shows up on a later scrape, not the first.
        String metrics = Await.value(Duration.ofSeconds(15), () -> scrape(node.metrics()),
            body -> body.contains("shoal_cache_misses_total"));
        assertTrue(metrics, metrics.contains("shoal_cache_misses_total"));
      } finally {
        p.process.destroy();
        assertEquals(p.output(), 0, p.exit(30));
      }
    }
  }

  private static String scrape(String endpoint) throws IOException {
    return new String(new java.net.URL("http://" + endpoint + "/metrics").openStream().readAllBytes(),
        StandardCharsets.UTF_8);
  }

  @Test
  public void metricsAnswerOnlyOnceTheDnsSocketsServe() throws Exception {
    // Ports from the OS, known before start: the test races the node's start-up on purpose, so it
    // cannot wait for the start-up line that would name ports chosen by the node. Another process
    // may take a port between freePort() and the node's bind; the node then exits saying so, and
    // is started again on new ports (at most three times).
    int port = 0;
    ShoalProcess p = null;
    boolean metricsUp = false;
    for (int attempt = 0; attempt < 3 && !metricsUp; attempt++) {
      if (p != null) {
        p.exit(30);
        assertTrue(p.output(), p.output().contains("Address already in use"));
      }
      port = TestNode.freePort();
      int metricsPort = TestNode.freePort();
      p = ShoalProcess.launch("serve", "-Dshoal.listen.udp=127.0.0.1:" + port,
          "-Dshoal.listen.tcp=127.0.0.1:" + port, "-Dshoal.upstreams.default.servers.0=127.0.0.1:9",
          "-Dshoal.metrics.prometheus.port=" + metricsPort);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!metricsUp && p.process.isAlive() && System.nanoTime() < deadline) {
        try (java.net.Socket s = new java.net.Socket()) {
          s.connect(new InetSocketAddress("127.0.0.1", metricsPort), 200);
          metricsUp = true;
        } catch (IOException notYet) {
          Thread.sleep(10); // the poll interval: this loop is the race the test is about
        }
      }
    }
    try {
      assertTrue(p.output(), metricsUp);
      // The node says it is up: a query sent now must be answered (here with REFUSED for a zone
      // transfer, which needs no upstream), not lost to a socket that is not served yet.
      Message axfr = DnsClient.query(7, "example.test.", Type.AXFR, null);
      byte[] reply = DnsClient.udp(new InetSocketAddress("127.0.0.1", port), axfr.toWire(), 1000);
      assertTrue("a query sent as soon as /metrics answers is answered", reply != null);
      assertEquals(7, new Message(reply).getHeader().getID());
    } finally {
      p.process.destroy();
      // The output says why when it is not 0 (a port taken between freePort() and the bind, say).
      int status = p.exit(30);
      assertEquals(p.output(), 0, status);
    }
  }

  @Test
  public void cacheFlushThroughARunningNodePrintsWhatItRemoved() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(new ARecord(TestAuthServer.name("flushed.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.7")));
      // The admin port is not in the start-up line: the OS gives one before the start.
      int adminPort = TestNode.freePort();
      Path token = Files.createTempDirectory("shoal-admin").resolve("admin.token");
      ShoalProcess node = ShoalProcess.launch("serve",
          "-Dshoal.listen.udp=127.0.0.1:0", "-Dshoal.listen.tcp=127.0.0.1:0",
          "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(), "-Dshoal.admin.port=" + adminPort,
          "-Dshoal.admin.token_file=" + token, "-Dshoal.metrics.enabled=off");
      try {
        Message m = DnsClient.udp(node.awaitStarted(60).udp(),
            DnsClient.query(7, "flushed.example.test.", Type.A, null));
        assertEquals(Rcode.NOERROR, m.getRcode());
        // A separate JVM, as an operator runs it: its output must reach stdout before it exits.
        ShoalProcess flush = ShoalProcess.launch("cache", "flush", "flushed.example.test",
            "--admin", "127.0.0.1:" + adminPort, "--token-file", token.toString());
        assertEquals(flush.output(), 0, flush.exit(60));
        String out = flush.output();
        assertTrue(out, out.contains("\"name\":\"flushed.example.test.\""));
        assertTrue(out, out.contains("\"removed_here\":1"));
      } finally {
        node.process.destroy();
        node.exit(30);
      }
    }
  }

  @Test
  public void sigtermFinishesInFlightQueriesAndExitsZero() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(new ARecord(TestAuthServer.name("slow.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.5")));
      auth.delay(1500);
      ShoalProcess shoal = ShoalProcess.launch("serve",
          "-Dshoal.listen.udp=127.0.0.1:0", "-Dshoal.listen.tcp=127.0.0.1:0",
          "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(),
          "-Dshoal.metrics.enabled=off");
      Process p = shoal.process;
      Path log = shoal.log;
      InetSocketAddress server = shoal.awaitStarted(60).udp();
      assertTrue("no metrics endpoint is claimed when metrics are off: " + shoal.output(),
          shoal.output().contains("metrics off") && !shoal.output().contains("metrics at"));

      CompletableFuture<byte[]> inFlight = CompletableFuture.supplyAsync(() -> {
        try {
          return DnsClient.udp(server, DnsClient.query(99, "slow.example.test.", Type.A, null).toWire(), 10_000);
        } catch (IOException e) {
          throw new IllegalStateException(e);
        }
      });
      Await.until(Duration.ofSeconds(30), () -> auth.queries("slow.example.test.", Type.A) > 0);
      p.destroy(); // SIGTERM
      byte[] reply = inFlight.get(20, TimeUnit.SECONDS);
      assertTrue("the query in flight at SIGTERM is answered", reply != null);
      assertEquals(Rcode.NOERROR, new Message(reply).getRcode());
      assertEquals(Files.readString(log), 0, ShoalProcess.exit(p, 30));
    }
  }
}
