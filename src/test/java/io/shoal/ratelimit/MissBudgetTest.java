package io.shoal.ratelimit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.shoal.config.MissBudgetSettings;
import io.shoal.wire.CacheKey;
import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class MissBudgetTest {
  private final AtomicLong nanos = new AtomicLong(5_000_000_000L);

  private MissBudget budget(int perClient, int perZone, boolean loopback) {
    return new MissBudget(new MissBudgetSettings(perClient, perZone, 24, 56, 2, loopback, 1024), nanos::get);
  }

  private static CacheKey key(String name) {
    return CacheKey.of(name, 1, 1, 0);
  }

  /** A miss of a name the cache did not evict lately. */
  private static String over(MissBudget b, CacheKey key, InetAddress client) {
    return b.overBudget(key, client, false);
  }

  private static InetAddress ip(String a) throws Exception {
    return InetAddress.getByName(a);
  }

  @Test
  void aClientPrefixGetsItsBudgetEachSecondAndOthersTheirOwn() throws Exception {
    MissBudget b = budget(3, 0, false);
    for (int i = 0; i < 3; i++) {
      assertNull(over(b, key("n" + i + ".example.com."), ip("192.0.2." + (10 + i))));
    }
    // The same /24: over.
    assertEquals(MissBudget.CLIENT, over(b, key("n9.example.com."), ip("192.0.2.200")));
    assertNull(over(b, key("n9.example.com."), ip("198.51.100.1")));
    nanos.addAndGet(1_000_000_000L);
    assertNull(over(b, key("n10.example.com."), ip("192.0.2.10")), "a new second, a new budget");
  }

  @Test
  void aZoneIsHeldToItsBudgetWhateverTheSourcesAndOtherZonesAreNot() throws Exception {
    MissBudget b = budget(0, 4, false);
    for (int i = 0; i < 4; i++) {
      assertNull(over(b, key("r" + i + ".victim.example."), ip("203.0.113." + i)));
    }
    // Over the budget: 198.51.100.0/24's slice (one a second) lets its first through, not its second.
    assertNull(over(b, key("deeper.r5.victim.example."), ip("198.51.100.7")));
    assertEquals(MissBudget.ZONE, over(b, key("deeper.r6.victim.example."), ip("198.51.100.7")));
    assertNull(over(b, key("www.other.example."), ip("198.51.100.7")));
  }

  @Test
  void aFloodedZoneStillTakesAFewMissesOfEachOtherClient() throws Exception {
    // per_zone 2048: a slice of 2 a second per client, at most 2048 sliced misses in all.
    MissBudget b = budget(0, 2048, false);
    int flooded = 0;
    for (int i = 0; i < 20_000; i++) {
      if (over(b, key("f" + i + ".victim.example."), ip("203.0." + (113 + i % 4) + ".1")) != null) {
        flooded++;
      }
    }
    // Four flooding clients: the budget, and two more misses each.
    assertEquals(20_000 - 2048 - 4 * 2, flooded);
    assertNull(over(b, key("legit1.victim.example."), ip("198.51.100.9")));
    assertNull(over(b, key("legit2.victim.example."), ip("198.51.100.9")));
    assertEquals(MissBudget.ZONE, over(b, key("legit3.victim.example."), ip("198.51.100.9")));
  }

  @Test
  void aFloodedZoneSplitsItsSlicesOverTheClientsThatAskedItTheSecondBefore() throws Exception {
    // per_zone 1000: a slice of 1 a client in the zone's first second over its budget (1000 / 1024).
    MissBudget b = budget(0, 1000, false);
    int[] legit = new int[2];
    int[] flood = new int[2];
    for (int second = 0; second < 2; second++) {
      for (int i = 0; i < 5_000; i++) {
        // ten flooding networks, taking turns
        if (over(b, key("f" + second + "-" + i + ".victim.example."), ip("203.0." + (100 + i % 10) + ".1")) == null) {
          flood[second]++;
        }
      }
      for (int i = 0; i < 100; i++) {
        if (over(b, key("legit" + second + "-" + i + ".victim.example."), ip("198.51.100.9")) == null) {
          legit[second]++;
        }
      }
      nanos.addAndGet(1_000_000_000L);
    }
    assertEquals(1000 + 10, flood[0], "the budget, then a slice of one each");
    assertEquals(1, legit[0]);
    // Eleven clients asked past the budget: a slice of 1000 / 11 = 90 each, the legitimate client's too.
    assertEquals(1000 + 10 * 90, flood[1]);
    assertEquals(90, legit[1], "the late client's fair share, though the flood came first");
  }

  @Test
  void slicesTakeAtMostTheBudgetAgainHoweverManySources() throws Exception {
    MissBudget b = budget(0, 1024, false);
    int through = 0;
    for (int i = 0; i < 10_000; i++) {
      // 10,000 sources, each a /24 of its own: every one's first miss fits its slice.
      String source = "10." + (i / 256) + "." + (i % 256) + ".1";
      if (over(b, key("s" + i + ".victim.example."), ip(source)) == null) {
        through++;
      }
    }
    assertEquals(2 * 1024, through);
  }

  @Test
  void aMissOverItsClientBudgetDoesNotSpendItsZones() throws Exception {
    MissBudget b = budget(2, 3, false);
    assertNull(over(b, key("a.victim.example."), ip("192.0.2.1")));
    assertNull(over(b, key("b.victim.example."), ip("192.0.2.1")));
    for (int i = 0; i < 10; i++) {
      assertEquals(MissBudget.CLIENT, over(b, key("c" + i + ".victim.example."), ip("192.0.2.1")));
    }
    assertNull(over(b, key("d.victim.example."), ip("198.51.100.1")), "the zone has one miss left");
    assertNull(over(b, key("e.victim.example."), ip("203.0.113.1")), "and then a slice for another client");
    assertEquals(MissBudget.ZONE, over(b, key("f.victim.example."), ip("203.0.113.1")));
  }

  @Test
  void loopbackIsExemptUnlessIncluded() throws Exception {
    MissBudget exempt = budget(1, 1, false);
    MissBudget counted = budget(1, 0, true);
    for (int i = 0; i < 5; i++) {
      assertNull(over(exempt, key("x" + i + ".example.com."), ip("127.0.0.1")));
    }
    assertNull(over(counted, key("y.example.com."), ip("127.0.0.1")));
    assertEquals(MissBudget.CLIENT, over(counted, key("z.example.com."), ip("127.0.0.1")));
  }

  @Test
  void aNameTheCacheEvictedLatelyGoesUpstreamUncounted() throws Exception {
    MissBudget b = budget(1, 1, false);
    assertNull(over(b, key("a.victim.example."), ip("192.0.2.1")));
    for (int i = 0; i < 10; i++) {
      assertNull(b.overBudget(key("honest.victim.example."), ip("192.0.2.1"), true));
    }
    assertEquals(MissBudget.CLIENT, over(b, key("b.victim.example."), ip("192.0.2.1")));
  }

  @Test
  void theZoneIsTheLastLabelsCaseInsensitive() {
    assertEquals(MissBudget.zoneHash(key("a1.Victim.Example."), 2), MissBudget.zoneHash(key("zz.b.victim.example."), 2));
    assertEquals(MissBudget.zoneHash(key("victim.example."), 2), MissBudget.zoneHash(key("a.victim.example."), 2));
    assertNotEquals(MissBudget.zoneHash(key("a.victim.example."), 2), MissBudget.zoneHash(key("a.other.example."), 2));
    assertNotEquals(MissBudget.zoneHash(key("a.b.victim.example."), 3), MissBudget.zoneHash(key("a.c.victim.example."), 3));
    assertEquals(MissBudget.zoneHash(key("example."), 2), MissBudget.zoneHash(key("example."), 2));
  }
}
