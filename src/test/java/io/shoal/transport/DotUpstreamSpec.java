package io.shoal.transport;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestCertificates;
import io.shoal.testing.TestNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Forwarding to DNS-over-TLS upstreams (RFC 7858): node B forwards misses over TLS to node A's DoT
 * listener, which asks the test authoritative server; one connection carries concurrent queries and
 * is opened again after it closes; a wrong name, an expired certificate, a self-signed one and an
 * unmatched SPKI pin are refused with the reason in the log and in
 * shoal_upstream_tls_failures_total; an answer with another ID is dropped and counted; a group that lists a dead UDP server first fails over to its
 * DoT server. Each group of node B serves its own suffix of example.test.
 */
public class DotUpstreamSpec extends JUnitSuite {
  private static final String[] GROUPS = {"good", "counted", "pinned", "badpin", "wrongname", "expired", "selfsigned",
      "mixed", "forged", "plain"};
  private static TestAuthServer auth;
  private static TestCertificates ca;
  private static TestNode a;
  private static TestNode b;
  private static CountingProxy proxy;
  private static StreamServer expired;
  private static StreamServer selfSigned;
  private static StreamServer forging;
  private static StreamServer plain;
  private static int deadUdpPort;
  private static final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private static final AtomicInteger ids = new AtomicInteger(0x5100);

  /** The TLS implementation node B's DoT upstream connections are expected to use. */
  private static String provider;

  @BeforeClass
  public static void start() throws Exception {
    startWith("auto");
  }

