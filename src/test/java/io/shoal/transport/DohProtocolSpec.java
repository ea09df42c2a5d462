package io.shoal.transport;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCertificates;
import io.shoal.testing.TestNode;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
import org.xbill.DNS.ARecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * DoH's HTTP/2 and HTTP/1.1 as a hostile or broken client meets them, frame by frame over real TLS
 * sockets: each breach of RFC 9113 gets the GOAWAY code the RFC names (counted as
 * http_protocol_error) and a close; flow control holds answers back until the client opens its
 * window; more streams than advertised are refused; idle and silent connections are closed on
 * their deadlines; curl answers over both versions, dnspython by GET and POST.
 */
public class DohProtocolSpec extends JUnitSuite {
  private static final int DEADLINE_S = 3;
  private static final int SLACK_MS = 8000;
  private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int DATA = 0;
  private static final int HEADERS = 1;
  private static final int RST_STREAM = 3;
  private static final int SETTINGS = 4;
  private static final int PING = 6;
  private static final int GOAWAY = 7;
  private static final int WINDOW_UPDATE = 8;
  private static final int CONTINUATION = 9;

  private static TestAuthServer auth;
  private static TestCertificates ca;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("ok.example.test.");
    ca = TestCertificates.newCa();
    Path[] pair = ca.issue("doh-protocol");
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.https = \"127.0.0.1:0\"",
        // room for the 5,000 silent connections, so they meet their deadline rather than eviction
        "shoal.listen.tcp_max_connections = 6000",
        "shoal.listen.tls_handshake_timeout = " + DEADLINE_S + "s",
        "shoal.listen.tcp_first_query_timeout = " + DEADLINE_S + "s",
        "shoal.listen.tcp_idle_timeout = " + DEADLINE_S + "s",
        "shoal.tls.certificate = \"" + pair[0] + "\"",
        "shoal.tls.private_key = \"" + pair[1] + "\""));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private record Frame(int type, int flags, int stream, byte[] payload) {
    int errorCode() {
      ByteBuffer b = ByteBuffer.wrap(payload);
      return type == GOAWAY ? b.getInt(4) : b.getInt(0);
    }
  }

  /** One HTTP/2 connection over TLS with ALPN "h2", written and read frame by frame. */
  private static final class H2 implements AutoCloseable {
    final SSLSocket socket;
    final DataInputStream in;
    final OutputStream out;

    H2(String alpn) throws Exception {
      socket = (SSLSocket) ca.clientContext().getSocketFactory().createSocket();
      socket.connect(node.server.httpsAddress(), 2000);
      socket.setSoTimeout(10_000);
      SSLParameters p = socket.getSSLParameters();
      p.setApplicationProtocols(new String[] {alpn});
      socket.setSSLParameters(p);
      socket.startHandshake();
      in = new DataInputStream(socket.getInputStream());
      out = socket.getOutputStream();
    }

    /** A connection that said its preface and an empty SETTINGS. */
    static H2 open() throws Exception {
      H2 h2 = new H2("h2");
      h2.out.write(PREFACE);
      h2.frame(SETTINGS, 0, 0, new byte[0]);
      return h2;
    }

    void frame(int type, int flags, int stream, byte[] payload) throws IOException {
      ByteBuffer b = ByteBuffer.allocate(9 + payload.length);
      b.put((byte) (payload.length >>> 16)).put((byte) (payload.length >>> 8)).put((byte) payload.length)
          .put((byte) type).put((byte) flags).putInt(stream).put(payload);
      out.write(b.array());
      out.flush();
    }

    Frame next() throws IOException {
      byte[] head = new byte[9];
      in.readFully(head);
      int length = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
      byte[] payload = new byte[length];
      in.readFully(payload);
      return new Frame(head[3] & 0xff, head[4] & 0xff, ByteBuffer.wrap(head, 5, 4).getInt() & 0x7fffffff, payload);
    }

    /** The next frame of {@code type}, skipping others (at most 200). */
    Frame await(int type) throws IOException {
      for (int i = 0; i < 200; i++) {
        Frame f = next();
        if (f.type == type) {
          return f;
        }
      }
      throw new AssertionError("no frame of type " + type + " in 200");
    }

    /** True when the server closes the connection (EOF or reset) within {@code millis}. */
    boolean closedWithin(long millis) throws IOException {
      long end = System.nanoTime() + millis * 1_000_000;
      socket.setSoTimeout((int) millis);
      try {
        while (System.nanoTime() < end) {
          next();
        }
        return false;
      } catch (EOFException | java.net.SocketException | javax.net.ssl.SSLException closed) {
        return true;
      } catch (SocketTimeoutException late) {
        return false;
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  /** An HPACK block for a request: static-table method and scheme, literal path and authority. */
  private static byte[] request(String method, String path, String contentType) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.write(method.equals("GET") ? 0x82 : 0x83);
    b.write(0x87);
    literal(b, 4, path);
    literal(b, 1, "localhost");
    if (contentType != null) {
      b.write(0x0f);
      b.write(31 - 15);
      byte[] v = contentType.getBytes(StandardCharsets.ISO_8859_1);
      b.write(v.length);
      b.write(v, 0, v.length);
    }
    return b.toByteArray();
  }

  private static void literal(ByteArrayOutputStream b, int index, String value) {
    byte[] v = value.getBytes(StandardCharsets.ISO_8859_1);
    b.write(index);
    if (v.length < 127) {
      b.write(v.length);
    } else {
      b.write(127);
      int rest = v.length - 127;
      while (rest >= 128) {
        b.write((rest & 0x7f) | 0x80);
        rest >>>= 7;
      }
      b.write(rest);
    }
    b.write(v, 0, v.length);
  }

  private static String dnsParameter() {
    return Base64.getUrlEncoder().withoutPadding()
        .encodeToString(DnsClient.query(0, "ok.example.test.", Type.A, null).toWire());
  }

  private static void assertDnsAnswer(byte[] body) throws IOException {
    Message m = new Message(body);
    assertEquals("192.0.2.7", ((ARecord) m.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
  }

  private static double protocolErrors() throws Exception {
    return Metrics.value(node.metrics().settled(), "shoal_dropped_total", "reason=\"http_protocol_error\"");
  }

  /** A connection error: the GOAWAY's code, then a close, counted once. */
  private static void assertGoaway(H2 h2, int code) throws Exception {
    Frame goaway = h2.await(GOAWAY);
    assertEquals("GOAWAY code", code, goaway.errorCode());
    assertTrue("closed after GOAWAY", h2.closedWithin(5000));
  }

  @Test
  public void aGetInRawFramesIsAnsweredWithHeadersAndDataAndPingsAreAcknowledged() throws Exception {
    try (H2 h2 = H2.open()) {
      Frame settings = h2.await(SETTINGS);
      assertEquals(0, settings.flags);
      byte[] ping = {1, 2, 3, 4, 5, 6, 7, 8};
      h2.frame(PING, 0, 0, ping);
      Frame pong = h2.await(PING);
      assertEquals(1, pong.flags);
      assertArrayEquals(ping, pong.payload);
      h2.frame(HEADERS, 0x5, 1, request("GET", "/dns-query?dns=" + dnsParameter(), null));
      Frame headers = h2.await(HEADERS);
      assertEquals(1, headers.stream);
      assertEquals("first field is :status 200 (static index 8)", (byte) 0x88, headers.payload[0]);
      Frame data = h2.await(DATA);
      assertEquals("END_STREAM", 1, data.flags & 1);
      assertDnsAnswer(data.payload);
    }
  }

  @Test
  public void aClientThatNeverSendsThePrefaceGetsGoawayProtocolError() throws Exception {
    double before = protocolErrors();
    try (H2 h2 = new H2("h2")) {
      h2.out.write("GET /dns-query HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      h2.out.flush();
      assertGoaway(h2, 0x1);
    }
    assertEquals(before + 1, node.metrics().await(v -> v >= before + 1, "shoal_dropped_total",
        "reason=\"http_protocol_error\""), 0.0);
  }

  @Test
  public void malformedFramesGetTheirGoawayCodes() throws Exception {
    double before = protocolErrors();
    try (H2 h2 = H2.open()) { // a frame over the 16 KiB SETTINGS_MAX_FRAME_SIZE
      h2.frame(DATA, 0, 1, new byte[16385]);
      assertGoaway(h2, 0x6);
    }
    try (H2 h2 = H2.open()) { // PING of 7 bytes
      h2.frame(PING, 0, 0, new byte[7]);
      assertGoaway(h2, 0x6);
    }
    try (H2 h2 = H2.open()) { // HEADERS on an even (server-initiated) stream
      h2.frame(HEADERS, 0x5, 2, request("GET", "/dns-query?dns=" + dnsParameter(), null));
      assertGoaway(h2, 0x1);
    }
    try (H2 h2 = H2.open()) { // an HPACK index past both tables
      h2.frame(HEADERS, 0x5, 1, new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x7f});
      assertGoaway(h2, 0x9);
    }
    try (H2 h2 = H2.open()) { // a header block cut by another frame
      h2.frame(HEADERS, 0x1, 1, request("GET", "/dns-query?dns=" + dnsParameter(), null));
      h2.frame(PING, 0, 0, new byte[8]);
      assertGoaway(h2, 0x1);
    }
    try (H2 h2 = H2.open()) { // a connection window past 2^31-1
      h2.frame(WINDOW_UPDATE, 0, 0, ByteBuffer.allocate(4).putInt(Integer.MAX_VALUE).array());
      assertGoaway(h2, 0x3);
    }
    assertEquals(before + 6, node.metrics().await(v -> v >= before + 6, "shoal_dropped_total",
        "reason=\"http_protocol_error\""), 0.0);
    // The listener still answers.
    aGetInRawFramesIsAnsweredWithHeadersAndDataAndPingsAreAcknowledged();
  }

  @Test
  public void hugeHeaderBlocksAndContinuationFloodsAreRefusedWithEnhanceYourCalm() throws Exception {
    try (H2 h2 = H2.open()) {
      byte[] path = request("GET", "/dns-query?pad=" + "a".repeat(15_000), null);
      h2.frame(HEADERS, 0x1, 1, path);
      h2.frame(CONTINUATION, 0x0, 1, new byte[4000]);
      assertGoaway(h2, 0xb);
    }
    try (H2 h2 = H2.open()) {
      h2.frame(HEADERS, 0x1, 1, new byte[0]);
      for (int i = 0; i < 40; i++) {
        h2.frame(CONTINUATION, 0x0, 1, new byte[0]);
      }
      assertGoaway(h2, 0xb);
    }
  }

  @Test
  public void aStreamResetBeforeItsAnswerIsCountedAndOneResetAfterItIsNot() throws Exception {
    double before = Metrics.value(node.metrics().settled(), "shoal_dropped_total", "reason=\"http_stream_reset\"");
    try (H2 h2 = H2.open()) {
      byte[] cancel = ByteBuffer.allocate(4).putInt(0x8).array();
      h2.frame(HEADERS, 0x5, 1, request("GET", "/dns-query?dns=" + dnsParameter(), null));
      assertDnsAnswer(h2.await(DATA).payload);
      h2.frame(RST_STREAM, 0, 1, cancel); // after its answer: nothing was dropped
      // a POST whose body never comes, reset: its answer is never sent
      h2.frame(HEADERS, 0x4, 3, request("POST", "/dns-query", "application/dns-message"));
      h2.frame(RST_STREAM, 0, 3, cancel);
      h2.frame(PING, 0, 0, new byte[8]);
      h2.await(PING);
      // the connection goes on
      h2.frame(HEADERS, 0x5, 5, request("GET", "/dns-query?dns=" + dnsParameter(), null));
      assertDnsAnswer(h2.await(DATA).payload);
    }
    double after = node.metrics().await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"http_stream_reset\"");
    assertEquals(before + 1, Metrics.value(node.metrics().settled(), "shoal_dropped_total",
        "reason=\"http_stream_reset\""), 0.0);
    assertEquals(before + 1, after, 0.0);
  }

  @Test
  public void anAnswerWaitsForTheClientsWindowAndMoreStreamsThanAdvertisedAreRefused() throws Exception {
    try (H2 h2 = new H2("h2")) {
      h2.out.write(PREFACE);
      // SETTINGS_INITIAL_WINDOW_SIZE = 0: no DATA may come until the client opens the stream's window.
      h2.frame(SETTINGS, 0, 0, ByteBuffer.allocate(6).putShort((short) 4).putInt(0).array());
      h2.frame(HEADERS, 0x5, 1, request("GET", "/dns-query?dns=" + dnsParameter(), null));
      Frame headers = h2.await(HEADERS);
      assertEquals(1, headers.stream);
      h2.frame(PING, 0, 0, new byte[8]);
      // Frames are in order: had DATA been sent it would come before the PING's acknowledgement.
      for (Frame f = h2.next(); f.type != PING; f = h2.next()) {
        assertTrue("no DATA before the window opens", f.type != DATA);
      }
      h2.frame(WINDOW_UPDATE, 0, 1, ByteBuffer.allocate(4).putInt(65535).array());
      assertDnsAnswer(h2.await(DATA).payload);
      // 100 streams are advertised: POSTs whose bodies never come hold 100; the 101st is refused.
      for (int i = 0; i < 101; i++) {
        h2.frame(HEADERS, 0x4, 3 + 2 * i, request("POST", "/dns-query", "application/dns-message"));
      }
      Frame refused = h2.await(RST_STREAM);
      assertEquals(3 + 2 * 100, refused.stream);
      assertEquals("REFUSED_STREAM", 0x7, refused.errorCode());
    }
  }

  @Test
  public void aConnectionIdleAfterARequestGetsGoawayNoErrorAtItsDeadline() throws Exception {
    double idle = node.metrics().value("shoal_dropped_total", "reason=\"tcp_idle_timeout\"");
    try (H2 h2 = H2.open()) {
      h2.frame(HEADERS, 0x5, 1, request("GET", "/dns-query?dns=" + dnsParameter(), null));
      assertDnsAnswer(h2.await(DATA).payload);
      long start = System.nanoTime();
      h2.socket.setSoTimeout(DEADLINE_S * 1000 + SLACK_MS);
      Frame goaway = h2.await(GOAWAY);
      assertEquals("NO_ERROR", 0, goaway.errorCode());
      assertEquals("last stream", 1, ByteBuffer.wrap(goaway.payload).getInt(0));
      assertTrue((System.nanoTime() - start) / 1_000_000 >= DEADLINE_S * 1000 - 200);
      assertTrue(h2.closedWithin(5000));
    }
    node.metrics().await(v -> v >= idle + 1, "shoal_dropped_total", "reason=\"tcp_idle_timeout\"");
  }

  /** Writes {@code request} on a new HTTP/1.1 TLS connection; what the server sent until it closed. */
  private static String http1(String request) throws Exception {
    return http1(request, Integer.MAX_VALUE);
  }

  /** As above, the request written in pieces of {@code piece} bytes, each flushed (a TLS record each). */
  private static String http1(String request, int piece) throws Exception {
    try (SSLSocket s = (SSLSocket) ca.clientContext().getSocketFactory().createSocket()) {
      s.connect(node.server.httpsAddress(), 2000);
      s.setSoTimeout(10_000);
      SSLParameters p = s.getSSLParameters();
      p.setApplicationProtocols(new String[] {"http/1.1"});
      s.setSSLParameters(p);
      byte[] bytes = request.getBytes(StandardCharsets.ISO_8859_1);
      for (int at = 0; at < bytes.length; at += piece) {
        s.getOutputStream().write(bytes, at, Math.min(piece, bytes.length - at));
        s.getOutputStream().flush();
      }
      s.getOutputStream().flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      byte[] chunk = new byte[4096];
      try {
        for (int n; (n = in.read(chunk)) >= 0; ) {
          all.write(chunk, 0, n);
        }
      } catch (java.net.SocketException reset) {
        // closed with a reset after the response: what came is what counts
      }
      return all.toString(StandardCharsets.ISO_8859_1);
    }
  }

  @Test
  public void http1PipelinesInOrderAndRefusesWhatItCannotRead() throws Exception {
    String get = "GET /dns-query?dns=" + dnsParameter() + " HTTP/1.1\r\nHost: x\r\n\r\n";
    String two = http1(get + get.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"));
    assertEquals(two, 2, two.split("HTTP/1.1 200 OK", -1).length - 1);
    assertTrue(two, two.contains("Cache-Control: max-age="));
    double before = protocolErrors();
    String huge = http1("GET /dns-query HTTP/1.1\r\nX-Pad: " + "a".repeat(20_000) + "\r\n\r\n");
    assertTrue(huge, huge.startsWith("HTTP/1.1 431 "));
    String garbage = http1("\u0001\u0002\u0003 nonsense\r\n\r\n");
    assertTrue(garbage, garbage.startsWith("HTTP/1.1 400 "));
    String post = "POST /dns-query HTTP/1.1\r\nContent-Type: application/dns-message\r\n";
    String both = http1(post + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n");
    assertTrue(both, both.startsWith("HTTP/1.1 400 "));
    String gzip = http1(post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
    assertTrue(gzip, gzip.startsWith("HTTP/1.1 501 "));
    String badSize = http1(post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n\r\n");
    assertTrue(badSize, badSize.startsWith("HTTP/1.1 400 "));
    String overrun = http1(post + "Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n");
    assertTrue(overrun, overrun.startsWith("HTTP/1.1 400 "));
    assertEquals(before + 6, node.metrics().await(v -> v >= before + 6, "shoal_dropped_total",
        "reason=\"http_protocol_error\""), 0.0);
  }

  @Test
  public void http1ChunkedPostsAreAnsweredAsOthers() throws Exception {
    String query = new String(DnsClient.query(0, "ok.example.test.", Type.A, null).toWire(), StandardCharsets.ISO_8859_1);
    int half = query.length() / 2;
    String post = "POST /dns-query HTTP/1.1\r\nHost: x\r\nContent-Type: application/dns-message\r\n"
        + "Transfer-Encoding: chunked\r\n";
    // two chunks (one with an extension), a trailer field, then a second request on the connection
    String chunkedBody = Integer.toHexString(half) + ";ext=1\r\n" + query.substring(0, half) + "\r\n"
        + Integer.toHexString(query.length() - half) + "\r\n" + query.substring(half) + "\r\n"
        + "0\r\nX-Trailer: t\r\n\r\n";
    String two = http1(post + "\r\n" + chunkedBody + post + "Connection: close\r\n\r\n" + chunkedBody);
    assertEquals(two, 2, two.split("HTTP/1.1 200 OK", -1).length - 1);
    int body = two.indexOf("\r\n\r\n") + 4;
    int length = Integer.parseInt(two.replaceFirst("(?s).*?Content-Length: (\\d+).*", "$1"));
    assertDnsAnswer(two.substring(body, body + length).getBytes(StandardCharsets.ISO_8859_1));
    // the same, arriving a few bytes at a time: sizes, data and CRLFs split across reads
    String slow = http1(post + "Connection: close\r\n\r\n" + chunkedBody, 3);
    assertTrue(slow, slow.startsWith("HTTP/1.1 200 OK"));
    // a chunked body over the DNS message's 65,535 bytes gets 413 (read to its end, then closed)
    String big = "a".repeat(40_000);
    String tooLarge = http1(post + "Connection: close\r\n\r\n" + Integer.toHexString(big.length()) + "\r\n" + big + "\r\n"
        + Integer.toHexString(big.length()) + "\r\n" + big + "\r\n0\r\n\r\n");
    assertTrue(tooLarge, tooLarge.startsWith("HTTP/1.1 413 "));
  }

  @Test
  public void curlGetsAnswersOverHttp2AndHttp11() throws Exception {
    Assume.assumeTrue("curl not installed", DotSpec.onPath("curl"));
    String url = "https://localhost:" + node.server.httpsAddress().getPort() + "/dns-query";
    Path body = java.nio.file.Files.createTempFile(ca.dir, "query", ".bin");
    java.nio.file.Files.write(body, DnsClient.query(0, "ok.example.test.", Type.A, null).toWire());
    for (String version : new String[] {"--http2", "--http1.1"}) {
      Path got = java.nio.file.Files.createTempFile(ca.dir, "answer", ".bin");
      String out = DotSpec.run("curl", "-sS", version, "--cacert", ca.caCertificate.toString(),
          "--resolve", "localhost:" + node.server.httpsAddress().getPort() + ":127.0.0.1",
          "-o", got.toString(), "-w", "%{http_code} %{http_version}", url + "?dns=" + dnsParameter());
      assertEquals(out, "200 " + (version.equals("--http2") ? "2" : "1.1"), out.trim());
      assertDnsAnswer(java.nio.file.Files.readAllBytes(got));
      out = DotSpec.run("curl", "-sS", version, "--cacert", ca.caCertificate.toString(),
          "--resolve", "localhost:" + node.server.httpsAddress().getPort() + ":127.0.0.1",
          "-H", "Content-Type: application/dns-message", "--data-binary", "@" + body,
          "-o", got.toString(), "-w", "%{http_code}", url);
      assertEquals(out, "200", out.trim());
      assertDnsAnswer(java.nio.file.Files.readAllBytes(got));
    }
    // curl sends a POST body chunked when told to (HTTP/1.1 only: HTTP/2 has no chunked coding)
    Path got = java.nio.file.Files.createTempFile(ca.dir, "answer", ".bin");
    String out = DotSpec.run("curl", "-sS", "--http1.1", "--cacert", ca.caCertificate.toString(),
        "--resolve", "localhost:" + node.server.httpsAddress().getPort() + ":127.0.0.1",
        "-H", "Content-Type: application/dns-message", "-H", "Transfer-Encoding: chunked",
        "--data-binary", "@" + body, "-o", got.toString(), "-w", "%{http_code}", url);
    assertEquals(out, "200", out.trim());
    assertDnsAnswer(java.nio.file.Files.readAllBytes(got));
  }

  @Test
  public void dnspythonGetsAnswersByGetAndPost() throws Exception {
    Assume.assumeTrue("dnspython with httpx and h2 not installed", new java.io.File("/usr/bin/python3").canExecute()
        && DotSpec.run("/usr/bin/python3", "-c", "import dns.query, httpx, h2").isEmpty());
    String script = String.join("\n",
        "import sys, dns.message, dns.query",
        "q = dns.message.make_query('ok.example.test.', 'A')",
        "for post in (False, True):",
        "    r = dns.query.https(q, 'https://localhost:' + sys.argv[1] + '/dns-query', timeout=10,",
        "                        post=post, verify=sys.argv[2])",
        "    print('POST' if post else 'GET', dns.rcode.to_text(r.rcode()), r.answer[0][0].address)");
    String out = DotSpec.run("/usr/bin/python3", "-c", script,
        String.valueOf(node.server.httpsAddress().getPort()), ca.caCertificate.toString());
    assertEquals(out, "GET NOERROR 192.0.2.7\nPOST NOERROR 192.0.2.7", out.trim());
  }

  @Test
  public void fiveThousandSilentConnectionsAreClosedAtTheHandshakeDeadlineAndCostLittleHeap() throws Exception {
    Metrics metrics = node.metrics();
    metrics.await(v -> v == 0, "shoal_doh_connections");
    Runtime rt = Runtime.getRuntime();
    System.gc();
    long heapBefore = rt.totalMemory() - rt.freeMemory();
    List<Socket> held = new ArrayList<>();
    InetSocketAddress doh = node.server.httpsAddress();
    try {
      for (int i = 0; i < 5000; i++) {
        Socket s = new Socket();
        s.connect(doh, 2000);
        held.add(s);
      }
      double open = metrics.await(v -> v >= 4000, "shoal_doh_connections");
      System.gc();
      long grown = rt.totalMemory() - rt.freeMemory() - heapBefore;
      assertTrue("heap grew " + (grown >> 20) + " MiB for " + (long) open + " silent connections (both ends)",
          grown < 64L << 20);
      // An honest client is answered while they are held.
      try (H2 h2 = H2.open()) {
        h2.frame(HEADERS, 0x5, 1, request("GET", "/dns-query?dns=" + dnsParameter(), null));
        assertDnsAnswer(h2.await(DATA).payload);
      }
      long end = System.nanoTime() + (DEADLINE_S * 1000L + SLACK_MS) * 1_000_000L;
      for (Socket s : held) {
        s.setSoTimeout((int) Math.max(1, (end - System.nanoTime()) / 1_000_000));
        try {
          assertEquals("closed by the server", -1, s.getInputStream().read());
        } catch (java.net.SocketException reset) {
          // closed with a reset: closed all the same
        }
      }
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
    assertEquals(0.0, metrics.await(v -> v == 0, "shoal_doh_connections"), 0.0);
  }
}
