package io.shoal.transport;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.config.RateLimitSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.DatagramChannel;
import java.util.Arrays;
import java.util.BitSet;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * The UDP readers with Linux's batch calls ({@code listen.udp_batch} above 1, the default) and
 * without them ({@code udp_batch = 1}): bursts answered whole over IPv4, IPv6 and an IPv6 wildcard
 * taking IPv4 clients, every reply to its asker with its ID; a closed node's port free at once.
 */
public class UdpBatchSpec extends JUnitSuite {
  private static final int NAMES = 32;
  /** Queries sent back to back from one socket: many batches of up to 16, and full ones. */
  private static final int BURST = 1000;

  private static TestAuthServer auth;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    for (int i = 0; i < NAMES; i++) {
      auth.add(new ARecord(TestAuthServer.name("b" + i + ".example.test."), DClass.IN, 300,
          InetAddress.getByName("192.0.2." + (i + 1))));
    }
  }

  @AfterClass
  public static void stop() throws Exception {
    auth.close();
  }

  @Test
  public void batchedReadersAnswerABurstWholeOverIpv4() throws Exception {
    assertNotNull("the batch calls load on this Linux host", LinuxDatagrams.get());
    burstAnswered("shoal.listen.udp_sockets = 2", "127.0.0.1");
  }

  @Test
  public void readersWithoutBatchCallsAnswerABurstWhole() throws Exception {
    burstAnswered("shoal.listen.udp_sockets = 2\nshoal.listen.udp_batch = 1", "127.0.0.1");
  }

  @Test
  public void batchedReadersAnswerOverIpv6() throws Exception {
    burstAnswered("shoal.listen.udp = \"[::1]:0\"\nshoal.listen.tcp = \"[::1]:0\"", "::1");
  }

  @Test
  public void anIpv6WildcardAnswersIpv4ClientsInBatches() throws Exception {
    burstAnswered("shoal.listen.udp = \"[::]:0\"\nshoal.listen.tcp = \"[::]:0\"", "127.0.0.1");
  }

  @Test
  public void readersThatWaitForFullerBatchesAnswerABurstWhole() throws Exception {
    burstAnswered("shoal.listen.udp_sockets = 2\nshoal.listen.udp_batch_wait = 2ms", "127.0.0.1");
  }

  @Test
  public void readersThatReadAtOnceAnswerABurstWhole() throws Exception {
    burstAnswered("shoal.listen.udp_sockets = 2\nshoal.listen.udp_batch_wait = 0", "127.0.0.1");
  }

  /**
   * listen.udp_batch_wait: queries that come 10 ms apart are read in a few batches by a reader that
   * waits 100 ms after a read that did not fill its batch, and one by one by a reader that does not
   * wait (shoal_udp_reads_total against shoal_udp_received_total); every one is answered.
   */
  @Test
  public void aWaitingReaderReadsSpacedQueriesInFewerReads() throws Exception {
    int queries = 20;
    double waiting = readsFor(queries, "100ms");
    double notWaiting = readsFor(queries, "0");
    assertTrue("with the wait, " + queries + " queries 10 ms apart in " + waiting + " reads", waiting <= queries / 2.0);
    assertTrue("without it, in " + notWaiting + " reads", notWaiting > queries / 2.0);
  }

  /** Reads the node's one socket took for {@code queries} hits sent 10 ms apart, all answered. */
  private static double readsFor(int queries, String wait) throws Exception {
    TestNode node = TestNode.start(auth.hostPort(),
        "shoal.listen.udp_sockets = 1\nshoal.listen.udp_batch_wait = " + wait);
    try {
      assertEquals(Rcode.NOERROR, DnsClient.udp(node.udp(), DnsClient.query(1, "b1.example.test.", Type.A, null)).getRcode());
      String socket = "socket=\"0\"";
      java.util.Map<String, Double> before = node.metrics().settled();
      BitSet answered = new BitSet(queries);
      try (DatagramSocket client = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
        client.setSoTimeout(2_000);
        for (int id = 0; id < queries; id++) {
          byte[] q = DnsClient.query(300 + id, "b1.example.test.", Type.A, null).toWire();
          client.send(new DatagramPacket(q, q.length, node.udp()));
          Thread.sleep(10); // the spacing under test, not a wait for a condition
        }
        byte[] buf = new byte[1500];
        for (int n = 0; n < queries; n++) {
          DatagramPacket p = new DatagramPacket(buf, buf.length);
          client.receive(p);
          Message reply = new Message(Arrays.copyOf(p.getData(), p.getLength()));
          assertEquals(Rcode.NOERROR, reply.getRcode());
          assertEquals("192.0.2.2", ((ARecord) reply.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
          answered.set(reply.getHeader().getID() - 300);
        }
      }
      assertEquals("answered with wait " + wait, queries, answered.cardinality());
      double received = io.shoal.testing.Metrics.value(before, "shoal_udp_received_total", socket) + queries;
      node.metrics().await(v -> v >= received, "shoal_udp_received_total", socket);
      java.util.Map<String, Double> after = node.metrics().settled();
      assertEquals("datagrams read", queries, delta(before, after, "shoal_udp_received_total", socket), 0.0);
      return delta(before, after, "shoal_udp_reads_total", socket);
    } finally {
      node.close();
    }
  }

  @Test
  public void aClosedNodesPortIsFreeAtOnce() throws Exception {
    TestNode node = TestNode.start(auth.hostPort(), "shoal.listen.udp_sockets = 2");
    InetSocketAddress port;
    try {
      port = node.udp();
      Message reply = DnsClient.udp(port, DnsClient.query(9, "b1.example.test.", Type.A, null));
      assertEquals(Rcode.NOERROR, reply.getRcode());
    } finally {
      node.close();
    }
    // The readers waited in recvmmsg when the node closed: the sockets are gone, not held by them.
    try (DatagramChannel again = DatagramChannel.open()) {
      again.bind(port);
      assertEquals(port.getPort(), ((InetSocketAddress) again.getLocalAddress()).getPort());
    }
  }

  /**
   * shoal_udp_queue_seconds: each datagram a batched reader takes is timed from the kernel's
   * receipt to the read, queries and responses apart (a stray response, here, as an owner's reply
   * would be in a cluster).
   */
  @Test
  public void batchedReadersTimeEachDatagramsWaitInTheQueue() throws Exception {
    TestNode node = TestNode.start(auth.hostPort(), "shoal.listen.udp_sockets = 1\nshoal.listen.udp_queue_time = on");
    try {
      Message warm = DnsClient.udp(node.udp(), DnsClient.query(1, "b1.example.test.", Type.A, null));
      assertEquals(Rcode.NOERROR, warm.getRcode());
      java.util.Map<String, Double> before = node.metrics().settled();
      int queries = 20;
      for (int id = 0; id < queries; id++) {
        Message reply = DnsClient.udp(node.udp(), DnsClient.query(100 + id, "b1.example.test.", Type.A, null));
        assertEquals(Rcode.NOERROR, reply.getRcode());
      }
      byte[] stray = DnsClient.query(7, "b1.example.test.", Type.A, null).toWire();
      stray[2] |= (byte) 0x80; // QR: a response, which the listener drops
      try (DatagramSocket s = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
        s.send(new DatagramPacket(stray, stray.length, node.udp()));
      }
      String dropped = "reason=\"response\"";
      double droppedBefore = io.shoal.testing.Metrics.value(before, "shoal_dropped_total", dropped);
      node.metrics().await(v -> v >= droppedBefore + 1, "shoal_dropped_total", dropped);
      java.util.Map<String, Double> after = node.metrics().settled();
      assertEquals("queries timed", queries, delta(before, after, "shoal_udp_queue_seconds_count", "datagram=\"query\""), 0.0);
      assertEquals("responses timed", 1, delta(before, after, "shoal_udp_queue_seconds_count", "datagram=\"response\""), 0.0);
      double waited = delta(before, after, "shoal_udp_queue_seconds_sum", "datagram=\"query\"");
      assertTrue("an idle reader takes a query within a second of its arrival: " + waited + " s for " + queries,
          waited >= 0 && waited < queries);
    } finally {
      node.close();
    }
  }

  /** Off by default: the kernel stamps nothing and no datagram is timed. */
  @Test
  public void queueTimesAreNotTakenUnlessAskedFor() throws Exception {
    TestNode node = TestNode.start(auth.hostPort(), "shoal.listen.udp_sockets = 1");
    try {
      for (int id = 0; id < 5; id++) {
        assertEquals(Rcode.NOERROR, DnsClient.udp(node.udp(), DnsClient.query(200 + id, "b1.example.test.", Type.A, null)).getRcode());
      }
      java.util.Map<String, Double> after = node.metrics().settled();
      double answered = io.shoal.testing.Metrics.value(after, "shoal_queries_total", "transport=\"udp\"");
      assertTrue("queries answered: " + answered, answered >= 5);
      assertEquals("queries timed", 0, io.shoal.testing.Metrics.value(after, "shoal_udp_queue_seconds_count", "datagram=\"query\""), 0.0);
    } finally {
      node.close();
    }
  }

  private static double delta(java.util.Map<String, Double> before, java.util.Map<String, Double> after, String name,
      String label) {
    return io.shoal.testing.Metrics.value(after, name, label) - io.shoal.testing.Metrics.value(before, name, label);
  }

  /**
   * A reader waiting in recvmmsg when its socket is closed without a stop first (no wake-up
   * datagram): closing the JDK channel alone would neither wake it nor free the port.
   */
  @Test
  public void closingAWaitingBatchedReaderEndsItAndFreesThePort() throws Exception {
    ServerMetrics metrics = new ServerMetrics();
    UdpTransport transport = UdpTransport.bind(new InetSocketAddress("127.0.0.1", 0), 1, 16, false, java.time.Duration.ZERO, metrics,
        new ResponseRateLimiter(new RateLimitSettings(0, 0, false, 1024), metrics));
    InetSocketAddress port = transport.localAddress();
    UdpSocket socket = transport.sockets().get(0);
    assertEquals("reads in batches", 16, socket.batch());
    // no datagram comes, so the reader never reaches the ingress: it only waits
    transport.serve(null);
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!readerWaiting() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertTrue("the reader waits in the kernel", readerWaiting());
    transport.close();
    assertTrue("the reader ended", socket.stopReading().toCompletableFuture().isDone());
    try (DatagramChannel again = DatagramChannel.open()) {
      again.bind(port);
    }
  }

  private static boolean readerWaiting() {
    return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().startsWith("shoal-udp-reader-")
        && t.getState() == Thread.State.RUNNABLE && java.util.Arrays.stream(t.getStackTrace())
            .anyMatch(f -> f.getMethodName().equals("readBatches")));
  }

  private static void assertNotNull(String what, Object o) {
    assertTrue(what, o != null);
  }

  /** A node with {@code hocon}, asked {@link #BURST} queries back to back from {@code clientAddress}. */
  private static void burstAnswered(String hocon, String clientAddress) throws Exception {
    TestNode node = TestNode.start(auth.hostPort(), hocon);
    try {
      InetSocketAddress server = new InetSocketAddress(InetAddress.getByName(clientAddress), node.udp().getPort());
      // the names are cached first, so the burst is all hits, answered by the reading threads
      for (int i = 0; i < NAMES; i++) {
        Message reply = DnsClient.udp(server, DnsClient.query(i, "b" + i + ".example.test.", Type.A, null));
        assertEquals(Rcode.NOERROR, reply.getRcode());
      }
      byte[][] queries = new byte[BURST][];
      for (int id = 0; id < BURST; id++) {
        queries[id] = DnsClient.query(id, "b" + (id % NAMES) + ".example.test.", Type.A, null).toWire();
      }
      BitSet answered = new BitSet(BURST);
      try (DatagramSocket client = new DatagramSocket(new InetSocketAddress(InetAddress.getByName(clientAddress), 0))) {
        client.setReceiveBufferSize(4 << 20);
        client.setSoTimeout(300);
        byte[] buf = new byte[1500];
        // a reply lost to a full buffer is asked again, at most 5 times over, until all are in
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (int pass = 0; pass < 6 && answered.cardinality() < BURST && System.nanoTime() < deadline; pass++) {
          for (int id = answered.nextClearBit(0); id < BURST; id = answered.nextClearBit(id + 1)) {
            client.send(new DatagramPacket(queries[id], queries[id].length, server));
          }
          for (int n = 0; n < 2 * BURST && answered.cardinality() < BURST; n++) {
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            try {
              client.receive(p);
            } catch (SocketTimeoutException e) {
              break;
            }
            assertEquals("replies come from the address asked", server, p.getSocketAddress());
            Message reply = new Message(Arrays.copyOf(p.getData(), p.getLength()));
            int id = reply.getHeader().getID();
            String name = "b" + (id % NAMES) + ".example.test.";
            assertEquals("answer to " + id, Rcode.NOERROR, reply.getRcode());
            assertEquals(name, reply.getQuestion().getName().toString());
            assertEquals("192.0.2." + (id % NAMES + 1),
                ((ARecord) reply.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
            answered.set(id);
          }
        }
      }
      assertEquals("queries of the burst answered", BURST, answered.cardinality());
    } finally {
      node.close();
    }
  }
}