  /** Starts node A (the DoT server) and node B (its DoT client) with B's {@code shoal.tls.provider}. */
  static void startWith(String tlsProvider) throws Exception {
    provider = tlsProvider.equals("auto") && org.conscrypt.Conscrypt.isAvailable() ? "conscrypt" : "jdk";
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    log.setContext(context);
    log.start();
    context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(log);

    auth = new TestAuthServer();
    ca = TestCertificates.newCa();
    Path[] pair = ca.issue("dot-upstream");
    a = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.tls = \"127.0.0.1:0\"",
        "shoal.tls.certificate = \"" + pair[0] + "\"",
        "shoal.tls.private_key = \"" + pair[1] + "\"",
        // Longer than the answers held back below, so A itself never gives up on the authority.
        "shoal.upstreams.default.timeout = 3s"));
    int dot = a.server.tlsAddress().getPort();
    proxy = new CountingProxy(a.server.tlsAddress());
    expired = new StreamServer(ca.serverContext(ca.issue("expired", -1)), DotUpstreamSpec::handshakeOnly);
    selfSigned = new StreamServer(ca.serverContext(ca.selfSigned("self-signed")), DotUpstreamSpec::handshakeOnly);
    forging = new StreamServer(ca.serverContext(ca.issue("forging")), DotUpstreamSpec::answerForgedThenReal);
    plain = new StreamServer(new java.net.ServerSocket(0, 50, InetAddress.getLoopbackAddress()), DotUpstreamSpec::plainDns);
    deadUdpPort = TestNode.freePort();
    String otherPin = Base64.getEncoder().encodeToString(new byte[32]);
    String[] servers = {
        "tls://127.0.0.1:" + dot + "#localhost",
        "tls://127.0.0.1:" + proxy.port() + "#localhost",
        "tls://127.0.0.1:" + dot + "#127.0.0.1",
        "tls://127.0.0.1:" + dot + "#localhost.",
        "tls://127.0.0.1:" + dot + "#wrong.example",
        "tls://127.0.0.1:" + expired.port() + "#localhost",
        "tls://127.0.0.1:" + selfSigned.port() + "#localhost",
        "127.0.0.1:" + deadUdpPort + "\", \"tls://127.0.0.1:" + dot + "#localhost",
        "tls://127.0.0.1:" + forging.port() + "#localhost",
        "tls://127.0.0.1:" + plain.port() + "#localhost"};
    String[] pins = {null, null, TestCertificates.spkiPin(pair[0]), otherPin, null, null, null, null, null, null};
    StringBuilder hocon = new StringBuilder();
    for (int i = 0; i < GROUPS.length; i++) {
      String g = GROUPS[i];
      hocon.append("shoal.upstreams.").append(g).append(" { servers = [\"").append(servers[i])
          .append("\"], timeout = 4s, tls_ca_file = \"").append(ca.caCertificate).append("\"")
          .append(pins[i] == null ? "" : ", tls_spki_pins = [\"" + pins[i] + "\"]").append(" }\n")
          .append("shoal.profiles.").append(g).append(" { match = [\"").append(g)
          .append(".example.test.\"], cache = answers, upstreams = ").append(g).append(" }\n");
    }
    hocon.append("shoal.tls.provider = ").append(tlsProvider).append('\n');
    b = TestNode.start(auth.hostPort(), hocon.toString());
  }

  @AfterClass
  public static void stop() throws Exception {
    ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)
        .detachAppender(log);
    b.close();
    a.close();
    proxy.close();
    expired.close();
    selfSigned.close();
    forging.close();
    plain.close();
    auth.close();
  }

  /** Asks node B for {@code name} over UDP; the name gets an A record at the authoritative server first. */
  private static Message ask(String name) throws IOException {
    auth.addA(name);
    return DnsClient.udp(b.udp(), DnsClient.query(ids.incrementAndGet() & 0xFFFF, name, Type.A, null));
  }

  private static String upstream(int port) {
    return "upstream=\"tls://127.0.0.1:" + port + "\"";
  }

  private static void assertAnswered(Message reply) {
    assertEquals(Rcode.NOERROR, reply.getRcode());
    assertEquals("192.0.2.7", ((ARecord) reply.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
  }

  /** The log lines of the DoT client so far that mention every one of {@code words}. */
  private static List<String> logged(String... words) {
    List<String> lines = new ArrayList<>();
    for (ILoggingEvent e : List.copyOf(log.list)) {
      String m = e.getFormattedMessage();
      if (List.of(words).stream().allMatch(m::contains)) {
        lines.add(m);
      }
    }
    return lines;
  }

  /** Asks for a fresh name under {@code group} and expects SERVFAIL, a log line and a failure metric. */
  private static void assertRefused(String group, int port, String reason, String... logWords) throws Exception {
    Metrics metrics = b.metrics();
    Message reply = ask("refused-" + ids.incrementAndGet() + "." + group + ".example.test.");
    assertEquals(Rcode.SERVFAIL, reply.getRcode());
    double failures = metrics.await(v -> v >= 1, "shoal_upstream_tls_failures_total", upstream(port),
        "reason=\"" + reason + "\"");
    assertTrue(group + ": shoal_upstream_tls_failures_total{reason=" + reason + "}", failures >= 1);
    assertTrue(group + ": attempt outcome tls_verify", metrics.await(v -> v >= 1, "shoal_upstream_seconds_count",
        upstream(port), "outcome=\"tls_verify\"") >= 1);
    List<String> words = new ArrayList<>(List.of(logWords));
    words.add("tls://127.0.0.1:" + port);
    words.add("(" + reason + ")");
    assertTrue("a log line with " + words + " in " + logged("DoT upstream"),
        Await.until(Duration.ofSeconds(5), () -> !logged(words.toArray(String[]::new)).isEmpty()));
  }

  @Test
  public void aMissIsAnsweredOverTlsAndTheAuthorityIsAskedOnceThroughNodeA() throws Exception {
    Message reply = ask("one.good.example.test.");
    assertAnswered(reply);
    assertEquals(1, auth.queries("one.good.example.test.", Type.A));
    assertAnswered(ask("one.good.example.test."));
    assertEquals("the second answer came from B's cache", 1, auth.queries("one.good.example.test.", Type.A));
    int dot = a.server.tlsAddress().getPort();
    Metrics metrics = b.metrics();
    assertTrue(metrics.await(v -> v >= 1, "shoal_upstream_seconds_count", upstream(dot), "outcome=\"ok\"") >= 1);
    assertEquals("its TLS is shoal.tls.provider's", 1.0,
        metrics.await(v -> v == 1.0, "shoal_upstream_tls_provider", "provider=\"" + provider + "\""), 0.0);
    String other = provider.equals("jdk") ? "conscrypt" : "jdk";
    assertEquals(0.0, Metrics.value(metrics.settled(), "shoal_upstream_tls_provider", "provider=\"" + other + "\""),
        0.0);
  }

  @Test
  public void concurrentMissesArePipelinedOnOneConnectionWhichIsOpenedAgainAfterItCloses() throws Exception {
    // The connection is opened (and its handshake done) first, so the burst meets it warm.
    assertAnswered(ask("warm.counted.example.test."));
    // Each answer is then held back 1 s at the authority: ten misses one after another on one
    // connection would take 10 s, far past B's 4 s timeout; only pipelined are they all answered.
    auth.delay(1000);
    ExecutorService clients = Executors.newFixedThreadPool(10);
    try {
      List<Future<Message>> replies = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        String name = "p" + i + ".counted.example.test.";
        replies.add(clients.submit(() -> ask(name)));
      }
      for (Future<Message> f : replies) {
        assertAnswered(f.get(10, TimeUnit.SECONDS));
      }
    } finally {
      auth.delay(0);
      clients.shutdownNow();
    }
    assertEquals("one TLS connection carried them all", 1, proxy.accepted.get());

    // After each cut the next miss opens a new connection; one that went out on the old
    // connection as it closed is sent again on the new one, so the client never sees the cut.
    for (int cut = 1; cut <= 5; cut++) {
      proxy.closeAll();
      assertAnswered(ask("again-" + cut + ".counted.example.test."));
      assertEquals("reconnected once per cut", 1 + cut, proxy.accepted.get());
    }
  }

  @Test
  public void aServerWhoseCertificateMatchesAPinIsAsked() throws Exception {
    assertAnswered(ask("pin.pinned.example.test."));
  }

  @Test
  public void aWrongNameIsRefusedWithTheReasonInTheLogAndAMetric() throws Exception {
    assertRefused("wrongname", a.server.tlsAddress().getPort(), "hostname", "wrong.example",
        "does not carry the name");
  }

  @Test
  public void anExpiredCertificateIsRefused() throws Exception {
    assertRefused("expired", expired.port(), "expired", "expired");
  }

  @Test
  public void aSelfSignedCertificateIsRefused() throws Exception {
    assertRefused("selfsigned", selfSigned.port(), "untrusted", "not signed by a trusted CA");
    // Refusals count as failures for the server's health: a few more and it is marked down.
    for (int i = 0; i < 3; i++) {
      assertEquals(Rcode.SERVFAIL, ask("down-" + i + ".selfsigned.example.test.").getRcode());
    }
    String series = "tls://127.0.0.1:" + selfSigned.port();
    assertTrue("shoal_upstream_up{upstream=" + series + "} 0", Await.until(Duration.ofSeconds(10), () ->
        b.metrics().scrape().entrySet().stream().anyMatch(e -> e.getKey().startsWith("shoal_upstream_up{")
            && e.getKey().contains(series) && e.getValue() == 0)));
  }

  @Test
  public void plainDnsOnATlsUpstreamsPortIsAHandshakeFailure() throws Exception {
    int port = plain.port();
    Metrics metrics = b.metrics();
    assertEquals(Rcode.SERVFAIL, ask("p.plain.example.test.").getRcode());
    assertTrue("attempt outcome tls_handshake", metrics.await(v -> v >= 1, "shoal_upstream_seconds_count",
        upstream(port), "outcome=\"tls_handshake\"") >= 1);
    assertEquals("not counted as a dropped connection", 0,
        metrics.value("shoal_upstream_seconds_count", upstream(port), "outcome=\"error\""), 0.0);
    assertTrue(metrics.await(v -> v >= 1, "shoal_upstream_tls_failures_total", upstream(port),
        "reason=\"handshake\"") >= 1);
    List<String> words = List.of("tls://127.0.0.1:" + port, "the TLS handshake failed (handshake)", "plain DNS on this port");
    assertTrue("a log line with " + words + " in " + logged("DoT upstream"),
        Await.until(Duration.ofSeconds(5), () -> !logged(words.toArray(String[]::new)).isEmpty()));
  }

  @Test
  public void aCertificateThatMatchesNoPinIsRefused() throws Exception {
    assertRefused("badpin", a.server.tlsAddress().getPort(), "pin", "SPKI pin");
  }

  @Test
  public void aMixedGroupFailsOverFromADeadUdpServerToItsDotServer() throws Exception {
    assertAnswered(ask("m.mixed.example.test."));
    Metrics metrics = b.metrics();
    String dead = "upstream=\"127.0.0.1:" + deadUdpPort + "\"";
    assertTrue("the dead UDP server was tried first",
        metrics.await(v -> v >= 1, "shoal_upstream_seconds_count", dead) >= 1);
    assertEquals(0, metrics.value("shoal_upstream_seconds_count", dead, "outcome=\"ok\""), 0.0);
  }

  @Test
  public void anAnswerWithAnotherIdIsDroppedAndCountedAndTheRealOneIsTaken() throws Exception {
    Metrics metrics = b.metrics();
    double before = Metrics.value(metrics.settled(), "shoal_dropped_total", "reason=\"upstream_mismatch\"");
    Message reply = DnsClient.udp(b.udp(), DnsClient.query(0x5A5A, "f.forged.example.test.", Type.A, null));
    assertAnswered(reply);
    assertEquals(0x5A5A, reply.getHeader().getID());
    assertTrue(metrics.await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"upstream_mismatch\"")
        >= before + 1);
  }

  /** Forwards TCP connections to {@code target}, counting them; {@link #closeAll} cuts them. */
  private static final class CountingProxy implements AutoCloseable {
    final AtomicInteger accepted = new AtomicInteger();
    private final ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final InetSocketAddress target;

    CountingProxy(InetSocketAddress target) throws IOException {
      this.target = target;
      daemon(this::acceptLoop);
    }

    int port() {
      return listener.getLocalPort();
    }

    private void acceptLoop() {
      while (!listener.isClosed()) {
        try {
          Socket client = listener.accept();
          accepted.incrementAndGet();
          Socket server = new Socket();
          server.connect(target, 2000);
          open.add(client);
          open.add(server);
          daemon(() -> pump(client, server));
          daemon(() -> pump(server, client));
        } catch (IOException e) {
          // closed
        }
      }
    }

    private static void pump(Socket from, Socket to) {
      byte[] buf = new byte[16384];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int n;
        while ((n = in.read(buf)) > 0) {
          out.write(buf, 0, n);
        }
      } catch (IOException e) {
        // either side closed
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }

    void closeAll() {
      open.forEach(CountingProxy::closeQuietly);
      open.clear();
    }

    private static void closeQuietly(Socket s) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      closeAll();
    }
  }

  /**
   * A TCP server (a TLS one presenting the certificate of its context, or a plain one), each
   * connection served by {@code handler} on a thread of its own.
   */
  private static final class StreamServer implements AutoCloseable {
    private final java.net.ServerSocket listener;

    StreamServer(SSLContext context, java.util.function.Consumer<Socket> handler) throws IOException {
      this(context.getServerSocketFactory().createServerSocket(0, 50, InetAddress.getLoopbackAddress()), handler);
    }

    StreamServer(java.net.ServerSocket listener, java.util.function.Consumer<Socket> handler) {
      this.listener = listener;
      daemon(() -> {
        while (!listener.isClosed()) {
          try {
            Socket s = listener.accept();
            daemon(() -> handler.accept(s));
          } catch (IOException e) {
            // closed
          }
        }
      });
    }

    int port() {
      return listener.getLocalPort();
    }

    @Override
    public void close() throws IOException {
      listener.close();
    }
  }

  /**
   * A plain DNS-over-TCP server, as on port 53: it reads a 2-byte length and that many bytes, and
   * closes the connection when they do not come within its I/O timeout (as knotd's
   * tcp-io-timeout) or are not a DNS message. A TLS ClientHello reads as a 5,635-byte "length".
   */
  private static void plainDns(Socket socket) {
    try (socket; java.io.DataInputStream in = new java.io.DataInputStream(socket.getInputStream());
        java.io.DataOutputStream out = new java.io.DataOutputStream(socket.getOutputStream())) {
      socket.setSoTimeout(500);
      while (true) {
        byte[] wire = new byte[in.readUnsignedShort()];
        in.readFully(wire);
        Message q = new Message(wire);
        q.getHeader().setFlag(org.xbill.DNS.Flags.QR);
        q.getHeader().setRcode(Rcode.REFUSED);
        byte[] answer = q.toWire();
        out.writeShort(answer.length);
        out.write(answer);
        out.flush();
      }
    } catch (IOException e) {
      // I/O timeout, not DNS, or the client went away: closed
    }
  }

  /** Does the handshake and nothing else: for certificates the client must refuse. */
  private static void handshakeOnly(Socket socket) {
    try (SSLSocket s = (SSLSocket) socket) {
      s.setSoTimeout(5000);
      s.startHandshake();
      s.getInputStream().read();
    } catch (IOException e) {
      // the client refused the certificate, as it should
    }
  }

  /**
   * Answers every query twice: first with the ID one higher (what a confused or hostile server
   * might send), then with the query's own ID.
   */
  private static void answerForgedThenReal(Socket s) {
    try (s; java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
        java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream())) {
      while (true) {
        byte[] wire = new byte[in.readUnsignedShort()];
        in.readFully(wire);
        Message q = new Message(wire);
        Message r = new Message(q.getHeader().getID());
        r.getHeader().setFlag(org.xbill.DNS.Flags.QR);
        r.getHeader().setFlag(org.xbill.DNS.Flags.RD);
        r.getHeader().setFlag(org.xbill.DNS.Flags.RA);
        r.addRecord(q.getQuestion(), Section.QUESTION);
        r.addRecord(new ARecord(q.getQuestion().getName(), org.xbill.DNS.DClass.IN, 60,
            InetAddress.getByName("192.0.2.7")), Section.ANSWER);
        byte[] real = r.toWire();
        byte[] forged = real.clone();
        int other = (q.getHeader().getID() + 1) & 0xFFFF;
        forged[0] = (byte) (other >> 8);
        forged[1] = (byte) other;
        for (byte[] answer : new byte[][] {forged, real}) {
          out.writeShort(answer.length);
          out.write(answer);
        }
        out.flush();
      }
    } catch (IOException e) {
      // the client went away
    }
  }

  private static void daemon(Runnable r) {
    Thread t = new Thread(r, "dot-upstream-spec");
    t.setDaemon(true);
    t.start();
  }
}
