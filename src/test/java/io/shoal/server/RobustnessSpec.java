package io.shoal.server;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.Await;
import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Random;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** Bad input from clients and from upstreams: answered or dropped, never fatal. */
public class RobustnessSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    for (String n : new String[] {"ok", "after-garbage", "after-tcp-garbage", "same-connection", "spoofed", "failover", "recovers"}) {
      auth.add(new ARecord(TestAuthServer.name(n + ".example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.7")));
    }
    node = TestNode.start(auth.hostPort(), "shoal.caches.answers.max_entries = 1000");
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  private static int rcodeOf(byte[] reply) {
    return reply[3] & 0x0F;
  }

  private static byte[] header(int id, int flagsHi, int qd, int an, int ns, int ar) {
    return new byte[] {(byte) (id >> 8), (byte) id, (byte) flagsHi, 0, 0, (byte) qd, 0, (byte) an, 0, (byte) ns, 0, (byte) ar};
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] r = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }

  private static final byte[] QUESTION = {2, 'o', 'k', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};

  @Test
  public void answersOrDropsMalformedPacketsAndKeepsServing() throws Exception {
    InetSocketAddress udp = node.udp();
    Metrics metrics = node.metrics();
    double malformedBefore = metrics.value("shoal_dropped_total", "reason=\"malformed\"");

    // Headers cut short: nothing to answer with.
    for (int len = 0; len < 12; len++) {
      assertNull("a " + len + "-byte packet gets no reply", DnsClient.udp(udp, new byte[len], 300));
    }
    // QDCOUNT 0 and 2: FORMERR.
    byte[] qd0 = header(0x0101, 0x01, 0, 0, 0, 0);
    assertEquals(Rcode.FORMERR, rcodeOf(DnsClient.udp(udp, qd0, 2000)));
    byte[] qd2 = concat(header(0x0102, 0x01, 2, 0, 0, 0), concat(QUESTION, QUESTION));
    byte[] r2 = DnsClient.udp(udp, qd2, 2000);
    assertEquals(Rcode.FORMERR, rcodeOf(r2));
    assertEquals("FORMERR keeps the ID", 0x02, r2[1]);
    // A question name that points at itself: a compression loop.
    byte[] loop = concat(header(0x0103, 0x01, 1, 0, 0, 0), new byte[] {(byte) 0xC0, 12, 0, 1, 0, 1});
    assertEquals(Rcode.FORMERR, rcodeOf(DnsClient.udp(udp, loop, 2000)));
    // A question that runs past the end.
    byte[] cut = concat(header(0x0104, 0x01, 1, 0, 0, 0), new byte[] {7, 'e', 'x', 'a'});
    assertEquals(Rcode.FORMERR, rcodeOf(DnsClient.udp(udp, cut, 2000)));
    // A response (QR=1) is never answered: no reflection loops.
    assertNull(DnsClient.udp(udp, concat(header(0x0105, 0x81, 1, 0, 0, 0), QUESTION), 300));
    // NOTIFY (opcode 4): NOTIMP.
    assertEquals(Rcode.NOTIMP, rcodeOf(DnsClient.udp(udp, concat(header(0x0106, 4 << 3, 1, 0, 0, 0), QUESTION), 2000)));
    // Random bytes: answered with FORMERR or dropped, never a crash.
    Random random = new Random(42);
    try (DatagramSocket s = new DatagramSocket()) {
      for (int i = 0; i < 500; i++) {
        byte[] junk = new byte[random.nextInt(600)];
        random.nextBytes(junk);
        s.send(new java.net.DatagramPacket(junk, junk.length, udp));
      }
    }
    Message after = DnsClient.udp(udp, DnsClient.query(7, "after-garbage.example.test.", Type.A, null));
    assertEquals(Rcode.NOERROR, after.getRcode());
    assertEquals(1, after.getSection(org.xbill.DNS.Section.ANSWER).size());
    double malformed = metrics.await(v -> v >= malformedBefore + 12, "shoal_dropped_total", "reason=\"malformed\"");
    assertTrue("short packets are counted: " + malformed, malformed >= malformedBefore + 12);
  }

  @Test
  public void survivesGarbageOverTcp() throws Exception {
    Metrics metrics = node.metrics();
    double malformedBefore = metrics.value("shoal_dropped_total", "reason=\"malformed\"");
    // A frame shorter than a DNS header is a framing error: the connection is closed at once.
    try (Socket s = new Socket()) {
      s.connect(node.tcp(), 2000);
      s.setSoTimeout(3000);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeShort(5);
      out.write(new byte[] {1, 2, 3, 4, 5});
      out.flush();
      assertEquals("closed after the 5-byte frame", -1, s.getInputStream().read());
    }
    assertTrue(metrics.await(v -> v >= malformedBefore + 1, "shoal_dropped_total", "reason=\"malformed\"")
        >= malformedBefore + 1);
    // A whole header that asks nothing is a query shoal can answer: FORMERR, and the connection stays.
    try (Socket s = new Socket()) {
      s.connect(node.tcp(), 2000);
      s.setSoTimeout(3000);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      byte[] qd0 = header(0x0201, 0x01, 0, 0, 0, 0);
      out.writeShort(qd0.length);
      out.write(qd0);
      out.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      byte[] reply = in.readNBytes(in.readUnsignedShort());
      assertEquals("a header without a question", Rcode.FORMERR, rcodeOf(reply));
      byte[] q = DnsClient.query(9, "same-connection.example.test.", Type.A, null).toWire();
      out.writeShort(q.length);
      out.write(q);
      out.flush();
      assertEquals(Rcode.NOERROR, rcodeOf(in.readNBytes(in.readUnsignedShort())));
    }
    Message after = DnsClient.tcp(node.tcp(), DnsClient.query(8, "after-tcp-garbage.example.test.", Type.A, null));
    assertEquals(Rcode.NOERROR, after.getRcode());
  }

  @Test
  public void dropsAndCountsQueriesBeyondWhatAWorkerMayHold() throws Exception {
    try (TestAuthServer slow = new TestAuthServer()) {
      slow.delay(300);
      try (TestNode small = TestNode.start(slow.hostPort(), String.join("\n",
          "shoal.ingress.workers = 1",
          "shoal.ingress.max_pending = 2",
          "shoal.upstreams.default.timeout = 5s",
          "shoal.caches.small-cache = ${shoal.caches.answers}",
          "shoal.profiles.default.cache = small-cache"));
          DatagramSocket s = new DatagramSocket()) {
        Metrics metrics = small.metrics();
        double before = metrics.value("shoal_dropped_total", "reason=\"overload\"");
        double nxBefore = Metrics.value(metrics.settled(), "shoal_queries_total", "rcode=\"NXDOMAIN\"");
        for (int i = 0; i < 10; i++) {
          byte[] q = DnsClient.query(100 + i, "n" + i + ".example.test.", Type.A, null).toWire();
          s.send(new java.net.DatagramPacket(q, q.length, small.udp()));
        }
        double dropped = metrics.await(v -> v >= before + 8, "shoal_dropped_total", "reason=\"overload\"");
        assertEquals("2 held, 8 dropped", before + 8, dropped, 0.0);
        slow.delay(0);
        // The two held queries are answered (NXDOMAIN) once the upstream is quick again.
        assertTrue("the held queries were answered", Await.until(Duration.ofSeconds(10),
            () -> metrics.value("shoal_queries_total", "rcode=\"NXDOMAIN\"") >= nxBefore + 2));
        Message later = DnsClient.udp(small.udp(), DnsClient.query(120, "n0.example.test.", Type.A, null));
        assertEquals("still serving after the burst", Rcode.NXDOMAIN, later.getRcode());
      }
    }
  }

  @Test
  public void ignoresSpoofedUpstreamResponses() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"upstream_mismatch\"");
    auth.spoofFirst(true);
    try {
      Message m = DnsClient.udp(node.udp(), DnsClient.query(9, "spoofed.example.test.", Type.A, null));
      assertEquals(Rcode.NOERROR, m.getRcode());
      assertEquals("192.0.2.7",
          ((ARecord) m.getSection(org.xbill.DNS.Section.ANSWER).get(0)).getAddress().getHostAddress());
    } finally {
      auth.spoofFirst(false);
    }
    double after = metrics.await(v -> v >= before + 2, "shoal_dropped_total", "reason=\"upstream_mismatch\"");
    assertEquals("wrong ID and wrong question both counted", before + 2, after, 0.0);
  }

  @Test
  public void triesTheNextUpstreamOnTimeoutAndServfailsWhenAllFail() throws Exception {
    try (TestAuthServer dead = new TestAuthServer()) {
      dead.silent(true);
      try (TestNode twoUpstreams = TestNode.start(dead.hostPort(), String.join("\n",
          "shoal.upstreams.default.servers = [\"" + dead.hostPort() + "\", \"" + auth.hostPort() + "\"]",
          "shoal.caches.failover-cache = ${shoal.caches.answers}",
          "shoal.profiles.default.cache = failover-cache"))) {
        Message m = DnsClient.udp(twoUpstreams.udp(), DnsClient.query(10, "failover.example.test.", Type.A, null));
        assertEquals(Rcode.NOERROR, m.getRcode());
        assertEquals(1, dead.queries("failover.example.test.", Type.A));
        assertEquals(1, auth.queries("failover.example.test.", Type.A));
      }
      try (TestNode onlyDead = TestNode.start(dead.hostPort(), String.join("\n",
          "shoal.caches.dead-cache = ${shoal.caches.answers}",
          "shoal.profiles.default.cache = dead-cache"))) {
        Message m = DnsClient.udp(onlyDead.udp(), DnsClient.query(11, "recovers.example.test.", Type.A, null));
        assertEquals(Rcode.SERVFAIL, m.getRcode());
        assertEquals(11, m.getHeader().getID());
        dead.silent(false);
        dead.add(new ARecord(TestAuthServer.name("recovers.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.8")));
        Message again = DnsClient.udp(onlyDead.udp(), DnsClient.query(12, "recovers.example.test.", Type.A, null));
        assertNotNull(again);
        assertEquals("a failed lookup is not cached", Rcode.NOERROR, again.getRcode());
      }
    }
  }
}
