package io.shoal.ratelimit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/** rate_limit end to end: a burst from one client prefix is cut to its share, with slips and counts. */
public class RateLimitSpec extends JUnitSuite {

  @Test
  public void aBurstFromOnePrefixGetsItsShareSomeTruncatedAndTheRestDropped() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.addA("ok.example.test.");
      try (TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
              "shoal.rate_limit.responses_per_second = 5",
              "shoal.rate_limit.slip = 2",
              "shoal.rate_limit.include_loopback = on"));
          DatagramSocket s = new DatagramSocket()) {
        Metrics metrics = node.metrics();
        double droppedBefore = metrics.value("shoal_dropped_total", "reason=\"rate_limited\"");
        // Warm the cache (over TCP, which is never limited) so the burst is answered at once. The
        // limiter's seconds run on the monotonic clock, so no wall-clock second is waited for.
        DnsClient.tcp(node.tcp(), DnsClient.query(1, "ok.example.test.", Type.A, null));
        int n = 40;
        for (int i = 0; i < n; i++) {
          byte[] q = DnsClient.query(100 + i, "ok.example.test.", Type.A, 1232).toWire();
          s.send(new DatagramPacket(q, q.length, node.udp()));
        }
        s.setSoTimeout(700);
        int whole = 0;
        int truncated = 0;
        byte[] buf = new byte[4096];
        for (int i = 0; i < n; i++) {
          DatagramPacket p = new DatagramPacket(buf, buf.length);
          try {
            s.receive(p);
          } catch (SocketTimeoutException e) {
            break;
          }
          Message m = new Message(Arrays.copyOf(buf, p.getLength()));
          assertEquals(Rcode.NOERROR, m.getRcode());
          if (m.getHeader().getFlag(Flags.TC)) {
            truncated++;
            assertTrue("a slipped reply keeps OPT for an EDNS query", m.getOPT() != null);
          } else {
            whole++;
          }
        }
        // The burst may straddle one second boundary: at most two shares.
        assertTrue("whole answers: " + whole, whole >= 5 && whole <= 10);
        assertTrue("truncated answers: " + truncated, truncated >= 10);
        assertTrue("some replies are dropped", whole + truncated < n);
        double expectDropped = droppedBefore + n - whole - truncated;
        double dropped = metrics.await(v -> v >= expectDropped, "shoal_dropped_total", "reason=\"rate_limited\"");
        assertEquals(expectDropped, dropped, 0.0);
        int slips = truncated;
        assertTrue(metrics.await(v -> v >= slips, "shoal_rate_limit_slipped_total") >= slips);
        // TCP is never limited: the client the slips sent there gets its answer.
        Message overTcp = DnsClient.tcp(node.tcp(), DnsClient.query(2, "ok.example.test.", Type.A, null));
        assertEquals(1, overTcp.getSection(org.xbill.DNS.Section.ANSWER).size());
      }
    }
  }
}
