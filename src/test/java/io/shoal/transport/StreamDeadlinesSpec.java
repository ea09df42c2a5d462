package io.shoal.transport;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;


import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCertificates;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * The stream listeners' deadlines as an attacker and an honest client meet them, over real
 * sockets: connections that never finish a TLS handshake, or say nothing after it, or fall idle,
 * are closed within their deadlines, counted, and give back their slots, while an honest DoT or
 * DoH client is answered before, during and after.
 */
public class StreamDeadlinesSpec extends JUnitSuite {
  /** The deadlines of this node, short so the suite is quick, long enough for a handshake on one loaded core. */
  private static final int HANDSHAKE_S = 3;
  private static final int FIRST_QUERY_S = 3;
  private static final int IDLE_S = 3;
  /** Silent holders opened at once: the cap, so holders alone fill it. */
  private static final int CAP = 12;
  /** How much later than its deadline a holder may be closed on a loaded host. */
  private static final int SLACK_MS = 8000;

  private static TestAuthServer auth;
  private static TestCertificates ca;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("ok.example.test.");
    ca = TestCertificates.newCa();
    Path[] pair = ca.issue("stream-server");
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.tls = \"127.0.0.1:0\"",
        "shoal.listen.https = \"127.0.0.1:0\"",
        "shoal.listen.tcp_max_connections = " + CAP,
        "shoal.listen.tls_handshake_timeout = " + HANDSHAKE_S + "s",
        "shoal.listen.tcp_first_query_timeout = " + FIRST_QUERY_S + "s",
        "shoal.listen.tcp_idle_timeout = " + IDLE_S + "s",
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

  private static InetSocketAddress doh() {
    return node.server.httpsAddress();
  }

