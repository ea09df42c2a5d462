package io.shoal.transport;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.LogRecorder;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCertificates;
import io.shoal.testing.TestNode;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** DNS over TLS as a client meets it: an answer over TLS 1.2 and 1.3, and failed handshakes counted. */
public class DotSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestCertificates ca;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("ok.example.test.");
    ca = TestCertificates.newCa();
    Path[] pair = ca.issue("dot-server");
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.tls = \"127.0.0.1:0\"",
        "shoal.tls.certificate = \"" + pair[0] + "\"",
        "shoal.tls.private_key = \"" + pair[1] + "\""));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private static InetSocketAddress dot() {
    return node.server.tlsAddress();
  }

  /** A handshake with the node trusting the test CA, offering ALPN "dot", over {@code protocol}. */
  static SSLSocket connect(SSLContext context, InetSocketAddress server, String protocol) throws IOException {
    SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket();
    s.connect(server, 2000);
    s.setSoTimeout(5000);
    SSLParameters p = s.getSSLParameters();
    p.setProtocols(new String[] {protocol});
    p.setApplicationProtocols(new String[] {"dot"});
    s.setSSLParameters(p);
    s.startHandshake();
    return s;
  }

  /** Sends one framed query on {@code s} and reads one framed reply. */
  static Message ask(Socket s, int id, String name) throws IOException {
    return new Message(DnsClient.exchange(s, DnsClient.query(id & 0xFFFF, name, Type.A, null).toWire()));
  }

  @Test
  public void aQueryOverTls13IsAnsweredWithAlpnDotAndCountedAsDot() throws Exception {
    Metrics metrics = node.metrics();
    double before = Metrics.value(metrics.settled(), "shoal_queries_total", "transport=\"dot\"");
    try (SSLSocket s = connect(ca.clientContext(), dot(), "TLSv1.3")) {
      assertEquals("dot", s.getApplicationProtocol());
      assertEquals("CN=dot-server", TestCertificates.subject((java.security.cert.X509Certificate) s.getSession()
          .getPeerCertificates()[0]));
      Message reply = ask(s, 4242, "ok.example.test.");
      assertEquals(4242, reply.getHeader().getID());
      assertEquals(Rcode.NOERROR, reply.getRcode());
      assertEquals("192.0.2.7", ((ARecord) reply.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
      // Pipelined: a second query on the same connection.
      assertEquals(Rcode.NOERROR, ask(s, 4243, "ok.example.test.").getRcode());
    }
    assertEquals(before + 2, metrics.await(v -> v >= before + 2, "shoal_queries_total", "transport=\"dot\""), 0.0);
  }

  @Test
  public void aPaddedQueryGetsAReplyPaddedTo468Bytes() throws Exception {
    org.xbill.DNS.Message q = DnsClient.query(555, "ok.example.test.", Type.A, null);
    q.addRecord(new org.xbill.DNS.OPTRecord(1232, 0, 0, 0,
        List.of(new org.xbill.DNS.GenericEDNSOption(12, new byte[0]))), Section.ADDITIONAL);
    try (SSLSocket s = connect(ca.clientContext(), dot(), "TLSv1.3")) {
      byte[] reply = DnsClient.exchange(s, q.toWire());
      assertEquals(468, reply.length);
      Message parsed = new Message(reply);
      assertEquals(Rcode.NOERROR, parsed.getRcode());
      assertEquals(1, parsed.getOPT().getOptions(12).size());
      // Unpadded queries stay unpadded (RFC 8467: pad only when asked).
      assertTrue(ask(s, 556, "ok.example.test.").toWire().length < 468);
    }
  }

  @Test
  public void aQueryOverTls12IsAnswered() throws Exception {
    try (SSLSocket s = connect(ca.clientContext(), dot(), "TLSv1.2")) {
      assertEquals("TLSv1.2", s.getSession().getProtocol());
      assertEquals(Rcode.NOERROR, ask(s, 7, "ok.example.test.").getRcode());
    }
  }

  @Test
  public void failedHandshakesAreCountedNotAnsweredNorLogged() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"tls_handshake\"");
    try (LogRecorder log = LogRecorder.start()) {
      failTwoHandshakes(metrics, before);
      assertEquals(List.of(), log.mentioning("handshake"));
      assertEquals(List.of(), log.mentioning("SSL"));
    }
  }

  private static void failTwoHandshakes(Metrics metrics, double before) throws Exception {
    // A client that does not trust the certificate (the JVM's default trust store).
    try (SSLSocket s = connect(SSLContext.getDefault(), dot(), "TLSv1.3")) {
      org.junit.Assert.fail("the handshake should fail for a client that does not trust the test CA");
    } catch (SSLHandshakeException expected) {
      // the client refuses the certificate and tells the server so
    }
    metrics.await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"tls_handshake\"");
    // Plain DNS on the TLS port: closed without an answer.
    try (Socket s = new Socket()) {
      s.connect(dot(), 2000);
      s.setSoTimeout(5000);
      byte[] q = DnsClient.query(1, "ok.example.test.", Type.A, null).toWire();
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeShort(q.length);
      out.write(q);
      out.flush();
      byte[] back = s.getInputStream().readNBytes(2 + q.length);
      assertFalse("no DNS answer in clear text", back.length >= 2 + 12 && back[2] == q[0] && back[3] == q[1]);
    }
    double after = metrics.await(v -> v >= before + 2, "shoal_dropped_total", "reason=\"tls_handshake\"");
    assertEquals(before + 2, after, 0.0);
  }

  @Test
  public void aClientThatGoesAwayAfterItsAnswerIsNotAFailedHandshake() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.settled().getOrDefault("shoal_dropped_total{reason=\"tls_handshake\"}", 0.0);
    double answered = metrics.value("shoal_queries_total", "transport=\"dot\"");
    try (SSLSocket s = connect(ca.clientContext(), dot(), "TLSv1.3")) {
      assertEquals(Rcode.NOERROR, ask(s, 99, "ok.example.test.").getRcode());
      // Reset rather than close_notify: the rudest way to leave.
      s.setSoLinger(true, 0);
    }
    metrics.await(v -> v >= answered + 1, "shoal_queries_total", "transport=\"dot\"");
    assertEquals(before, Metrics.value(metrics.settled(), "shoal_dropped_total", "reason=\"tls_handshake\""), 0.0);
  }

  @Test
  public void aCertificateFileThatIsNotPemStopsTheStartWithExit2NamingTheKey() throws Exception {
    Path junk = java.nio.file.Files.writeString(ca.dir.resolve("junk.pem"), "not a certificate\n");
    Path conf = java.nio.file.Files.writeString(ca.dir.resolve("junk.conf"), String.join("\n",
        "shoal.listen { udp = \"127.0.0.1:0\", tcp = \"127.0.0.1:0\", tls = \"127.0.0.1:0\" }",
        "shoal.upstreams.default.servers = [\"" + auth.hostPort() + "\"]",
        "shoal.metrics.enabled = off",
        "shoal.tls.certificate = \"" + junk + "\"",
        "shoal.tls.private_key = \"" + ca.dir.resolve("dot-server.key") + "\""));
    try (io.shoal.testing.ShoalProcess p = io.shoal.testing.ShoalProcess.launch("serve", "--config", conf.toString())) {
      assertEquals(2, p.exit(60));
      assertTrue(p.output(), p.output().contains("shoal.tls.certificate"));
    }
  }

  @Test
  public void kdigGetsAnAnswerOverTls() throws Exception {
    if (!onPath("kdig")) {
      System.err.println("kdig not installed: skipping the kdig +tls check");
      return;
    }
    String out = run("kdig", "@127.0.0.1", "-p", String.valueOf(dot().getPort()), "+tls-ca=" + ca.caCertificate,
        "+tls-hostname=localhost", "+timeout=5", "+retry=0", "ok.example.test.", "A");
    assertTrue(out, out.contains("status: NOERROR"));
    assertTrue(out, out.contains("192.0.2.7"));
    assertTrue(out, out.contains("TLS"));
  }

  static boolean onPath(String command) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (java.nio.file.Files.isExecutable(Path.of(dir, command))) {
        return true;
      }
    }
    return false;
  }

  /** Runs a command, at most 30 s; its output (stdout and stderr). */
  static String run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(List.of(cmd)).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      org.junit.Assert.fail(String.join(" ", cmd) + " did not finish within 30 s");
    }
    return new String(out, StandardCharsets.UTF_8);
  }
}
