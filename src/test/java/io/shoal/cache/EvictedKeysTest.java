package io.shoal.cache;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shoal.wire.CacheKey;
import org.junit.jupiter.api.Test;

class EvictedKeysTest {
  private static CacheKey key(String name) {
    return CacheKey.of(name, 1, 1, 0);
  }

  @Test
  void aKeyEvictedLatelyIsKnownAndAStrangerAlmostNever() {
    EvictedKeys e = new EvictedKeys();
    for (int i = 0; i < 1000; i++) {
      e.add(key("h" + i + ".example."));
    }
    for (int i = 0; i < 1000; i++) {
      assertTrue(e.contains(key("h" + i + ".example.")));
    }
    int strangers = 0;
    for (int i = 0; i < 100_000; i++) {
      if (e.contains(key("r" + i + ".victim.example."))) {
        strangers++;
      }
    }
    assertTrue(strangers < 100, strangers + " false hits in 100,000");
  }

  @Test
  void keysAreForgottenTwoFiltersLater() {
    EvictedKeys e = new EvictedKeys();
    e.add(key("old.example."));
    for (int i = 0; i < EvictedKeys.PER_FILTER; i++) {
      e.add(key("f" + i + ".example."));
    }
    assertTrue(e.contains(key("old.example.")), "still in the filter before");
    for (int i = 0; i < EvictedKeys.PER_FILTER; i++) {
      e.add(key("g" + i + ".example."));
    }
    assertFalse(e.contains(key("old.example.")));
  }
}