  /** Opens {@code n} TCP connections to {@code server} that send nothing. */
  private static List<Socket> silent(InetSocketAddress server, int n) throws IOException {
    List<Socket> held = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Socket s = new Socket();
      s.connect(server, 2000);
      held.add(s);
    }
    return held;
  }

  /** A finished TLS handshake offering {@code alpn}, then nothing more from the client. */
  private static SSLSocket handshake(InetSocketAddress server, String protocol, String alpn) throws Exception {
    SSLContext context = ca.clientContext();
    SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket();
    s.connect(server, 2000);
    s.setSoTimeout(10_000);
    SSLParameters p = s.getSSLParameters();
    p.setProtocols(new String[] {protocol});
    p.setApplicationProtocols(new String[] {alpn});
    s.setSSLParameters(p);
    s.startHandshake();
    return s;
  }

  /** True when the server closed {@code s} (EOF or reset) before {@code deadlineNanos}. */
  private static boolean closedBy(Socket s, long deadlineNanos) throws IOException {
    InputStream in = s.getInputStream();
    while (true) {
      long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
      if (left <= 0) {
        return false;
      }
      s.setSoTimeout((int) Math.max(1, left));
      try {
        if (in.read() < 0) {
          return true;
        }
      } catch (SocketTimeoutException e) {
        return false;
      } catch (SocketException | javax.net.ssl.SSLException e) {
        return true;
      }
    }
  }

  /** Asserts that the server closes every one of {@code held} within {@code seconds} plus slack. */
  private static void allClosedWithin(List<? extends Socket> held, int seconds, long since) throws IOException {
    long deadline = since + (seconds * 1000L + SLACK_MS) * 1_000_000L;
    for (int i = 0; i < held.size(); i++) {
      assertTrue("held connection " + i + " closed by the server within " + seconds + " s (+slack)",
          closedBy(held.get(i), deadline));
    }
  }

  private static void closeAll(List<? extends Socket> sockets) {
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException ignored) {
        // already gone
      }
    }
  }

  private static void assertDotAnswered(int id) throws Exception {
    try (SSLSocket s = handshake(dot(), "TLSv1.3", "dot")) {
      Message reply = new Message(DnsClient.exchange(s, DnsClient.query(id, "ok.example.test.", Type.A, null).toWire()));
      assertEquals(id, reply.getHeader().getID());
      assertEquals(Rcode.NOERROR, reply.getRcode());
    }
  }

  /**
   * One DoH request on a connection of its own: a client kept across assertions would send on a
   * pooled connection the server may be closing for its idle deadline (3 s here), and the race with
   * the server's GOAWAY fails the request without saying anything about the server.
   */
  private static void assertDohAnswered() throws Exception {
    HttpClient h2 = HttpClient.newBuilder().sslContext(ca.clientContext()).version(HttpClient.Version.HTTP_2)
        .connectTimeout(Duration.ofSeconds(5)).build();
    String dns = Base64.getUrlEncoder().withoutPadding()
        .encodeToString(DnsClient.query(0, "ok.example.test.", Type.A, null).toWire());
    HttpResponse<byte[]> r = h2.send(HttpRequest.newBuilder(
            URI.create("https://127.0.0.1:" + doh().getPort() + "/dns-query?dns=" + dns))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(200, r.statusCode());
    assertEquals(Rcode.NOERROR, new Message(r.body()).getRcode());
  }

  private static double dropped(Metrics metrics, String reason) {
    return metrics.value("shoal_dropped_total", "reason=\"" + reason + "\"");
  }

  /** Waits for shoal_dropped_total{reason} to reach {@code atLeast}, and fails when it does not. */
  private static double awaitDropped(Metrics metrics, String reason, double atLeast) throws Exception {
    double v = metrics.await(x -> x >= atLeast, "shoal_dropped_total", "reason=\"" + reason + "\"");
    assertTrue(reason + " counted: " + v + ", expected at least " + atLeast, v >= atLeast);
    return v;
  }

  private static void awaitNoConnections(Metrics metrics, String gauge) throws Exception {
    assertEquals(gauge + " back to 0", 0.0, metrics.await(v -> v == 0, gauge), 0.0);
  }

  @Test
  public void silentDotConnectionsAreClosedAtTheHandshakeDeadlineWhileHonestClientsAreAnswered() throws Exception {
    Metrics metrics = node.metrics();
    awaitNoConnections(metrics, "shoal_dot_connections");
    double before = dropped(metrics, "tls_handshake_timeout");
    double failed = dropped(metrics, "tls_handshake");
    long start = System.nanoTime();
    List<Socket> held = silent(dot(), CAP);
    try {
      assertEquals(CAP, metrics.await(v -> v >= CAP, "shoal_dot_connections"), 0.0);
      // The cap is full of holders: a newcomer takes the slot of one of them.
      assertDotAnswered(1);
      allClosedWithin(held, HANDSHAKE_S, start);
    } finally {
      closeAll(held);
    }
    awaitDropped(metrics, "tls_handshake_timeout", before + CAP - 1);
    awaitNoConnections(metrics, "shoal_dot_connections");
    // Saying nothing is not a failed handshake.
    assertEquals(failed, dropped(metrics, "tls_handshake"), 0.0);
    assertDotAnswered(2);
  }

  @Test
  public void silentNewcomersOverTheCapTakeTheSlotsOfSilentHoldersNotOfAClientThatAsked() throws Exception {
    Metrics metrics = node.metrics();
    awaitNoConnections(metrics, "shoal_dot_connections");
    double evicted = dropped(metrics, "tcp_idle_evicted");
    try (SSLSocket honest = handshake(dot(), "TLSv1.3", "dot")) {
      int id = 100;
      assertEquals(Rcode.NOERROR, ask(honest, id++).getRcode());
      // The honest connection is now the oldest idle one; the cap fills with silent holders, and
      // half as many again arrive, each over the cap: every one of them must evict a holder.
      List<Socket> held = silent(dot(), CAP + CAP / 2);
      try {
        double target = evicted + CAP / 2 + 1;
        // A holder gives way once it has been open half a second; until then newcomers wait.
        for (int i = 0; i < 200 && dropped(metrics, "tcp_idle_evicted") < target; i++) {
          // asking keeps the honest connection inside its idle deadline while the listener accepts
          assertEquals(Rcode.NOERROR, ask(honest, id++).getRcode());
          Thread.sleep(50);
        }
        assertTrue("newcomers evicted holders", awaitDropped(metrics, "tcp_idle_evicted", target) >= target);
        assertEquals("the client that asked still has its connection", Rcode.NOERROR, ask(honest, id).getRcode());
      } finally {
        closeAll(held);
      }
    }
  }

  private static Message ask(SSLSocket s, int id) throws Exception {
    Message reply = new Message(DnsClient.exchange(s, DnsClient.query(id, "ok.example.test.", Type.A, null).toWire()));
    assertEquals(id, reply.getHeader().getID());
    return reply;
  }

  @Test
  public void silentTcpConnectionsAreClosedAtTheFirstQueryDeadlineAndCounted() throws Exception {
    Metrics metrics = node.metrics();
    awaitNoConnections(metrics, "shoal_tcp_connections");
    double before = dropped(metrics, "tcp_first_query_timeout");
    long start = System.nanoTime();
    List<Socket> held = silent(node.tcp(), CAP);
    try {
      assertEquals(CAP, metrics.await(v -> v >= CAP, "shoal_tcp_connections"), 0.0);
      // The cap is full of holders: a newcomer takes the slot of one of them.
      Message answer = DnsClient.tcp(node.tcp(), DnsClient.query(9, "ok.example.test.", Type.A, null));
      assertEquals(Rcode.NOERROR, answer.getRcode());
      allClosedWithin(held, FIRST_QUERY_S, start);
    } finally {
      closeAll(held);
    }
    awaitDropped(metrics, "tcp_first_query_timeout", before + CAP - 1);
    awaitNoConnections(metrics, "shoal_tcp_connections");
  }

  @Test
  public void aDotConnectionSilentAfterItsHandshakeIsClosedAtTheFirstQueryDeadline() throws Exception {
    Metrics metrics = node.metrics();
    awaitNoConnections(metrics, "shoal_dot_connections");
    double before = dropped(metrics, "tcp_first_query_timeout");
    List<SSLSocket> held = new ArrayList<>();
    try {
      long start = System.nanoTime();
      for (int i = 0; i < 3; i++) {
        held.add(handshake(dot(), "TLSv1.3", "dot"));
      }
      allClosedWithin(held, FIRST_QUERY_S, start);
    } finally {
      closeAll(held);
    }
    awaitDropped(metrics, "tcp_first_query_timeout", before + 3);
    awaitNoConnections(metrics, "shoal_dot_connections");
    assertDotAnswered(3);
  }

  @Test
  public void aDotClientCannotRenegotiateTls12() throws Exception {
    Metrics metrics = node.metrics();
    double before = dropped(metrics, "tls_renegotiation");
    try (SSLSocket s = handshake(dot(), "TLSv1.2", "dot")) {
      assertEquals(Rcode.NOERROR, new Message(DnsClient.exchange(s,
          DnsClient.query(4, "ok.example.test.", Type.A, null).toWire())).getRcode());
      try {
        s.startHandshake();
        DnsClient.exchange(s, DnsClient.query(5, "ok.example.test.", Type.A, null).toWire());
        org.junit.Assert.fail("a query after a renegotiation must not be answered");
      } catch (IOException expected) {
        // the server closed the connection instead of a second handshake
      }
    }
    awaitDropped(metrics, "tls_renegotiation", before + 1);
  }

  @Test
  public void silentDohConnectionsAreClosedAtTheHandshakeDeadlineWhileHonestClientsAreAnswered() throws Exception {
    Metrics metrics = node.metrics();
    awaitNoConnections(metrics, "shoal_doh_connections");
    double before = dropped(metrics, "tls_handshake_timeout");
    long start = System.nanoTime();
    List<Socket> held = silent(doh(), CAP);
    try {
      assertEquals(CAP, metrics.await(v -> v >= CAP, "shoal_doh_connections"), 0.0);
      assertDohAnswered();
      allClosedWithin(held, HANDSHAKE_S, start);
    } finally {
      closeAll(held);
    }
    awaitDropped(metrics, "tls_handshake_timeout", before + CAP - 1);
    assertDohAnswered();
  }

  /** The first flight of a TLS client to {@code server}: its ClientHello. */
  private static byte[] clientHello(InetSocketAddress server) throws Exception {
    SSLEngine client = ca.clientContext().createSSLEngine(server.getHostString(), server.getPort());
    client.setUseClientMode(true);
    ByteBuffer out = ByteBuffer.allocate(client.getSession().getPacketBufferSize());
    client.wrap(ByteBuffer.allocate(0), out);
    out.flip();
    byte[] hello = new byte[out.remaining()];
    out.get(hello);
    return hello;
  }

  /**
   * A client that sends half its ClientHello, then nothing, is closed at the handshake deadline and
   * counted once, as tls_handshake_timeout: the handshake its close cut short is not counted again
   * as a failed one.
   */
  private static void halfAClientHelloCountsOnce(InetSocketAddress server, String gauge) throws Exception {
    Metrics metrics = node.metrics();
    awaitNoConnections(metrics, gauge);
    Map<String, Double> before = metrics.settled();
    double timeouts = Metrics.value(before, "shoal_dropped_total", "reason=\"tls_handshake_timeout\"");
    double failed = Metrics.value(before, "shoal_dropped_total", "reason=\"tls_handshake\"");
    long start = System.nanoTime();
    try (Socket s = new Socket()) {
      s.connect(server, 2000);
      byte[] hello = clientHello(server);
      s.getOutputStream().write(hello, 0, hello.length / 2);
      s.getOutputStream().flush();
      assertTrue("closed by the server within the handshake deadline (+slack)",
          closedBy(s, start + (HANDSHAKE_S * 1000L + SLACK_MS) * 1_000_000L));
    }
    awaitNoConnections(metrics, gauge);
    Map<String, Double> after = metrics.settled();
    assertEquals(timeouts + 1, Metrics.value(after, "shoal_dropped_total", "reason=\"tls_handshake_timeout\""), 0.0);
    assertEquals(failed, Metrics.value(after, "shoal_dropped_total", "reason=\"tls_handshake\""), 0.0);
  }

  @Test
  public void aDohClientSilentHalfWayThroughItsClientHelloIsCountedOnceAsAHandshakeTimeout() throws Exception {
    halfAClientHelloCountsOnce(doh(), "shoal_doh_connections");
  }

  @Test
  public void aDotClientSilentHalfWayThroughItsClientHelloIsCountedOnceAsAHandshakeTimeout() throws Exception {
    halfAClientHelloCountsOnce(dot(), "shoal_dot_connections");
  }

  @Test
  public void dohConnectionsIdleAfterTheHandshakeOrAfterARequestAreClosed() throws Exception {
    Metrics metrics = node.metrics();
    double firstQuery = dropped(metrics, "tcp_first_query_timeout");
    double idle = dropped(metrics, "tcp_idle_timeout");
    List<SSLSocket> held = new ArrayList<>();
    try {
      long start = System.nanoTime();
      // Handshakes over HTTP/2 and HTTP/1.1, then not a byte: the first-request deadline.
      held.add(handshake(doh(), "TLSv1.3", "h2"));
      held.add(handshake(doh(), "TLSv1.3", "http/1.1"));
      held.add(handshake(doh(), "TLSv1.2", "http/1.1"));
      // One HTTP/1.1 request answered, then the connection kept open and idle: the idle deadline.
      SSLSocket keptAlive = handshake(doh(), "TLSv1.3", "http/1.1");
      held.add(keptAlive);
      String dns = Base64.getUrlEncoder().withoutPadding()
          .encodeToString(DnsClient.query(0, "ok.example.test.", Type.A, null).toWire());
      OutputStream out = keptAlive.getOutputStream();
      out.write(("GET /dns-query?dns=" + dns + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      byte[] head = keptAlive.getInputStream().readNBytes(12);
      assertEquals("HTTP/1.1 200", new String(head, StandardCharsets.US_ASCII));
      assertDohAnswered();
      allClosedWithin(held, FIRST_QUERY_S + IDLE_S, start);
    } finally {
      closeAll(held);
    }
    awaitDropped(metrics, "tcp_first_query_timeout", firstQuery + 3);
    awaitDropped(metrics, "tcp_idle_timeout", idle + 1);
    awaitNoConnections(metrics, "shoal_doh_connections");
    assertDohAnswered();
  }
}
