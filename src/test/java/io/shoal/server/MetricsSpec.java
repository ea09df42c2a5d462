package io.shoal.server;

import static org.junit.Assert.assertEquals;

import io.shoal.testing.DnsClient;
import io.shoal.testing.Metrics;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import java.util.Map;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Type;

/** The Prometheus endpoint after a known sequence of queries. */
public class MetricsSpec extends JUnitSuite {

  @Test
  public void countsQueriesHitsMissesFillsAndDrops() throws Exception {
    try (TestAuthServer auth = new TestAuthServer()) {
      auth.add(new ARecord(TestAuthServer.name("m.example.test."), DClass.IN, 60, InetAddress.getByName("192.0.2.9")));
      try (TestNode node = TestNode.start(auth.hostPort(), String.join("\n",
          "shoal.caches.metered = ${shoal.caches.answers}",
          "shoal.profiles.default.cache = metered"))) {
        Metrics metrics = node.metrics();
        Map<String, Double> before = metrics.settled();
        String cache = "cache=\"metered\"";

        // 1 miss + 2 hits over UDP, 1 hit over TCP, 1 NXDOMAIN miss, 1 dropped runt.
        DnsClient.udp(node.udp(), DnsClient.query(1, "m.example.test.", Type.A, null));
        DnsClient.udp(node.udp(), DnsClient.query(2, "m.example.test.", Type.A, null));
        DnsClient.udp(node.udp(), DnsClient.query(3, "M.example.test.", Type.A, null));
        DnsClient.tcp(node.tcp(), DnsClient.query(4, "m.example.test.", Type.A, null));
        DnsClient.udp(node.udp(), DnsClient.query(5, "nx.example.test.", Type.A, null));
        DnsClient.udp(node.udp(), new byte[] {1, 2, 3}, 200);

        double hits = metrics.await(v -> v >= Metrics.value(before, "shoal_cache_hits_total", cache) + 3,
            "shoal_cache_hits_total", cache);
        Map<String, Double> after = metrics.settled();
        assertEquals(3.0, hits - Metrics.value(before, "shoal_cache_hits_total", cache), 0.0);
        assertEquals(2.0, delta(before, after, "shoal_cache_misses_total", cache), 0.0);
        assertEquals(2.0, delta(before, after, "shoal_cache_fill_seconds_count", cache), 0.0);
        assertEquals(2.0, Metrics.value(after, "shoal_cache_entries", cache), 0.0);
        assertEquals(3.0, delta(before, after, "shoal_queries_total", "transport=\"udp\"", "rcode=\"NOERROR\""), 0.0);
        assertEquals(1.0, delta(before, after, "shoal_queries_total", "transport=\"udp\"", "rcode=\"NXDOMAIN\""), 0.0);
        assertEquals(1.0, delta(before, after, "shoal_queries_total", "transport=\"tcp\"", "rcode=\"NOERROR\""), 0.0);
        assertEquals(1.0, delta(before, after, "shoal_dropped_total", "reason=\"malformed\""), 0.0);
        String upstream = "upstream=\"" + auth.hostPort() + "\"";
        assertEquals(2.0, delta(before, after, "shoal_upstream_seconds_count", upstream, "outcome=\"ok\""), 0.0);
      }
    }
  }

  private static double delta(Map<String, Double> before, Map<String, Double> after, String name, String... labels) {
    return Metrics.value(after, name, labels) - Metrics.value(before, name, labels);
  }
}
