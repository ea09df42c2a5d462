package io.shoal.querylog;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * The dnstap query log end to end: shoal's output read back with BIND's dnstap-read, written to a
 * file and to fstrm_capture on a Unix socket; an absent collector costs log lines, never answers.
 */
public class DnstapSpec extends JUnitSuite {
  private static final String WRITTEN = "shoal_querylog_written_total";
  private static final String DROPPED = "shoal_querylog_dropped_total";
  private static TestAuthServer auth;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    for (String n : List.of("file-udp", "file-tcp", "sock", "absent", "stuck", "early", "late", "stalled")) {
      auth.addA(n + ".example.test.");
    }
  }

  @AfterClass
  public static void stop() {
    auth.close();
  }

  /** A miss and then a hit for {@code name}, over UDP or TCP; both answered NOERROR with the ID asked. */
  private static void missThenHit(TestNode node, String name, boolean tcp, int id) throws Exception {
    for (int i = 0; i < 2; i++) {
      int qid = (id + i) & 0xFFFF;
      byte[] q = DnsClient.query(qid, name, Type.A, null).toWire();
      byte[] a = tcp ? DnsClient.tcp(node.tcp(), q, 3000) : DnsClient.udp(node.udp(), q, 3000);
      assertNotNull(name + " answered", a);
      Message m = new Message(a);
      assertEquals(qid, m.getHeader().getID());
      assertEquals(Rcode.NOERROR, m.getRcode());
    }
  }

  private static String dnstapRead(Path file) throws Exception {
    Process p = new ProcessBuilder("dnstap-read", "-y", file.toString()).redirectErrorStream(true).start();
    try {
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue("dnstap-read exits", p.waitFor(20, TimeUnit.SECONDS));
      assertEquals("dnstap-read " + file + ":\n" + out, 0, p.exitValue());
      return out;
    } finally {
      p.destroyForcibly();
    }
  }

  /** fstrm_capture listening on {@code socket} (once it is there), writing what it receives to {@code file}. */
  private static Process capture(Path socket, Path file) throws Exception {
    Process p = new ProcessBuilder("fstrm_capture", "-t", "protobuf:dnstap.Dnstap", "-u", socket.toString(),
        "-w", file.toString()).redirectErrorStream(true)
        .redirectOutput(socket.resolveSibling("fstrm_capture.log").toFile()).start();
    if (!Await.until(Duration.ofSeconds(10), () -> Files.exists(socket))) {
      stop(p);
      org.junit.Assert.fail("fstrm_capture did not listen on " + socket);
    }
    return p;
  }

  /** SIGTERM: fstrm_capture closes its file and exits. */
  private static void stop(Process capture) throws InterruptedException {
    capture.destroy();
    if (!capture.waitFor(10, TimeUnit.SECONDS)) {
      capture.destroyForcibly();
    }
  }

  /** dnstap-read's YAML of {@code file}, having checked it holds {@code n} client queries and as many responses. */
  private static String clientMessages(Path file, int n) throws Exception {
    String yaml = dnstapRead(file);
    assertEquals(yaml, n, count(yaml, "^  type: CLIENT_QUERY$"));
    assertEquals(yaml, n, count(yaml, "^  type: CLIENT_RESPONSE$"));
    return yaml;
  }

  private static int count(String text, String regex) {
    Matcher m = Pattern.compile(regex, Pattern.MULTILINE).matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  @Test
  public void aDnstapFileHoldsClientQueriesAndResponsesOverUdpAndTcpReadableByDnstapRead() throws Exception {
    org.junit.Assume.assumeTrue("dnstap-read (bind9-dnsutils) is not installed", onPath("dnstap-read"));
    Path dir = Files.createTempDirectory("shoal-dnstap");
    Path file = dir.resolve("shoal.dnstap");
    Logger queries = (Logger) LoggerFactory.getLogger("shoal.queries");
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    queries.addAppender(lines);
    try {
      TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.log.dnstap.file = \"" + file + "\"",
          "shoal.log.dnstap.forwarder = on",
          "shoal.log.dnstap.identity = shoal-test",
          "shoal.log.queries.enabled = on",
          "shoal.log.queries.sample = 1"));
      Metrics metrics = node.metrics();
      double written = metrics.value(WRITTEN, "log=\"dnstap\"");
      try {
        missThenHit(node, "file-udp.example.test.", false, 100);
        missThenHit(node, "file-tcp.example.test.", true, 200);
        // 4 queries, 4 responses, 2 forwarded exchanges
        assertTrue(metrics.await(v -> v >= written + 12, WRITTEN, "log=\"dnstap\"") >= written + 12);
      } finally {
        node.close();
      }
      String yaml = clientMessages(file, 4);
      assertEquals(yaml, 2, count(yaml, "^  type: FORWARDER_QUERY$"));
      assertEquals(yaml, 2, count(yaml, "^  type: FORWARDER_RESPONSE$"));
      assertTrue(yaml, count(yaml, "^  socket_protocol: TCP$") >= 4);
      assertTrue(yaml, count(yaml, "^  socket_protocol: UDP$") >= 4);
      assertTrue(yaml, yaml.contains("identity: shoal-test"));
      assertTrue(yaml, count(yaml, "file-udp\\.example\\.test\\.\\s+IN\\s+A") >= 4);
      assertTrue(yaml, count(yaml, "file-tcp\\.example\\.test\\.\\s+IN\\s+A") >= 4);
      assertTrue(yaml, yaml.contains("query_address: \"127.0.0.1\""));

      // The JSON lines: one per query (sample = 1), a miss then a hit for each name.
      List<String> json = lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
      assertEquals(json.toString(), 4, json.size());
      assertTrue(json.toString(), json.stream().anyMatch(l -> l.contains("\"name\":\"file-tcp.example.test.\"")
          && l.contains("\"transport\":\"tcp\"") && l.contains("\"cache\":\"miss\"") && l.contains("\"rcode\":\"NOERROR\"")));
      assertTrue(json.toString(), json.stream().anyMatch(l -> l.contains("\"name\":\"file-udp.example.test.\"")
          && l.contains("\"type\":\"A\"") && l.contains("\"cache\":\"hit\"") && l.contains("\"latency_ms\":")));
    } finally {
      queries.detachAppender(lines);
    }
  }

  @Test
  public void fstrmCaptureOnAUnixSocketGetsTheStream() throws Exception {
    org.junit.Assume.assumeTrue("fstrm_capture (fstrm-bin) is not installed", onPath("fstrm_capture"));
    org.junit.Assume.assumeTrue("dnstap-read (bind9-dnsutils) is not installed", onPath("dnstap-read"));
    Path dir = Files.createTempDirectory("shoal-fstrm");
    Path socket = dir.resolve("dnstap.sock");
    Path file = dir.resolve("captured.dnstap");
    Process capture = capture(socket, file);
    try {
      TestNode node = TestNode.start(auth.hostPort(), "shoal.log.dnstap.socket = \"" + socket + "\"");
      Metrics metrics = node.metrics();
      double written = metrics.value(WRITTEN, "log=\"dnstap\"");
      try {
        missThenHit(node, "sock.example.test.", false, 300);
        missThenHit(node, "sock.example.test.", true, 400);
        assertTrue(metrics.await(v -> v >= written + 8, WRITTEN, "log=\"dnstap\"") >= written + 8);
      } finally {
        // STOP, answered by fstrm_capture's FINISH
        node.close();
      }
    } finally {
      stop(capture);
    }
    String yaml = clientMessages(file, 4);
    assertEquals("forwarder is off by default", 0, count(yaml, "FORWARDER_"));
    assertTrue(yaml, count(yaml, "sock\\.example\\.test\\.\\s+IN\\s+A") >= 8);
  }

  @Test
  public void anAbsentCollectorCostsLogLinesNeverAnswers() throws Exception {
    Path socket = Files.createTempDirectory("shoal-nocollector").resolve("nobody.sock");
    TestNode node = TestNode.start(auth.hostPort(), "shoal.log.dnstap.socket = \"" + socket + "\"");
    try {
      Metrics metrics = node.metrics();
      double dropped = metrics.value(DROPPED, "log=\"dnstap\"");
      for (int i = 0; i < 5; i++) {
        missThenHit(node, "absent.example.test.", i % 2 == 1, 500 + 2 * i);
      }
      // 10 queries and 10 responses, none of them written
      assertTrue(metrics.await(v -> v >= dropped + 20, DROPPED, "log=\"dnstap\"") >= dropped + 20);
    } finally {
      node.close();
    }
  }

  @Test
  public void aCollectorThatNeverAnswersCostsLogLinesNeverAnswers() throws Exception {
    Path socket = Files.createTempDirectory("shoal-stuck").resolve("stuck.sock");
    // Accepts the connection and reads nothing: shoal's writer waits for an ACCEPT that never comes.
    try (java.nio.channels.ServerSocketChannel stuck =
             java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
      stuck.bind(java.net.UnixDomainSocketAddress.of(socket));
      TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.log.dnstap.socket = \"" + socket + "\"",
          "shoal.log.dnstap.queue = 16"));
      try (java.nio.channels.SocketChannel held = stuck.accept()) {
        Metrics metrics = node.metrics();
        double dropped = metrics.value(DROPPED, "log=\"dnstap\"");
        long started = System.nanoTime();
        for (int i = 0; i < 20; i++) {
          missThenHit(node, "stuck.example.test.", false, 700 + 2 * i);
        }
        assertTrue("40 queries answered while the writer is stuck",
            System.nanoTime() - started < TimeUnit.SECONDS.toNanos(10));
        // 80 events, at most 16 waiting in the queue (and one in the writer's hands)
        assertTrue(metrics.await(v -> v >= dropped + 60, DROPPED, "log=\"dnstap\"") >= dropped + 60);
      } finally {
        long closing = System.nanoTime();
        node.close();
        assertTrue("the shutdown does not wait on the collector for long",
            System.nanoTime() - closing < TimeUnit.SECONDS.toNanos(15));
      }
    }
  }

  @Test
  public void aCollectorThatStopsReadingAfterItsHandshakeIsLeftAndConnectedToAgain() throws Exception {
    Path socket = Files.createTempDirectory("shoal-stalled").resolve("stalled.sock");
    try (java.nio.channels.ServerSocketChannel collector =
             java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
      collector.bind(java.net.UnixDomainSocketAddress.of(socket));
      TestNode node = TestNode.start(auth.hostPort(), "shoal.log.dnstap.socket = \"" + socket + "\"");
      try (java.nio.channels.SocketChannel first = collector.accept()) {
        // The handshake, done right; then not another byte read.
        java.io.InputStream in = java.nio.channels.Channels.newInputStream(first);
        assertEquals(FrameStreams.READY, FrameStreams.readControl(in).type());
        first.write(java.nio.ByteBuffer.wrap(FrameStreams.control(FrameStreams.ACCEPT, FrameStreams.DNSTAP)));
        Metrics metrics = node.metrics();
        double dropped = metrics.value(DROPPED, "log=\"dnstap\"");
        collector.configureBlocking(false);
        java.nio.channels.SocketChannel second = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        // Hits until the writer's buffers and the socket's fill, the writer gives the collector up
        // and connects again: at most 60 s and 40,000 queries.
        for (int i = 0; i < 40_000 && second == null && System.nanoTime() < deadline; i++) {
          byte[] a = DnsClient.udp(node.udp(), DnsClient.query(i & 0xFFFF, "stalled.example.test.", Type.A, null)
              .toWire(), 3000);
          assertNotNull("answered while the collector is stalled", a);
          assertEquals(Rcode.NOERROR, new Message(a).getRcode());
          if (i % 100 == 0) {
            second = collector.accept();
          }
        }
        assertNotNull("the writer left the stalled collector and connected again", second);
        second.close();
        assertTrue(metrics.await(v -> v > dropped, DROPPED, "log=\"dnstap\"") > dropped);
      } finally {
        node.close();
      }
    }
  }

  @Test
  public void aDnstapFileThatCannotBeCreatedStopsTheStartNamingItsKey() throws Exception {
    Path missing = Files.createTempDirectory("shoal-nofile").resolve("no-such-dir").resolve("x.dnstap");
    try {
      TestNode.start(auth.hostPort(), "shoal.log.dnstap.file = \"" + missing + "\"").close();
      org.junit.Assert.fail("started with an unwritable dnstap file");
    } catch (RuntimeException e) {
      StringBuilder messages = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        messages.append(t.getMessage()).append('\n');
      }
      assertTrue(messages.toString(), messages.toString().contains("shoal.log.dnstap.file"));
    }
  }

  @Test
  public void aCollectorThatComesLateIsConnectedToAndGetsWhatFollows() throws Exception {
    org.junit.Assume.assumeTrue("fstrm_capture (fstrm-bin) is not installed", onPath("fstrm_capture"));
    org.junit.Assume.assumeTrue("dnstap-read (bind9-dnsutils) is not installed", onPath("dnstap-read"));
    Path dir = Files.createTempDirectory("shoal-late");
    Path socket = dir.resolve("late.sock");
    Path file = dir.resolve("late.dnstap");
    TestNode node = TestNode.start(auth.hostPort(), "shoal.log.dnstap.socket = \"" + socket + "\"");
    Process capture = null;
    try {
      Metrics metrics = node.metrics();
      double dropped = metrics.value(DROPPED, "log=\"dnstap\"");
      missThenHit(node, "early.example.test.", false, 900);
      assertTrue(metrics.await(v -> v >= dropped + 4, DROPPED, "log=\"dnstap\"") >= dropped + 4);
      capture = capture(socket, file);
      double written = metrics.value(WRITTEN, "log=\"dnstap\"");
      // Within the back-off (5 s at most) shoal connects; until then each probe's events are dropped.
      int[] id = {1000};
      double now = Await.value(Duration.ofSeconds(15), () -> {
        missThenHit(node, "late.example.test.", false, id[0]);
        id[0] += 2;
        return metrics.value(WRITTEN, "log=\"dnstap\"");
      }, v -> v >= written + 4);
      assertTrue("written after the collector came: " + now, now >= written + 4);
    } finally {
      node.close();
      if (capture != null) {
        stop(capture);
      }
    }
    String yaml = dnstapRead(file);
    assertTrue(yaml, count(yaml, "late\\.example\\.test\\.\\s+IN\\s+A") >= 2);
    assertEquals("nothing from before the collector came", 0, count(yaml, "early\\.example"));
  }
}
