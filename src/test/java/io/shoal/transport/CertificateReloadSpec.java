package io.shoal.transport;

import static org.junit.Assert.assertEquals;

import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCertificates;
import io.shoal.testing.TestNode;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Rcode;

/** A renewed certificate reaches new DoT and DoH connections without a restart; a broken one changes nothing. */
public class CertificateReloadSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestCertificates ca;
  private static TestNode node;
  private static Path certificate;
  private static Path key;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("ok.example.test.");
    ca = TestCertificates.newCa();
    Path[] first = ca.issue("first");
    certificate = ca.dir.resolve("served.pem");
    key = ca.dir.resolve("served.key");
    Files.copy(first[0], certificate);
    Files.copy(first[1], key);
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.tls = \"127.0.0.1:0\"",
        "shoal.listen.https = \"127.0.0.1:0\"",
        "shoal.tls.reload_check = 200ms",
        "shoal.tls.certificate = \"" + certificate + "\"",
        "shoal.tls.private_key = \"" + key + "\""));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  /** The subject a new connection to {@code server} is shown. */
  private static String presented(SSLContext client, InetSocketAddress server) throws Exception {
    try (SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket()) {
      s.connect(server, 2000);
      s.setSoTimeout(5000);
      s.startHandshake();
      return TestCertificates.subject((X509Certificate) s.getSession().getPeerCertificates()[0]);
    }
  }

  /** Polls new handshakes until {@code server} presents {@code subject}, at most 10 s; the last one seen. */
  private static String awaitPresented(SSLContext client, InetSocketAddress server, String subject) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    String seen = presented(client, server);
    for (int i = 0; i < 200 && !seen.equals(subject) && System.nanoTime() < deadline; i++) {
      Thread.sleep(50);
      seen = presented(client, server);
    }
    return seen;
  }

  /** Replaces {@code target} whole, as a deployment tool renames a finished file into place. */
  private static void replace(Path source, Path target) throws Exception {
    Path tmp = Files.createTempFile(target.getParent(), "next", ".tmp");
    Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING);
    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  @Test
  public void aRenewedCertificateReachesNewConnectionsAndABrokenOneIsIgnored() throws Exception {
    SSLContext client = ca.clientContext();
    InetSocketAddress dot = node.server.tlsAddress();
    InetSocketAddress doh = node.server.httpsAddress();
    assertEquals("CN=first", presented(client, dot));
    assertEquals("CN=first", presented(client, doh));
    Metrics metrics = node.metrics();
    double failed = metrics.value("shoal_tls_certificate_reloads_total", "outcome=\"failed\"");
    double loaded = metrics.value("shoal_tls_certificate_reloads_total", "outcome=\"loaded\"");

    // A connection open across the renewal keeps working.
    try (SSLSocket open = DotSpec.connect(client, dot, "TLSv1.3")) {
      // A broken certificate file: reported, and the certificate in use stays.
      Path broken = Files.writeString(ca.dir.resolve("broken.pem"), "-----BEGIN CERTIFICATE-----\nAAAA\n");
      replace(broken, certificate);
      metrics.await(v -> v >= failed + 1, "shoal_tls_certificate_reloads_total", "outcome=\"failed\"");
      assertEquals("CN=first", presented(client, dot));

      // The renewal: key first, then certificate (the pair in between does not match, and is refused).
      Path[] second = ca.issue("second");
      replace(second[1], key);
      replace(second[0], certificate);
      assertEquals("CN=second", awaitPresented(client, dot, "CN=second"));
      assertEquals("CN=second", awaitPresented(client, doh, "CN=second"));
      assertEquals(Rcode.NOERROR, DotSpec.ask(open, 321, "ok.example.test.").getRcode());
    }
    assertEquals(loaded + 1,
        metrics.await(v -> v >= loaded + 1, "shoal_tls_certificate_reloads_total", "outcome=\"loaded\""), 0.0);
    // Each broken state was reported once, not at every check since.
    double failedNow = Metrics.value(metrics.settled(), "shoal_tls_certificate_reloads_total", "outcome=\"failed\"");
    org.junit.Assert.assertTrue("failed reloads " + failedNow, failedNow >= failed + 1 && failedNow <= failed + 2);
  }
}
