package io.shoal.ratelimit;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.EDNSOption;
import org.xbill.DNS.ExtendedErrorCodeOption;
import org.xbill.DNS.Message;
import org.xbill.DNS.Rcode;
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
}
