package io.shoal.transport;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCertificates;
import io.shoal.testing.TestNode;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * shoal.tls.provider: by default Conscrypt serves DoT and DoH where its native library loads;
 * {@code jdk} serves them with the JDK's TLS. Either way a client gets its answers over TLS 1.2
 * and 1.3, with ALPN, and the metric says which one served.
 */
public class TlsProviderSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestCertificates ca;
  private static Path[] pair;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("ok.example.test.");
    ca = TestCertificates.newCa();
    pair = ca.issue("tls-server");
  }

  @AfterClass
  public static void stop() throws Exception {
    auth.close();
  }

  private static TestNode node(String providerLine) {
    return TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.tls = \"127.0.0.1:0\"",
        "shoal.listen.https = \"127.0.0.1:0\"",
        "shoal.tls.certificate = \"" + pair[0] + "\"",
        "shoal.tls.private_key = \"" + pair[1] + "\"",
        // each client below asks one query a connection, but closesWithCloseNotify's third
        "shoal.listen.tcp_max_queries = 2",
        providerLine));
  }

  /**
   * A DoT connection the node closes (here at its query cap: the third query is not taken) ends
   * with TLS's close_notify before the FIN, whichever TLS serves it. A bare FIN cannot be told from
   * a cut (RFC 8446, 6.1); strict clients (OpenSSL's, dnsperf) fail the connection on it. Over TLS
   * 1.2 a record's type is in clear: the alert is type 21, answers 23; the client reads the
   * records raw, below its TLS socket, after the handshake.
   */
  private static void closesWithCloseNotify(TestNode node) throws Exception {
    InetSocketAddress at = node.server.tlsAddress();
    try (Socket raw = new Socket()) {
      raw.connect(at, 2000);
      raw.setSoTimeout(5000);
      SSLSocket s = (SSLSocket) ca.clientContext().getSocketFactory().createSocket(raw, "127.0.0.1", at.getPort(), false);
      SSLParameters p = s.getSSLParameters();
      p.setProtocols(new String[] {"TLSv1.2"});
      s.setSSLParameters(p);
      s.startHandshake();
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      for (int id = 41; id <= 43; id++) {
        byte[] q = DnsClient.query(id, "ok.example.test.", Type.A, null).toWire();
        out.writeShort(q.length);
        out.write(q);
      }
      out.flush();
      DataInputStream in = new DataInputStream(raw.getInputStream());
      List<Integer> types = new ArrayList<>();
      for (int type; types.size() < 100 && (type = in.read()) >= 0; ) {
        in.readUnsignedShort();
        in.skipNBytes(in.readUnsignedShort());
        types.add(type);
      }
      assertFalse("no answer came before the close: " + types, types.isEmpty() || types.get(0) != 23);
      assertEquals("the last TLS record before the node's FIN, of " + types, 21, (int) types.get(types.size() - 1));
    }
  }

  /** An answer over DoT (TLS 1.3 with ALPN "dot", and TLS 1.2) and over DoH (HTTP/2, ALPN "h2"). */
  private static void answersOverDotAndDoh(TestNode node) throws Exception {
    try (SSLSocket s = DotSpec.connect(ca.clientContext(), node.server.tlsAddress(), "TLSv1.3")) {
      assertEquals("dot", s.getApplicationProtocol());
      assertEquals(Rcode.NOERROR, DotSpec.ask(s, 31, "ok.example.test.").getRcode());
    }
    try (SSLSocket s = DotSpec.connect(ca.clientContext(), node.server.tlsAddress(), "TLSv1.2")) {
      assertEquals("TLSv1.2", s.getSession().getProtocol());
      assertEquals(Rcode.NOERROR, DotSpec.ask(s, 32, "ok.example.test.").getRcode());
    }
    HttpClient h2 = HttpClient.newBuilder().sslContext(ca.clientContext()).version(HttpClient.Version.HTTP_2)
        .connectTimeout(Duration.ofSeconds(5)).build();
    String dns = Base64.getUrlEncoder().withoutPadding()
        .encodeToString(DnsClient.query(0, "ok.example.test.", Type.A, null).toWire());
    HttpResponse<byte[]> r = h2.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
        + node.server.httpsAddress().getPort() + "/dns-query?dns=" + dns)).timeout(Duration.ofSeconds(10))
        .header("Accept", "application/dns-message").build(), HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(200, r.statusCode());
    assertEquals(HttpClient.Version.HTTP_2, r.version());
    assertEquals(Rcode.NOERROR, new Message(r.body()).getRcode());
  }

  @Test
  public void conscryptServesByDefaultWhereItLoads() throws Exception {
    Assume.assumeTrue("Conscrypt's native library does not load on this host", org.conscrypt.Conscrypt.isAvailable());
    try (TestNode node = node("")) {
      answersOverDotAndDoh(node);
      closesWithCloseNotify(node);
      Metrics metrics = node.metrics();
      assertEquals(1.0, metrics.await(v -> v == 1.0, "shoal_tls_provider", "provider=\"conscrypt\""), 0.0);
      assertEquals(0.0, Metrics.value(metrics.settled(), "shoal_tls_provider", "provider=\"jdk\""), 0.0);
    }
  }

  @Test
  public void anEd25519CertificateIsServedByTheJdkWhereConscryptWouldFailEveryHandshake() throws Exception {
    ca.openssl("req", "-newkey", "ed25519", "-nodes", "-keyout", "ed.key", "-out", "ed.csr", "-subj", "/CN=ed");
    java.nio.file.Files.writeString(ca.dir.resolve("ed.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    ca.openssl("x509", "-req", "-in", "ed.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "ed.pem", "-days", "2", "-extfile", "ed.ext");
    try (TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.tls = \"127.0.0.1:0\"",
        "shoal.tls.certificate = \"" + ca.dir.resolve("ed.pem") + "\"",
        "shoal.tls.private_key = \"" + ca.dir.resolve("ed.key") + "\""))) {
      try (SSLSocket s = DotSpec.connect(ca.clientContext(), node.server.tlsAddress(), "TLSv1.3")) {
        assertEquals("EdDSA", s.getSession().getPeerCertificates()[0].getPublicKey().getAlgorithm());
        assertEquals(Rcode.NOERROR, DotSpec.ask(s, 33, "ok.example.test.").getRcode());
      }
      assertEquals(1.0, node.metrics().await(v -> v == 1.0, "shoal_tls_provider", "provider=\"jdk\""), 0.0);
    }
  }

  @Test
  public void providerJdkServesWithTheJdksTls() throws Exception {
    try (TestNode node = node("shoal.tls.provider = jdk")) {
      answersOverDotAndDoh(node);
      closesWithCloseNotify(node);
      Metrics metrics = node.metrics();
      assertEquals(1.0, metrics.await(v -> v == 1.0, "shoal_tls_provider", "provider=\"jdk\""), 0.0);
      assertEquals(0.0, Metrics.value(metrics.settled(), "shoal_tls_provider", "provider=\"conscrypt\""), 0.0);
    }
  }
}
