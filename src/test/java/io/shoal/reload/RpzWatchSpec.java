package io.shoal.reload;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * A watched RPZ file saved broken (no $ORIGIN): the reading is refused and reported
 * (shoal_config_last_reload_successful 0, the old policy still applied, a configuration reload
 * refused naming the file and line), and the watcher lives on: the next valid edit is applied
 * (the gauge 1 again, the new policy).
 */
public class RpzWatchSpec extends JUnitSuite {
  private static final String SOA = "@ SOA localhost. admin.localhost. 1 3600 600 86400 60";
  private static final String LAST = "shoal_config_last_reload_successful";
  private static final String REFUSED = "shoal_config_reloads_total{result=\"refused\"}";

  private TestAuthServer upstream;
  private TestNode node;
  private Path rpz;
  private String config;
  private int nextId = 900;

  @Before
  public void start() throws Exception {
    upstream = new TestAuthServer();
    upstream.addA("old.example.test.");
    upstream.addA("new.example.test.");
    rpz = Files.createTempDirectory("shoal-rpz-watch").resolve("watched.rpz");
    Files.writeString(rpz, String.join("\n", "$TTL 300", "$ORIGIN rpz.test.", SOA, "old.example.test CNAME .", ""));
    config = "shoal.policy.rpz_files = [\"" + rpz + "\"]";
    node = TestNode.start(upstream.hostPort(), config);
  }

  @After
  public void stop() throws Exception {
    node.close();
    upstream.close();
  }

  private int rcode(String name) throws Exception {
    nextId = (nextId + 1) & 0xFFFF;
    Message m = DnsClient.udp(node.udp(), DnsClient.query(nextId, name, Type.A, 1232));
    return m.getRcode();
  }

  /** Writes the file with a modification time past the last one, so the watcher sees a change whatever the clock's grain. */
  private void save(String text, long aheadMs) throws Exception {
    Files.writeString(rpz, text);
    Files.setLastModifiedTime(rpz, FileTime.fromMillis(System.currentTimeMillis() + aheadMs));
  }

  @Test
  public void aWatchedRpzSavedWithoutOriginIsRefusedAndTheNextEditApplies() throws Exception {
    Metrics metrics = node.metrics();
    assertEquals(Rcode.NXDOMAIN, rcode("old.example.test."));
    assertEquals(Rcode.NOERROR, rcode("new.example.test."));
    double refusedBefore = metrics.settled().getOrDefault(REFUSED, 0.0);

    save(String.join("\n", "$TTL 300", SOA, "new.example.test CNAME .", ""), 5_000);
    metrics.awaitSeries(v -> v >= refusedBefore + 1, REFUSED);
    assertEquals(0.0, metrics.awaitSeries(v -> v == 0.0, LAST), 0.0);
    assertEquals("the old policy stays", Rcode.NXDOMAIN, rcode("old.example.test."));
    assertEquals(Rcode.NOERROR, rcode("new.example.test."));

    // SIGHUP or `shoal reload` now reads the file again, and says why it is still refused.
    ConfigReload.Outcome outcome = node.reload(config);
    assertFalse(outcome.message(), outcome.applied());
    assertTrue(outcome.message(), outcome.message().contains("shoal.policy.rpz_files: " + rpz + " line 2:"));
    assertTrue(outcome.message(), outcome.message().contains("no $ORIGIN"));
    assertEquals(Rcode.NXDOMAIN, rcode("old.example.test."));

    save(String.join("\n", "$TTL 300", "$ORIGIN rpz.test.", SOA, "new.example.test CNAME .", ""), 10_000);
    assertEquals(1.0, metrics.awaitSeries(v -> v == 1.0, LAST), 0.0);
    assertEquals("the watcher applied the valid edit", Integer.valueOf(Rcode.NXDOMAIN),
        Await.value(Duration.ofSeconds(10), () -> rcode("new.example.test."), r -> r == Rcode.NXDOMAIN));
    assertEquals(Rcode.NOERROR, rcode("old.example.test."));
  }
}
