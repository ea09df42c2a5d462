package io.shoal.server;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.shoal.testing.DnsClient;
import io.shoal.testing.TestAuthServer;
import io.shoal.testing.TestNode;
import java.net.InetAddress;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.scalatestplus.junit.JUnitSuite;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Type;

/** max_entries holds under both when_full rules, seen through what goes upstream and the metrics. */
public class EvictionSpec extends JUnitSuite {
  private static TestAuthServer auth;

  @BeforeClass
  public static void start() throws Exception {
    auth = new TestAuthServer();
    for (int i = 1; i <= 4; i++) {
      auth.add(new ARecord(TestAuthServer.name("e" + i + ".example.test."), DClass.IN, 100L * i,
          InetAddress.getByName("192.0.2." + i)));
    }
    for (int i = 1; i <= 8; i++) {
      auth.add(new ARecord(TestAuthServer.name("s" + i + ".example.test."), DClass.IN, 60,
          InetAddress.getByName("192.0.2." + (10 + i))));
    }
  }

  @AfterClass
  public static void stop() {
    auth.close();
  }

  private static String cacheConfig(String name, String whenFull) {
    return String.join("\n",
        "shoal.caches." + name + " = ${shoal.caches.answers}",
        "shoal.caches." + name + ".max_entries = 3",
        "shoal.caches." + name + ".when_full = " + whenFull,
        "shoal.profiles.default.cache = " + name);
  }

  @Test
  public void evictOneRemovesTheEntryThatExpiresSoonest() throws Exception {
    try (TestNode node = TestNode.start(auth.hostPort(), cacheConfig("evict-one-cache", "evict_one"))) {
      for (int i = 1; i <= 4; i++) {
        DnsClient.udp(node.udp(), DnsClient.query(i, "e" + i + ".example.test.", Type.A, null));
      }
      // e1 (TTL 100) expired soonest, so the fourth fill evicted it; e2..e4 are still hits.
      for (int i = 2; i <= 4; i++) {
        DnsClient.udp(node.udp(), DnsClient.query(10 + i, "e" + i + ".example.test.", Type.A, null));
        assertEquals("e" + i + " stayed cached", 1, auth.queries("e" + i + ".example.test.", Type.A));
      }
      DnsClient.udp(node.udp(), DnsClient.query(20, "e1.example.test.", Type.A, null));
      assertEquals("e1 was evicted", 2, auth.queries("e1.example.test.", Type.A));
      double entries = node.metrics().await(v -> v == 3.0, "shoal_cache_entries", "cache=\"evict-one-cache\"");
      assertEquals(3.0, entries, 0.0);
      double evictions = node.metrics().await(v -> v >= 2.0, "shoal_cache_eviction_seconds_count",
          "cache=\"evict-one-cache\"");
      assertEquals("two fills past the cap, two evictions", 2.0, evictions, 0.0);
    }
  }

  @Test
  public void sampleKeepsTheCapUnderChurn() throws Exception {
    try (TestNode node = TestNode.start(auth.hostPort(), cacheConfig("sample-cache", "sample"))) {
      for (int i = 1; i <= 8; i++) {
        DnsClient.udp(node.udp(), DnsClient.query(i, "s" + i + ".example.test.", Type.A, null));
      }
      double entries = node.metrics().await(v -> v == 3.0, "shoal_cache_entries", "cache=\"sample-cache\"");
      assertEquals(3.0, entries, 0.0);
      int before = auth.totalQueries();
      for (int i = 1; i <= 8; i++) {
        DnsClient.udp(node.udp(), DnsClient.query(20 + i, "s" + i + ".example.test.", Type.A, null));
      }
      int refetched = auth.totalQueries() - before;
      assertTrue("at most 3 of 8 names can still be cached, so at least 5 refetches: " + refetched, refetched >= 5);
    }
  }
}
