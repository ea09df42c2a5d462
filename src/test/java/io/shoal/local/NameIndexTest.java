package io.shoal.local;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.xbill.DNS.Name;

class NameIndexTest {
  private static byte[] wire(String name) {
    return Name.fromConstantString(name).toWire();
  }

  @Test
  void findsNamesInAnyLetterCaseAndOnlyWholeNames() {
    NameIndex.Builder b = new NameIndex.Builder();
    b.putIfAbsent(wire("Ads.Example.com."), 0, 7);
    b.putIfAbsent(wire("tracker.test."), 0, 9);
    NameIndex index = b.build();

    assertEquals(7, index.get(wire("ads.example.com."), 0));
    assertEquals(7, index.get(wire("ADS.EXAMPLE.COM."), 0));
    assertEquals(9, index.get(wire("tracker.test."), 0));
    assertEquals(-1, index.get(wire("example.com."), 0));
    assertEquals(-1, index.get(wire("ads.example.co."), 0));
    assertEquals(-1, index.get(wire("xads.example.com."), 0));
    assertEquals(2, index.size());
  }

  @Test
  void theFirstValueOfANameIsKept() {
    NameIndex.Builder b = new NameIndex.Builder();
    assertEquals(1, b.putIfAbsent(wire("a.test."), 0, 1));
    assertEquals(1, b.putIfAbsent(wire("A.TEST."), 0, 2));
    assertEquals(1, b.build().get(wire("a.test."), 0));
  }

  @Test
  void holdsManyNamesThroughGrowth() {
    NameIndex.Builder b = new NameIndex.Builder();
    for (int i = 0; i < 100_000; i++) {
      b.putIfAbsent(wire("host-" + i + ".example."), 0, i);
    }
    NameIndex index = b.build();
    assertEquals(100_000, index.size());
    for (int i = 0; i < 100_000; i += 997) {
      assertEquals(i, index.get(wire("host-" + i + ".example."), 0));
    }
    assertEquals(-1, index.get(wire("host-100000.example."), 0));
  }

  @Test
  void looksUpASuffixInsideAPacket() {
    byte[] name = wire("www.ads.example.com.");
    NameIndex.Builder b = new NameIndex.Builder();
    b.putIfAbsent(wire("example.com."), 0, 3);
    NameIndex index = b.build();
    assertEquals(-1, index.get(name, 0));
    assertEquals(-1, index.get(name, 4));
    assertEquals(3, index.get(name, 8));
  }
}
