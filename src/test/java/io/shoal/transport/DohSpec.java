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
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** DNS over HTTPS as a browser or stub resolver meets it: RFC 8484 GET and POST, status codes, caching. */
public class DohSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestCertificates ca;
  private static TestNode node;
  private static HttpClient h2;
  private static HttpClient h1;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("ok.example.test.");
    auth.addA("post.example.test.");
    auth.addA("aged.example.test.");
    ca = TestCertificates.newCa();
    Path[] pair = ca.issue("doh-server");
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.https = \"127.0.0.1:0\"",
        "shoal.tls.certificate = \"" + pair[0] + "\"",
        "shoal.tls.private_key = \"" + pair[1] + "\""));
    h2 = HttpClient.newBuilder().sslContext(ca.clientContext()).version(HttpClient.Version.HTTP_2)
        .connectTimeout(Duration.ofSeconds(5)).build();
    h1 = HttpClient.newBuilder().sslContext(ca.clientContext()).version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private static URI uri(String pathAndQuery) {
    return URI.create("https://127.0.0.1:" + node.server.httpsAddress().getPort() + pathAndQuery);
  }

  /** RFC 8484 section 4.1: ID 0 makes the GET URL cache-friendly. */
  private static byte[] query(String name) {
    return DnsClient.query(0, name, Type.A, null).toWire();
  }

  private static HttpResponse<byte[]> get(HttpClient client, String dns) throws Exception {
    return client.send(HttpRequest.newBuilder(uri("/dns-query?dns=" + dns)).timeout(Duration.ofSeconds(10))
        .header("Accept", "application/dns-message").build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static HttpResponse<byte[]> post(HttpClient client, String type, byte[] body) throws Exception {
    return client.send(HttpRequest.newBuilder(uri("/dns-query")).timeout(Duration.ofSeconds(10))
        .header("Content-Type", type).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  private static String base64url(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  private static void assertAnswer(HttpResponse<byte[]> r) throws Exception {
    assertEquals(new String(r.body(), java.nio.charset.StandardCharsets.ISO_8859_1), 200, r.statusCode());
    assertEquals("application/dns-message", r.headers().firstValue("Content-Type").orElse(""));
    Message reply = new Message(r.body());
    assertEquals(0, reply.getHeader().getID());
    assertEquals(Rcode.NOERROR, reply.getRcode());
    assertEquals("192.0.2.7", ((ARecord) reply.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
  }

  @Test
  public void getOverHttp2IsAnsweredAndCountedAsDoh() throws Exception {
    Metrics metrics = node.metrics();
    double before = Metrics.value(metrics.settled(), "shoal_queries_total", "transport=\"doh\"");
    HttpResponse<byte[]> r = get(h2, base64url(query("ok.example.test.")));
    assertEquals(HttpClient.Version.HTTP_2, r.version());
    assertAnswer(r);
    assertEquals(before + 1, metrics.await(v -> v >= before + 1, "shoal_queries_total", "transport=\"doh\""), 0.0);
  }

  @Test
  public void postOverHttp1AndHttp2IsAnswered() throws Exception {
    HttpResponse<byte[]> r1 = post(h1, "application/dns-message", query("post.example.test."));
    assertEquals(HttpClient.Version.HTTP_1_1, r1.version());
    assertAnswer(r1);
    assertAnswer(post(h2, "application/dns-message", query("post.example.test.")));
  }

  @Test
  public void cacheControlIsTheSmallestRemainingTtl() throws Exception {
    HttpResponse<byte[]> first = get(h2, base64url(query("aged.example.test.")));
    assertAnswer(first);
    assertEquals("max-age=60", first.headers().firstValue("Cache-Control").orElse(""));
    node.advanceSeconds(25);
    HttpResponse<byte[]> later = get(h1, base64url(query("aged.example.test.")));
    assertAnswer(later);
    assertEquals("max-age=35", later.headers().firstValue("Cache-Control").orElse(""));
  }

  @Test
  public void malformedRequestsGetTheirStatusCodes() throws Exception {
    assertEquals(400, get(h2, "not*base64!").statusCode());
    assertEquals(400, get(h2, base64url(new byte[] {1, 2, 3})).statusCode());
    assertEquals(400, h2.send(HttpRequest.newBuilder(uri("/dns-query")).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode());
    assertEquals(415, post(h2, "text/plain", query("ok.example.test.")).statusCode());
    assertEquals(413, post(h1, "application/dns-message", new byte[70_000]).statusCode());
    assertEquals(413, post(h2, "application/dns-message", new byte[70_000]).statusCode());
    assertEquals(404, h2.send(HttpRequest.newBuilder(uri("/resolve")).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode());
    // The connection still serves after all that.
    assertAnswer(get(h2, base64url(query("ok.example.test."))));
  }

  @Test
  public void aBodyThatIsNotDnsIs400AndAnotherOpcodeIsAnsweredInDns() throws Exception {
    // Twelve readable bytes: a header by length, but its counts promise sections that are not there.
    HttpResponse<byte[]> text = post(h2, "application/dns-message",
        "hello world!".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    assertEquals(new String(text.body(), java.nio.charset.StandardCharsets.ISO_8859_1), 400, text.statusCode());
    assertEquals(400, get(h2, base64url("hello world!".getBytes(java.nio.charset.StandardCharsets.US_ASCII))).statusCode());
    // A query with bytes after its question is not one DNS message either.
    byte[] q = query("ok.example.test.");
    byte[] trailing = java.util.Arrays.copyOf(q, q.length + 3);
    assertEquals(400, post(h2, "application/dns-message", trailing).statusCode());
    // A well-formed query with an opcode shoal does not serve (STATUS) is a DNS matter: NOTIMP.
    Message status = Message.newQuery(Record.newRecord(Name.fromString("ok.example.test."), Type.A, DClass.IN));
    status.getHeader().setID(0);
    status.getHeader().setOpcode(org.xbill.DNS.Opcode.STATUS);
    HttpResponse<byte[]> notimp = post(h2, "application/dns-message", status.toWire());
    assertEquals(200, notimp.statusCode());
    assertEquals(Rcode.NOTIMP, new Message(notimp.body()).getRcode());
  }

  @Test
  public void failedHandshakesAreCountedAndNotLoggedOneByOne() throws Exception {
    Metrics metrics = node.metrics();
    String handshakes = "reason=\"tls_handshake\"";
    double before = metrics.value("shoal_dropped_total", handshakes);
    InetSocketAddress doh = node.server.httpsAddress();
    try (LogRecorder log = LogRecorder.start()) {
      for (int i = 0; i < 3; i++) {
        // A client that does not trust the certificate (the JVM's default trust store) says so and leaves.
        try (SSLSocket s = (SSLSocket) SSLContext.getDefault().getSocketFactory().createSocket()) {
          s.connect(doh, 2000);
          s.setSoTimeout(5000);
          s.startHandshake();
          org.junit.Assert.fail("the handshake should fail for a client that does not trust the test CA");
        } catch (SSLHandshakeException expected) {
          // refused by the client
        }
        // Plain HTTP on the HTTPS port: no reply in clear text.
        try (Socket s = new Socket()) {
          s.connect(doh, 2000);
          s.setSoTimeout(5000);
          s.getOutputStream().write("GET /dns-query HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          String back = new String(s.getInputStream().readNBytes(12), StandardCharsets.ISO_8859_1);
          assertFalse(back, back.startsWith("HTTP/1.1"));
        } catch (SocketException reset) {
          // closed with a reset: no reply either
        }
      }
      assertEquals(before + 6, metrics.await(v -> v >= before + 6, "shoal_dropped_total", handshakes), 0.0);
      // A client that connects and leaves without a word (a TCP health check) did not try a handshake.
      new Socket(doh.getAddress(), doh.getPort()).close();
      // Nor did one that got its answer and then reset the connection, the rudest way to leave.
      try (SSLSocket s = (SSLSocket) ca.clientContext().getSocketFactory().createSocket()) {
        s.connect(doh, 2000);
        s.setSoTimeout(5000);
        s.getOutputStream().write(("GET /dns-query?dns=" + base64url(query("ok.example.test.")) + " HTTP/1.1\r\n"
            + "Host: localhost\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        String status = new String(s.getInputStream().readNBytes(12), StandardCharsets.ISO_8859_1);
        assertEquals("HTTP/1.1 200", status);
        s.setSoLinger(true, 0);
      }
      assertEquals(before + 6, Metrics.value(metrics.settled(), "shoal_dropped_total", handshakes), 0.0);
      assertEquals(List.of(), log.mentioning("handshake"));
      assertEquals(List.of(), log.mentioning("SSL"));
    }
  }

  @Test
  public void plainHttpIsServedOnlyWhenAskedFor() throws Exception {
    try (TestNode plain = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.https = \"127.0.0.1:0\"",
        "shoal.listen.https_plaintext = on"))) {
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
              + plain.server.httpsAddress().getPort() + "/dns-query?dns=" + base64url(query("ok.example.test."))))
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofByteArray());
      assertAnswer(r);
    }
  }

  @Test
  public void kdigGetsAnAnswerOverHttps() throws Exception {
    if (!DotSpec.onPath("kdig")) {
      System.err.println("kdig not installed: skipping the kdig +https check");
      return;
    }
    for (String method : new String[] {"+https", "+https-get"}) {
      String out = DotSpec.run("kdig", "@127.0.0.1", "-p", String.valueOf(node.server.httpsAddress().getPort()), method,
          "+tls-ca=" + ca.caCertificate, "+tls-hostname=localhost", "+timeout=5", "+retry=0", "ok.example.test.", "A");
      assertTrue(out, out.contains("status: NOERROR"));
      assertTrue(out, out.contains("192.0.2.7"));
      assertTrue(out, out.contains("HTTP session (HTTP/2-" + (method.endsWith("get") ? "GET" : "POST")));
    }
  }
}
