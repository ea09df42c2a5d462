package io.shoal.transport;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;

import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.io.DataOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** listen.udp binds exactly the address family it names. */
public class ListenFamilySpec extends JUnitSuite {

  private static byte[] ask(InetAddress address, int port) throws Exception {
    return DnsClient.udp(new InetSocketAddress(address, port),
        DnsClient.query(1, "ok.example.test.", Type.A, null).toWire(), 1000);
  }

  @Test
  public void anIpv4WildcardServesIpv4OnlyAndTheIpv6WildcardBoth() throws Exception {
    InetAddress v4 = InetAddress.getByName("127.0.0.1");
    InetAddress v6 = InetAddress.getByName("::1");
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.addA("ok.example.test.");
      try (TestNode node = TestNode.start(auth.hostPort(), "shoal.listen.udp = \"0.0.0.0:0\"")) {
        int port = node.udp().getPort();
        assertEquals(Rcode.NOERROR, new Message(ask(v4, port)).getRcode());
        assertNull("0.0.0.0 does not listen on ::1", ask(v6, port));
      }
      try (TestNode node = TestNode.start(auth.hostPort(), "shoal.listen.tcp = \"0.0.0.0:0\"")) {
        int port = node.tcp().getPort();
        assertEquals(Rcode.NOERROR, DnsClient.tcp(new InetSocketAddress(v4, port),
            DnsClient.query(2, "ok.example.test.", Type.A, null)).getRcode());
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress(v6, port), 1000);
          s.setSoTimeout(2000);
          byte[] q = DnsClient.query(3, "ok.example.test.", Type.A, null).toWire();
          DataOutputStream out = new DataOutputStream(s.getOutputStream());
          out.writeShort(q.length);
          out.write(q);
          out.flush();
          int first;
          try {
            first = s.getInputStream().read();
          } catch (SocketException reset) {
            first = -1;
          }
          assertEquals("an IPv6 client of an IPv4 TCP listener is closed unanswered", -1, first);
        } catch (SocketException refusedOrReset) {
          // also unanswered
        }
      }
      try (TestNode node = TestNode.start(auth.hostPort(), "shoal.listen.udp = \"[::]:0\"")) {
        int port = node.udp().getPort();
        assertNotNull(ask(v6, port));
        assertNotNull(ask(v4, port));
      }
    }
  }
}
