package io.shoal.cli;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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

  private static Process launch(Path log, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
        "-Xmx256m", "-Dshoal.admin.port=0", "-cp", System.getProperty("java.class.path"), "io.shoal.Main"));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  private static int exit(Process p, int seconds) throws InterruptedException {
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("shoal did not exit within " + seconds + " s");
    }
    return p.exitValue();
  }

  @Test
  public void badConfigurationNamesTheKeyAndExitsTwoBeforeBinding() throws Exception {
    int port = TestNode.freePort();
    Path conf = Files.createTempFile("shoal-bad", ".conf");
    Files.writeString(conf, String.join("\n",
        "shoal.listen.udp = \"127.0.0.1:" + port + "\"",
        "shoal.listen.tcp = \"127.0.0.1:" + port + "\"",
        "shoal.upstreams.default.servers = [\"127.0.0.1:9\"]",
        "shoal.caches.answers.when_full = lru"));
    Path log = Files.createTempFile("shoal", ".log");
    Process p = launch(log, "serve", "--config", conf.toString());
    assertEquals(2, exit(p, 60));
    String out = Files.readString(log, StandardCharsets.UTF_8);
    assertTrue(out, out.contains("shoal.caches.answers.when_full"));
    assertTrue(out, out.contains("allowed values: evict_one, sample"));
    assertTrue(out, !out.contains("answering on"));
  }

  @Test
  public void missingConfigFileAndUnknownOptionExitTwo() throws Exception {
    Path log = Files.createTempFile("shoal", ".log");
    assertEquals(2, exit(launch(log, "serve", "--config", "/nonexistent/shoal.conf"), 60));
    assertTrue(Files.readString(log).contains("no such file"));
    assertEquals(2, exit(launch(log, "serve", "--bogus"), 60));
    assertTrue(Files.readString(log).contains("Unknown option"));
  }

  @Test
  public void everyCommandHasHelp() throws Exception {
    for (String[] args : new String[][] {{"--help"}, {"serve", "--help"}, {"config", "--help"}}) {
      Path log = Files.createTempFile("shoal", ".log");
      assertEquals(0, exit(launch(log, args), 60));
      String out = Files.readString(log);
      assertTrue(out, out.contains("Usage: shoal"));
      assertTrue(out, out.contains("--help"));
    }
  }

  @Test
  public void portInUseExitsOneWithTheAddress() throws Exception {
    try (DatagramSocket taken = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      String addr = "127.0.0.1:" + taken.getLocalPort();
      Path log = Files.createTempFile("shoal", ".log");
      Process p = launch(log, "serve", "-Dshoal.listen.udp=" + addr, "-Dshoal.listen.tcp=127.0.0.1:0",
          "-Dshoal.upstreams.default.servers.0=127.0.0.1:9", "-Dshoal.metrics.enabled=off");
      assertEquals(1, exit(p, 60));
      String out = Files.readString(log);
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
      int port = TestNode.freePort();
      int metricsPort = TestNode.freePort();
      Path log = Files.createTempFile("shoal", ".log");
      Process p = new ProcessBuilder(
          Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-Dshoal.admin.port=0", "-jar", jar.toString(),
          "serve", "-Dshoal.listen.udp=127.0.0.1:" + port, "-Dshoal.listen.tcp=127.0.0.1:" + port,
          "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(),
          "-Dshoal.metrics.prometheus.port=" + metricsPort)
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      try {
        awaitLog(p, log, "answering on");
        Message m = DnsClient.udp(new InetSocketAddress("127.0.0.1", port),
            DnsClient.query(5, "jar.example.test.", Type.A, null));
        assertEquals(Rcode.NOERROR, m.getRcode());
        String metrics = new String(new java.net.URL("http://127.0.0.1:" + metricsPort + "/metrics")
            .openStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(metrics, metrics.contains("shoal_cache_misses_total"));
      } finally {
        p.destroy();
        assertEquals(0, exit(p, 30));
      }
    }
  }

  private static void awaitLog(Process p, Path log, String text) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.readString(log).contains(text) && System.nanoTime() < deadline && p.isAlive()) {
      Thread.sleep(100);
    }
    assertTrue(Files.readString(log), Files.readString(log).contains(text));
  }

  @Test
  public void cacheFlushThroughARunningNodePrintsWhatItRemoved() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(new ARecord(TestAuthServer.name("flushed.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.7")));
      int port = TestNode.freePort();
      int adminPort = TestNode.freePort();
      Path log = Files.createTempFile("shoal", ".log");
      Process node = launch(log, "serve",
          "-Dshoal.listen.udp=127.0.0.1:" + port, "-Dshoal.listen.tcp=127.0.0.1:" + port,
          "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(), "-Dshoal.admin.port=" + adminPort,
          "-Dshoal.metrics.enabled=off");
      try {
        awaitLog(node, log, "answering on");
        Message m = DnsClient.udp(new InetSocketAddress("127.0.0.1", port),
            DnsClient.query(7, "flushed.example.test.", Type.A, null));
        assertEquals(Rcode.NOERROR, m.getRcode());
        // A separate JVM, as an operator runs it: its output must reach stdout before it exits.
        Path flushLog = Files.createTempFile("shoal-flush", ".log");
        Process flush = launch(flushLog, "cache", "flush", "flushed.example.test", "--admin", "127.0.0.1:" + adminPort);
        assertEquals(Files.readString(flushLog), 0, exit(flush, 60));
        String out = Files.readString(flushLog);
        assertTrue(out, out.contains("\"name\":\"flushed.example.test.\""));
        assertTrue(out, out.contains("\"removed_here\":1"));
      } finally {
        node.destroy();
        exit(node, 30);
      }
    }
  }

  @Test
  public void sigtermFinishesInFlightQueriesAndExitsZero() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(new ARecord(TestAuthServer.name("slow.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.5")));
      auth.delay(1500);
      int port = TestNode.freePort();
      Path log = Files.createTempFile("shoal", ".log");
      Process p = launch(log, "serve",
          "-Dshoal.listen.udp=127.0.0.1:" + port, "-Dshoal.listen.tcp=127.0.0.1:" + port,
          "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(),
          "-Dshoal.metrics.prometheus.port=" + TestNode.freePort());
      InetSocketAddress server = new InetSocketAddress("127.0.0.1", port);
      awaitLog(p, log, "answering on");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);

      CompletableFuture<byte[]> inFlight = CompletableFuture.supplyAsync(() -> {
        try {
          return DnsClient.udp(server, DnsClient.query(99, "slow.example.test.", Type.A, null).toWire(), 10_000);
        } catch (IOException e) {
          throw new IllegalStateException(e);
        }
      });
      while (auth.queries("slow.example.test.", Type.A) == 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      p.destroy(); // SIGTERM
      byte[] reply = inFlight.get(20, TimeUnit.SECONDS);
      assertTrue("the query in flight at SIGTERM is answered", reply != null);
      assertEquals(Rcode.NOERROR, new Message(reply).getRcode());
      assertEquals(Files.readString(log), 0, exit(p, 30));
    }
  }
}
