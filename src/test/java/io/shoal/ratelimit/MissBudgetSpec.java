package io.shoal.ratelimit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import java.net.InetAddress;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/** A client over its miss budget: its misses get SERVFAIL at once and never go upstream; its hits are answered. */
public class MissBudgetSpec extends JUnitSuite {
  private static final int BUDGET = 5;
  private static final int FLOOD = 60;

  @Test
  public void missesOverTheClientBudgetAreServfailedAndHitsStillAnswered() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.addA("cached.example.test.");
      TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.miss_budget { per_client = " + BUDGET + ", include_loopback = on }"));
      try {
        int id = 1;
        assertEquals(Rcode.NOERROR,
            DnsClient.udp(node.udp(), DnsClient.query(id++, "cached.example.test.", Type.A, 1232)).getRcode());
        Metrics metrics = node.metrics();
        double before = metrics.value("shoal_miss_budget_exceeded_total", "budget=\"client\"");
        long start = System.nanoTime();
        int servfails = 0;
        int withReason = 0;
        for (int i = 0; i < FLOOD; i++) {
          Message m = DnsClient.udp(node.udp(), DnsClient.query(id++, "flood" + i + ".example.test.", Type.A, 1232));
          if (m.getRcode() == Rcode.SERVFAIL) {
            servfails++;
            for (EDNSOption o : m.getOPT().getOptions()) {
              if (o instanceof ExtendedErrorCodeOption e && e.getText().contains("miss budget")) {
                withReason++;
              }
            }
          }
        }
        // Each second (or part of one) the flood spanned let at most BUDGET misses through.
        long seconds = (System.nanoTime() - start) / 1_000_000_000L + 2;
        int upstream = 0;
        for (int i = 0; i < FLOOD; i++) {
          upstream += auth.queries("flood" + i + ".example.test.", Type.A);
        }
        assertTrue(upstream + " misses went upstream in " + seconds + " s", upstream <= BUDGET * seconds);
        assertEquals(FLOOD - upstream, servfails);
        assertEquals(servfails, withReason);
        // Hits are never counted against a budget.
        assertEquals(Rcode.NOERROR,
            DnsClient.udp(node.udp(), DnsClient.query(id++, "cached.example.test.", Type.A, 1232)).getRcode());
        assertEquals(1, auth.queries("cached.example.test.", Type.A));
        double over = servfails;
        metrics.await(v -> v >= before + over, "shoal_miss_budget_exceeded_total", "budget=\"client\"");
      } finally {
        node.close();
      }
    }
  }

  @Test
  public void aMissOverItsBudgetGetsTheStaleAnswerWhenTheCacheHasOne() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      int names = 10;
      for (int i = 0; i < names; i++) {
        auth.add(new ARecord(TestAuthServer.name("old" + i + ".example.test."), DClass.IN, 60,
            InetAddress.getByName("192.0.2.1")));
      }
      TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.miss_budget { per_client = 1, include_loopback = on }",
          "shoal.serve_stale.max_stale = 10m"));
      try {
        int id = 1;
        for (int i = 0; i < names; i++) {
          // One miss a second: each fill waits for the budget's next second (at most 100 tries).
          for (int t = 0; t < 100; t++, id = (id + 1) & 0xFFFF) {
            if (DnsClient.udp(node.udp(), DnsClient.query(id, "old" + i + ".example.test.", Type.A, 1232)).getRcode()
                == Rcode.NOERROR) {
              break;
            }
            Thread.sleep(50);
          }
          assertEquals(1, auth.queries("old" + i + ".example.test.", Type.A));
        }
        node.advanceSeconds(61);
        // Spend the second's budget, then ask an expired name in the same second. The budget's
        // second can turn between the two: then the expired name was a miss within budget, asked
        // upstream; the next name tries again.
        boolean staleServed = false;
        for (int i = 0; i < names && !staleServed; i++) {
          Message flood;
          int f = 0;
          do {
            id = (id + 1) & 0xFFFF;
            flood = DnsClient.udp(node.udp(), DnsClient.query(id, "spend" + i + "-" + f + ".example.test.", Type.A, 1232));
          } while (flood.getRcode() != Rcode.SERVFAIL && ++f < 50);
          id = (id + 1) & 0xFFFF;
          Message old = DnsClient.udp(node.udp(), DnsClient.query(id, "old" + i + ".example.test.", Type.A, 1232));
          if (auth.queries("old" + i + ".example.test.", Type.A) == 1) {
            assertEquals(Rcode.NOERROR, old.getRcode());
            assertTrue("answered stale: " + old, old.getSection(Section.ANSWER).size() == 1
                && old.getSection(Section.ANSWER).get(0).getTTL() <= 30);
            int code = -1;
            for (EDNSOption o : old.getOPT().getOptions()) {
              if (o instanceof ExtendedErrorCodeOption e) {
                code = e.getErrorCode();
              }
            }
            assertEquals("EDE 3, Stale Answer", 3, code);
            staleServed = true;
          }
        }
        assertTrue("an expired name over the budget was answered stale without asking upstream", staleServed);
      } finally {
        node.close();
      }
    }
  }
}
