package io.shoal.admin;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.config.AdminSettings;
import io.shoal.testing.DnsClient;
import io.shoal.testing.ShoalProcess;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * Two nodes started in one working directory on the embedded admin defaults each write a token
 * of their own, and {@code shoal cache flush --admin HOST:PORT} finds the right one for each.
 */
public class TokenPerNodeSpec extends JUnitSuite {
  @Test
  public void twoNodesInOneDirectoryEachAcceptTheirOwnFlush() throws Exception {
    Path dir = Files.createTempDirectory("shoal-two-nodes");
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.addA("flushed.example.test.");
      List<ShoalProcess> nodes = new ArrayList<>();
      List<Integer> dnsPorts = new ArrayList<>();
      List<Integer> adminPorts = new ArrayList<>();
      try {
        for (int i = 0; i < 2; i++) {
          int port = TestNode.freePort();
          int adminPort = TestNode.freePort();
          dnsPorts.add(port);
          adminPorts.add(adminPort);
          // The embedded default token_file (ShoalConfigTest holds it to this constant), relative
          // to the shared working directory; launch() would give each node a file of its own.
          nodes.add(ShoalProcess.launchIn(dir, "serve", "-Dshoal.admin.token_file=" + AdminSettings.DEFAULT_TOKEN_FILE,
              "-Dshoal.listen.udp=127.0.0.1:" + port, "-Dshoal.listen.tcp=127.0.0.1:" + port,
              "-Dshoal.upstreams.default.servers.0=" + auth.hostPort(), "-Dshoal.admin.port=" + adminPort,
              "-Dshoal.metrics.enabled=off"));
        }
        for (int i = 0; i < 2; i++) {
          ShoalProcess node = nodes.get(i);
          assertTrue(node.output(), node.awaitOutput("answering on", 60));
          Message m = DnsClient.udp(new InetSocketAddress("127.0.0.1", dnsPorts.get(i)),
              DnsClient.query(70 + i, "flushed.example.test.", Type.A, null));
          assertEquals(Rcode.NOERROR, m.getRcode());
          assertTrue(Files.exists(dir.resolve("data/admin-" + adminPorts.get(i) + ".token")));
        }
        for (int i = 0; i < 2; i++) {
          ShoalProcess flush = ShoalProcess.launchIn(dir, "cache", "flush", "flushed.example.test",
              "--admin", "127.0.0.1:" + adminPorts.get(i));
          assertEquals(flush.output(), 0, flush.exit(60));
          assertTrue(flush.output(), flush.output().contains("\"removed_here\":1"));
        }
      } finally {
        for (ShoalProcess node : nodes) {
          node.process.destroy();
        }
        for (ShoalProcess node : nodes) {
          node.exit(30);
        }
      }
    }
  }
}
