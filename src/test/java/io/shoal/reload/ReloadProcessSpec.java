package io.shoal.reload;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.ShoalCli;
import io.shoal.testing.ShoalProcess;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Reload as an operator does it, on a separate shoal process serving a --config file: SIGHUP,
 * {@code shoal reload} (its exit status and what it prints), and a watched file that changes.
 */
public class ReloadProcessSpec extends JUnitSuite {
  private static TestAuthServer first;
  private static TestAuthServer second;
  private int nextId = 500;

  @BeforeClass
  public static void upstreams() throws Exception {
    first = new TestAuthServer();
    second = new TestAuthServer();
    first.addA("one.example.test.");
    second.add(new ARecord(TestAuthServer.name("two.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.8")));
  }

  @AfterClass
  public static void close() {
    first.close();
    second.close();
  }

  private int id() {
    nextId = (nextId + 1) & 0xFFFF;
    return nextId;
  }

  private String address(InetSocketAddress node, String name) throws IOException {
    Record[] answer = DnsClient.udp(node, DnsClient.query(id(), name, Type.A, null)).getSectionArray(Section.ANSWER);
    return answer.length == 0 ? "none" : ((ARecord) answer[0]).getAddress().getHostAddress();
  }

  /** The node's config file: the upstream, and whatever else the step adds. */
  private static String config(TestAuthServer upstream, String... more) {
    return String.join("\n",
        "shoal.listen { udp = \"127.0.0.1:0\", tcp = \"127.0.0.1:0\" }",
        "shoal.metrics.enabled = off",
        "shoal.upstreams.default.servers = [\"" + upstream.hostPort() + "\"]",
        String.join("\n", more), "");
  }

  private static void hangUp(Process p) throws Exception {
    Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(p.pid())).inheritIO().start();
    assertTrue(kill.waitFor(10, TimeUnit.SECONDS));
    assertEquals(0, kill.exitValue());
  }

  @Test
  public void sighupAndShoalReloadApplyAChangedFileAndRefuseARestartKey() throws Exception {
    Path dir = Files.createTempDirectory("shoal-reload-process");
    Path file = dir.resolve("shoal.conf");
    Path token = dir.resolve("admin.token");
    int adminPort = TestNode.freePort();
    Files.writeString(file, config(first));
    ShoalProcess node = ShoalProcess.launch("serve", "--config", file.toString(),
        "-Dshoal.admin.port=" + adminPort, "-Dshoal.admin.token_file=" + token);
    try {
      InetSocketAddress udp = node.awaitStarted(60).udp();
      assertEquals("192.0.2.7", address(udp, "one.example.test."));

      // SIGHUP: the new upstream answers the next miss; the cached name is still a hit.
      Files.writeString(file, config(second));
      hangUp(node.process);
      assertTrue(node.output(), node.awaitOutput("configuration reloaded: shoal.upstreams applied (SIGHUP)", 30));
      assertEquals("192.0.2.8", address(udp, "two.example.test."));
      assertEquals("192.0.2.7", address(udp, "one.example.test."));
      assertEquals(1, first.queries("one.example.test.", Type.A));
      assertEquals(0, second.queries("one.example.test.", Type.A));

      // shoal reload with a key that needs a restart: refused, exit status 2, the key named.
      Files.writeString(file, config(second, "shoal.ingress.workers = 3"));
      String[] admin = {"--admin", "127.0.0.1:" + adminPort, "--token-file", token.toString()};
      ShoalCli.Run refused = ShoalCli.run(concat(new String[] {"reload"}, admin));
      assertEquals(refused.err(), 2, refused.status());
      assertTrue(refused.err(), refused.err().contains("shoal.ingress") && refused.err().contains("needs a restart"));

      // shoal reload with local data added: applied, exit status 0, the key named; answered AA=1.
      Files.writeString(file, config(second, "shoal.local.records = [\"reloaded.example.test. A 192.0.2.99\"]"));
      ShoalCli.Run applied = ShoalCli.run(concat(new String[] {"reload"}, admin));
      assertEquals(applied.err(), 0, applied.status());
      assertTrue(applied.out(), applied.out().contains("shoal.local"));
      Message local = DnsClient.udp(udp, DnsClient.query(id(), "reloaded.example.test.", Type.A, null));
      assertTrue(local.getHeader().getFlag(Flags.AA));
      assertEquals("192.0.2.99", ((ARecord) local.getSectionArray(Section.ANSWER)[0]).getAddress().getHostAddress());
      assertEquals(0, second.queries("reloaded.example.test.", Type.A));
    } finally {
      node.process.destroy();
      assertEquals(node.output(), 0, node.exit(30));
    }
  }

  @Test
  public void aWatchedFileIsReloadedWhenItChanges() throws Exception {
    Path file = Files.createTempDirectory("shoal-reload-watch").resolve("shoal.conf");
    Files.writeString(file, config(first, "shoal.reload.watch = on"));
    ShoalProcess node = ShoalProcess.launch("serve", "--config", file.toString());
    try {
      InetSocketAddress udp = node.awaitStarted(60).udp();
      assertEquals("none", address(udp, "watched.example.test."));
      Files.writeString(file, config(first, "shoal.reload.watch = on",
          "shoal.local.records = [\"watched.example.test. A 192.0.2.98\"]"));
      assertTrue(node.output(),
          node.awaitOutput("configuration reloaded: shoal.local applied (the configuration file changed)", 30));
      assertEquals("192.0.2.98", address(udp, "watched.example.test."));
    } finally {
      node.process.destroy();
      assertEquals(node.output(), 0, node.exit(30));
    }
  }

  private static String[] concat(String[] a, String[] b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }
}
