package io.shoal.access;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** access_control end to end: clients on different loopback addresses are answered, refused, dropped. */
public class AccessControlSpec extends JUnitSuite {
  private static TestAuthServer auth;
  private static TestNode node;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    auth.addA("ok.example.test.");
    node = TestNode.start(auth.hostPort(), String.join("\n",
        "shoal.listen.udp = \"0.0.0.0:0\"",
        "shoal.listen.tcp = \"0.0.0.0:0\"",
        "shoal.access_control = [\"127.0.0.0/8 allow\", \"127.0.0.2/32 refuse\", \"127.0.0.3 deny\"]"));
  }

  @AfterClass
  public static void stop() throws Exception {
    node.close();
    auth.close();
  }

  /** The reply to a UDP query sent from {@code source}, or null after 700 ms. */
  private static byte[] udpFrom(String source, int id) throws Exception {
    return udpFrom(source, id, "ok.example.test.");
  }

  private static byte[] udpFrom(String source, int id, String name) throws Exception {
    byte[] q = DnsClient.query(id, name, Type.A, null).toWire();
    return DnsClient.udpFrom(new InetSocketAddress(source, 0),
        new InetSocketAddress("127.0.0.1", node.udp().getPort()), q, 700);
  }

  private static Message tcpFrom(String source, int id) throws Exception {
    byte[] q = DnsClient.query(id, "ok.example.test.", Type.A, null).toWire();
    try (Socket s = new Socket()) {
      s.bind(new InetSocketAddress(source, 0));
      s.connect(new InetSocketAddress("127.0.0.1", node.tcp().getPort()), 2000);
      s.setSoTimeout(3000);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeShort(q.length);
      out.write(q);
      out.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      return new Message(in.readNBytes(in.readUnsignedShort()));
    }
  }

  @Test
  public void allowedNetworksAreAnswered() throws Exception {
    Message m = new Message(udpFrom("127.0.0.1", 1));
    assertEquals(Rcode.NOERROR, m.getRcode());
    assertEquals(1, m.getSection(org.xbill.DNS.Section.ANSWER).size());
    assertEquals(Rcode.NOERROR, tcpFrom("127.0.0.1", 2).getRcode());
  }

  @Test
  public void refusedNetworksGetRefusedOverUdpAndTcpAndAreCounted() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_refused_total", "reason=\"access_control\"");
    Message udp = new Message(udpFrom("127.0.0.2", 3, "refused.example.test."));
    assertEquals(Rcode.REFUSED, udp.getRcode());
    assertEquals(3, udp.getHeader().getID());
    assertEquals("refused.example.test.", udp.getQuestion().getName().toString());
    assertEquals(Rcode.REFUSED, tcpFrom("127.0.0.2", 4).getRcode());
    assertEquals(before + 2, metrics.await(v -> v >= before + 2, "shoal_refused_total", "reason=\"access_control\""), 0.0);
    assertEquals("nothing is asked upstream for a refused client", 0, auth.queries("refused.example.test.", Type.A));
  }

  @Test
  public void deniedNetworksGetNothingAndAreCounted() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"access_denied\"");
    assertNull(udpFrom("127.0.0.3", 5));
    assertEquals(before + 1, metrics.await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"access_denied\""), 0.0);
  }

  @Test
  public void aDeniedClientsTcpConnectionIsClosedBeforeAnythingIsRead() throws Exception {
    Metrics metrics = node.metrics();
    double before = metrics.value("shoal_dropped_total", "reason=\"access_denied\"");
    try (Socket s = new Socket()) {
      s.bind(new InetSocketAddress("127.0.0.3", 0));
      s.connect(new InetSocketAddress("127.0.0.1", node.tcp().getPort()), 2000);
      // The client sends nothing: the close comes from the accept, not from a query or a deadline.
      s.setSoTimeout(5000);
      try {
        assertEquals("EOF", -1, s.getInputStream().read());
      } catch (SocketException reset) {
        // closed as well
      }
    }
    assertEquals(before + 1, metrics.await(v -> v >= before + 1, "shoal_dropped_total", "reason=\"access_denied\""), 0.0);
    assertEquals("the denied connection holds no slot", 0.0, metrics.await(v -> v == 0, "shoal_tcp_connections"), 0.0);
  }
}
