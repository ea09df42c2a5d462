package io.shoal.transport;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.config.RateLimitSettings;
import io.shoal.metrics.ServerMetrics;
import io.shoal.ratelimit.ResponseRateLimiter;
import io.shoal.testing.DnsClient;
import io.shoal.testing.LogRecorder;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
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

/** Several reuseport sockets on one address: every one serves hits and misses; failed sends are counted. */
public class UdpSocketsSpec extends JUnitSuite {
  private static final int SOCKETS = 4;
  /** Clients, each on a source port of its own; the kernel spreads them over the sockets by hash. */
  private static final int CLIENTS = 64;

  private static TestAuthServer auth;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    for (int i = 0; i < CLIENTS; i++) {
      auth.add(new ARecord(TestAuthServer.name("c" + i + ".example.test."), DClass.IN, 300,
          InetAddress.getByName("192.0.2." + (i + 1))));
    }
    node = TestNode.start(auth.hostPort(), "shoal.listen.udp_sockets = " + SOCKETS);
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  @Test
  public void everySocketAnswersAMissAndThenAHit() throws Exception {
    java.util.Map<String, Double> before = node.metrics().settled();
    for (int i = 0; i < CLIENTS; i++) {
      String name = "c" + i + ".example.test.";
      for (int round = 0; round < 2; round++) {
        // One client socket per question and round: a new source port each time.
        Message reply = DnsClient.udp(node.udp(), DnsClient.query(1000 + i, name, Type.A, null));
        assertEquals(name + " round " + round, Rcode.NOERROR, reply.getRcode());
        assertEquals(1000 + i, reply.getHeader().getID());
        assertEquals("192.0.2." + (i + 1),
            ((ARecord) reply.getSection(Section.ANSWER).get(0)).getAddress().getHostAddress());
      }
      assertEquals("the second ask is a hit", 1, auth.queries(name, Type.A));
    }
    java.util.Map<String, Double> after = node.metrics().settled();
    for (int s = 0; s < SOCKETS; s++) {
      String socket = "socket=\"" + s + "\"";
      double read = Metrics.value(after, "shoal_udp_received_total", socket)
          - Metrics.value(before, "shoal_udp_received_total", socket);
      // 128 queries from 128 source ports over 4 sockets: all four see some (p(miss) < 1e-15).
      assertTrue("socket " + s + " read " + read + " queries", read > 0);
    }
  }

  @Test
  public void aReplyTheKernelRefusesIsCountedNotLost() throws Exception {
    ServerMetrics serverMetrics = new ServerMetrics();
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"udp_send_failed\"");
    UdpTransport transport = UdpTransport.bind(new InetSocketAddress("127.0.0.1", 0), 1, 1, false, java.time.Duration.ZERO, serverMetrics,
        new ResponseRateLimiter(new RateLimitSettings(0, 0, false, 1024), serverMetrics));
    try {
      UdpSocket socket = transport.sockets().get(0);
      // Broadcast without SO_BROADCAST: sendto fails with EACCES, as a real send can fail.
      socket.send(DnsClient.query(1, "x.example.test.", Type.A, null).toWire(),
          new InetSocketAddress("255.255.255.255", 53));
      // Port 0 cannot be sent to either.
      socket.send(new byte[12], new InetSocketAddress("127.0.0.1", 0));
    } finally {
      transport.close();
    }
    assertEquals(before + 2, metrics.await(v -> v >= before + 2, "shoal_dropped_total",
        "reason=\"udp_send_failed\""), 0.0);
  }

  /**
   * The readers wait in the kernel for their next datagram, so a stop sends each one a wake-up:
   * without it the stop's unbind phase waited for its timeout (logged as timed out) and the
   * readers stopped only when their sockets were closed.
   */
  @Test
  public void aStopEndsEveryReaderWithoutWaitingOutTheUnbindPhase() throws Exception {
    TestNode stopping = TestNode.start(auth.hostPort(), "shoal.listen.udp_sockets = " + SOCKETS
        + "\nshoal.shutdown.lameduck = 0s\nshoal.shutdown.grace = 1s");
    boolean closed = false;
    try (LogRecorder log = LogRecorder.start()) {
      Message reply = DnsClient.udp(stopping.udp(), DnsClient.query(7, "c0.example.test.", Type.A, null));
      assertEquals(Rcode.NOERROR, reply.getRcode());
      stopping.close();
      closed = true;
      assertEquals("no shutdown phase timed out", List.of(), log.mentioning("timed out"));
    } finally {
      if (!closed) {
        stopping.close();
      }
    }
  }
}
