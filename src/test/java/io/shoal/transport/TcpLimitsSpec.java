package io.shoal.transport;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** The TCP listener's limits as a client meets them: closed connections, answers, drop counts. */
public class TcpLimitsSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestNode node;
  private static final int BIG_RECORDS = 300;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("ok.example.test.");
    StringBuilder big = new StringBuilder("shoal.local.records = [");
    // 300 TXT records of 250 bytes each: about 78 KB, more than a TCP message can carry.
    for (int i = 0; i < BIG_RECORDS; i++) {
      big.append(i == 0 ? "" : ", ").append("\"big.example.test. TXT ")
          .append(String.format("%03d", i)).append("x".repeat(247)).append("\"");
    }
    big.append("]");
    node = TestNode.start(auth.hostPort(), String.join("\n",
        big.toString(),
        "shoal.listen.tcp_idle_timeout = 4s",
        "shoal.listen.tcp_max_connections = 4",
        "shoal.listen.tcp_max_queries = 3",
        "shoal.listen.tcp_backlog = 777"));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private static byte[] query(int id) {
    return DnsClient.query(id, "ok.example.test.", Type.A, null).toWire();
  }

  /** True when the server closed the connection (EOF or reset) within {@code timeoutMs}. */
  private static boolean closedWithin(Socket s, int timeoutMs) throws IOException {
    s.setSoTimeout(timeoutMs);
    InputStream in = s.getInputStream();
    try {
      while (in.read() >= 0) {
        // replies already owed may still come; the close follows them
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (SocketException e) {
      return true;
    }
  }

  @Test
  public void aQueryTrickledByteByByteIsCutOffAtTheDeadline() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"tcp_deadline\"");
    byte[] q = query(1);
    try (Socket s = new Socket()) {
      s.connect(node.tcp(), 2000);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeShort(q.length);
      long start = System.nanoTime();
      boolean closed = false;
      // One byte every 300 ms (a query of 33 bytes takes 10 s): each byte arrives well within the
      // 4 s deadline, the whole query never does.
      for (int i = 0; i < q.length && !closed; i++) {
        try {
          out.write(q[i]);
          out.flush();
        } catch (IOException e) {
          closed = true;
          break;
        }
        closed = closedWithin(s, 300);
      }
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertTrue("the connection was closed before the query completed", closed);
      assertTrue("closed after about 4 s, not " + ms + " ms", ms < 6500);
    }
    double after = metrics.await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"tcp_deadline\"");
    assertEquals(before + 1, after, 0.0);
  }

  @Test
  public void anAnswerTooLargeForTcpIsServfailNotAnEmptyNoerror() throws Exception {
    Message reply = DnsClient.tcp(node.tcp(), DnsClient.query(31, "big.example.test.", Type.TXT, null));
    assertEquals(31, reply.getHeader().getID());
    assertEquals(Rcode.SERVFAIL, reply.getRcode());
    assertTrue("no TC over TCP", !reply.getHeader().getFlag(org.xbill.DNS.Flags.TC));
    // A reply that fits is answered as usual.
    assertEquals(Rcode.NOERROR, DnsClient.tcp(node.tcp(), DnsClient.query(32, "ok.example.test.", Type.A, null))
        .getRcode());
  }

  @Test
  public void anIdleConnectionIsClosedQuietly() throws Exception {
    try (Socket s = new Socket()) {
      s.connect(node.tcp(), 2000);
      assertTrue(closedWithin(s, 7000));
    }
  }

  @Test
  public void aConnectionAnswersMaxQueriesThenCloses() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"tcp_query_limit\"");
    try (Socket s = new Socket()) {
      s.connect(node.tcp(), 2000);
      s.setSoTimeout(3000);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      for (int i = 0; i < 5; i++) {
        byte[] q = query(100 + i);
        out.writeShort(q.length);
        out.write(q);
      }
      out.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      for (int i = 0; i < 3; i++) {
        byte[] reply = in.readNBytes(in.readUnsignedShort());
        assertEquals(Rcode.NOERROR, new Message(reply).getRcode());
      }
      assertTrue("closed after 3 answers", closedWithin(s, 3000));
    }
    double after = metrics.await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"tcp_query_limit\"");
    assertEquals(before + 1, after, 0.0);
  }

  /**
   * Opens {@code n} connections and waits until the node counts them all open. It first waits for
   * the connections of earlier tests to be gone on the node's side too, so the count is of these.
   */
  private static List<Socket> hold(int n) throws Exception {
    awaitNoConnections();
    List<Socket> held = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Socket s = new Socket();
      s.connect(node.tcp(), 2000);
      held.add(s);
    }
    node.metrics().await(v -> v >= n, "shoal_tcp_connections");
    return held;
  }

  /** Waits for the connections of earlier tests to be gone on the node's side too. */
  private static void awaitNoConnections() throws Exception {
    assertEquals("connections of earlier tests closed", 0.0,
        node.metrics().await(v -> v == 0, "shoal_tcp_connections"), 0.0);
  }

  private static void closeAll(List<Socket> sockets) throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
  }

  @Test
  public void aNewConnectionAtTheCapTakesTheSlotOfTheLongestIdleOne() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"tcp_idle_evicted\"");
    List<Socket> held = hold(4);
    try {
      // The fifth client is served: the first held connection, idle the longest, made room.
      Message answer = DnsClient.tcp(node.tcp(), DnsClient.query(7, "ok.example.test.", Type.A, null));
      assertEquals(Rcode.NOERROR, answer.getRcode());
      assertTrue("the longest idle connection was closed", closedWithin(held.get(0), 3000));
      double after = metrics.await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"tcp_idle_evicted\"");
      assertTrue(after >= before + 1);
    } finally {
      closeAll(held);
    }
  }

  @Test
  public void connectionsOverTheCapAreClosedAtOnceWhenNoneIsIdle() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"tcp_connection_limit\"");
    int asked = auth.totalQueries();
    awaitNoConnections();
    // Each held connection waits for an answer the upstream delays: none of them is idle. Each
    // asks as soon as it is open, well within the node's deadline for a first query (a wait for
    // the node's connection count, published once a second, could outlast it on a busy host).
    auth.delay(4000);
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) {
        Socket s = new Socket();
        held.add(s);
        s.connect(node.tcp(), 2000);
        byte[] q = DnsClient.query(200 + i, "busy" + i + ".example.test.", Type.A, null).toWire();
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeShort(q.length);
        out.write(q);
        out.flush();
      }
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (auth.totalQueries() < asked + 4 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue("the upstream got the four queries", auth.totalQueries() >= asked + 4);
      try (Socket extra = new Socket()) {
        extra.connect(node.tcp(), 2000);
        assertTrue("the fifth connection is closed at once", closedWithin(extra, 3000));
      }
      double after = metrics.await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"tcp_connection_limit\"");
      assertTrue(after >= before + 1);
    } finally {
      auth.delay(0);
      closeAll(held);
    }
    // The slots are free again once the held connections are gone.
    metrics.await(v -> v == 0, "shoal_tcp_connections");
    Message answer = DnsClient.tcp(node.tcp(), DnsClient.query(7, "ok.example.test.", Type.A, null));
    assertEquals(Rcode.NOERROR, answer.getRcode());
  }

  @Test
  public void emptyAndHeaderlessMessagesCloseTheConnectionAtOnce() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"malformed\"");
    double deadlinesBefore = metrics.value("shoal_dropped_total", "reason=\"tcp_deadline\"");
    byte[][] frames = {{0, 0}, {0, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}};
    for (byte[] frame : frames) {
      try (Socket s = new Socket()) {
        s.connect(node.tcp(), 2000);
        s.getOutputStream().write(frame);
        s.getOutputStream().flush();
        assertTrue("closed after a " + (frame.length - 2) + "-byte message", closedWithin(s, 3000));
      }
    }
    double after = metrics.await(v -> v >= before + 2, "shoal_dropped_total", "reason=\"malformed\"");
    assertEquals(before + 2, after, 0.0);
    // Closed for the framing error, not by the deadline (which counts a message cut short).
    assertEquals(deadlinesBefore, metrics.value("shoal_dropped_total", "reason=\"tcp_deadline\""), 0.0);
  }

  @Test
  public void theListenBacklogIsTheConfiguredOne() throws Exception {
    // ss shows a listening socket's backlog in its Send-Q column.
    Process ss = new ProcessBuilder("ss", "-ltnH", "sport = :" + node.tcp().getPort()).redirectErrorStream(true).start();
    String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, ss.waitFor());
    String[] cols = out.trim().split("\\s+");
    assertEquals(out, "777", cols[2]);
  }
}
